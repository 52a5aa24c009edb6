/** The SDK's logs through msgflow's logger: levels map across, and the provider queue's expected warning is dropped. */
import { describe, expect, it } from 'vitest';
import type { LogFields, Logger, LogLevel } from '../../src/log.js';
import { NO_WORKFLOWS_WARNING, sdkLogger } from '../../src/metrics/worker-runtime.js';

function recordingLogger(): { logger: Logger; lines: Array<[LogLevel, string, LogFields | undefined]> } {
  const lines: Array<[LogLevel, string, LogFields | undefined]> = [];
  const at = (level: LogLevel) => (message: string, fields?: LogFields) => void lines.push([level, message, fields]);
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

describe('sdkLogger', () => {
  it("maps the SDK's levels onto msgflow's", () => {
    const { logger, lines } = recordingLogger();
    const sdk = sdkLogger(logger);
    sdk.trace('t');
    sdk.debug('d');
    sdk.info('i', { taskQueue: 'msgflow' });
    sdk.warn('w');
    sdk.error('e');
    sdk.log('WARN', 'via log');
    expect(lines).toEqual([
      ['debug', 't', {}],
      ['debug', 'd', {}],
      ['info', 'i', { taskQueue: 'msgflow' }],
      ['warn', 'w', {}],
      ['error', 'e', {}],
      ['warn', 'via log', {}],
    ]);
  });

  it("drops the warning of a worker without workflows (the provider queue's, by design), and only that", () => {
    const { logger, lines } = recordingLogger();
    const sdk = sdkLogger(logger);
    sdk.warn(NO_WORKFLOWS_WARNING, { taskQueue: 'msgflow-provider' });
    sdk.warn(`${NO_WORKFLOWS_WARNING}!`);
    expect(lines).toEqual([['warn', `${NO_WORKFLOWS_WARNING}!`, {}]]);
  });
});
