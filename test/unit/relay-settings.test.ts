/** The ingress's relay settings: their defaults, and a clear error naming a wrong one. */
import { describe, expect, it } from 'vitest';
import { ConfigError, IngressEnv, parseEnv } from '../../src/config.js';

describe('relay settings', () => {
  it('default to two signals a second per workflow and a 15 s lease', () => {
    expect(parseEnv(IngressEnv, {})).toMatchObject({
      MSGFLOW_RELAY_SIGNALS_PER_SECOND: 2,
      MSGFLOW_RELAY_LEASE_SECONDS: 15,
    });
    expect(
      parseEnv(IngressEnv, { MSGFLOW_RELAY_SIGNALS_PER_SECOND: '0.5', MSGFLOW_RELAY_LEASE_SECONDS: '30' }),
    ).toMatchObject({ MSGFLOW_RELAY_SIGNALS_PER_SECOND: 0.5, MSGFLOW_RELAY_LEASE_SECONDS: 30 });
  });

  it('refuses a rate or lease that is not a positive number, naming the variable', () => {
    for (const [name, value] of [
      ['MSGFLOW_RELAY_SIGNALS_PER_SECOND', '0'],
      ['MSGFLOW_RELAY_SIGNALS_PER_SECOND', 'fast'],
      ['MSGFLOW_RELAY_LEASE_SECONDS', '-1'],
    ]) {
      expect(() => parseEnv(IngressEnv, { [name!]: value })).toThrow(ConfigError);
      expect(() => parseEnv(IngressEnv, { [name!]: value })).toThrow(name);
    }
  });
});
