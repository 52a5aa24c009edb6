/** What a msgflow Worker registers for metrics (the workflows count their own events: workflow-metrics.ts). */
export { providerMetricsInterceptor } from './activity-interceptors.js';
