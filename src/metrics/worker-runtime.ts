/**
 * The worker process's Temporal runtime (once per process, before any worker or native connection): the
 * SDK's logs go through msgflow's logger (with its redaction), and with a metrics address the SDK's
 * Prometheus exporter serves its own series plus msgflow's (sends, charges, outcomes) on `/metrics`.
 */
import { IllegalStateError, type LogLevel as SdkLogLevel, type LogMetadata } from '@temporalio/common';
import type { Logger as SdkLogger } from '@temporalio/worker';
import { OTP_CHANNEL_ATTEMPTS_COUNTER } from '../definitions/metric-names.js';
import type { Logger } from '../log.js';
import { loadWorkerSdk } from '../temporal/worker-sdk.js';
import { otpGuardDecisionsCounter, providerRateLimitedCounter } from './activity-interceptors.js';

export interface WorkerRuntimeOptions {
  /** `host:port` for the Prometheus exporter, e.g. `127.0.0.1:9464`; no exporter when unset. */
  metricsAddress?: string;
  logger: Logger;
}

/**
 * Installs the runtime; returns false (and changes nothing) when this process already installed one, e.g.
 * a test harness that configured its own logger first.
 */
export async function installWorkerRuntime({ metricsAddress, logger }: WorkerRuntimeOptions): Promise<boolean> {
  const { Runtime } = await loadWorkerSdk('the worker runtime (logs and metrics)');
  try {
    Runtime.install({
      logger: sdkLogger(logger),
      ...(metricsAddress
        ? {
            telemetryOptions: {
              metrics: {
                prometheus: { bindAddress: metricsAddress, countersTotalSuffix: true, useSecondsForDurations: true },
              },
            },
          }
        : {}),
    });
    if (metricsAddress) {
      providerRateLimitedCounter(Runtime.instance().metricMeter).add(0);
      otpGuardDecisionsCounter(Runtime.instance().metricMeter).add(0);
      const { name, unit, description } = OTP_CHANNEL_ATTEMPTS_COUNTER;
      Runtime.instance().metricMeter.createCounter(name, unit, description).add(0);
    }
    return true;
  } catch (error) {
    if (!(error instanceof IllegalStateError)) throw error;
    logger.warn('Temporal runtime already installed in this process: worker metrics/log settings not applied');
    return false;
  }
}

/** What the SDK says of a worker without workflows: the provider queue's worker has none by design. */
export const NO_WORKFLOWS_WARNING = 'No workflows registered, not polling for workflow tasks';

/** The SDK's logger interface over msgflow's: one line per entry, fields redacted the same way. */
export function sdkLogger(logger: Logger): SdkLogger {
  const log = (level: SdkLogLevel, message: string, meta?: LogMetadata) => {
    if (message === NO_WORKFLOWS_WARNING) return;
    const fields = meta ?? {};
    switch (level) {
      case 'TRACE':
      case 'DEBUG':
        return logger.debug(message, fields);
      case 'INFO':
        return logger.info(message, fields);
      case 'WARN':
        return logger.warn(message, fields);
      default:
        return logger.error(message, fields);
    }
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}
