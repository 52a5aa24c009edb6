/** The options of `msgflow dev`, declared with its name so `msgflow --help` shows them without loading the stack. */
import type { Command } from 'commander';

export interface DevOptions {
  temporalPort: string;
  uiPort: string;
  sandboxPort: string;
  ingressPort: string;
  codecPort: string;
  workerMetricsPort: string;
  otlpEndpoint?: string;
}

export function addDevOptions(dev: Command): void {
  dev
    .option('--temporal-port <port>', 'Temporal frontend port', '7233')
    .option('--ui-port <port>', 'Temporal UI port', '8233')
    .option('--sandbox-port <port>', 'sandbox port', '4010')
    .option('--ingress-port <port>', 'ingress port', '4020')
    .option('--codec-port <port>', 'codec endpoint port (decrypts payloads for the Temporal UI)', '4030')
    .option('--worker-metrics-port <port>', "worker's Prometheus metrics port", '9464')
    .option(
      '--otlp-endpoint <url>',
      'export traces over OTLP/HTTP to this collector, e.g. http://127.0.0.1:4318 (default: OTEL_EXPORTER_OTLP_ENDPOINT; none: off)',
    );
}
