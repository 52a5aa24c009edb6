/** What a msgflow Worker registers for metrics: the workflow interceptor module (by path) and the activity one. */
import { fileURLToPath } from 'node:url';

const sourceExtension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';

/** For `bundleWorkflowCode({ workflowInterceptorModules })` and `WorkerOptions.interceptors.workflowModules`. */
export const WORKFLOW_INTERCEPTOR_MODULES = [fileURLToPath(new URL(`./workflow-interceptors.${sourceExtension}`, import.meta.url))];

export { providerMetricsInterceptor } from './activity-interceptors.js';
