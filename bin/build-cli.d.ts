// The types of build-cli.js, for the tests that call it.
export declare const SOURCE_DIRS: readonly string[];
export declare const BUILDS_DIR: string;
export declare function freshBuild(root: string): Promise<{ dir: string; built: boolean }>;
export declare function sourceHash(root: string): string;
