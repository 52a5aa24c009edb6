/** Later tags `replace` an untagged module, which `go install` refuses; v1.5.1 is the newest that builds. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
export const TEMPORAL_CLI_MODULE = 'github.com/temporalio/cli/cmd/temporal';
