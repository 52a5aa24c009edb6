/**
 * A worker's settings are parsed once: one schema holds every variable its parts read, one ConfigError names
 * every wrong one, and the parts take their share from the parsed object.
 */
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  EncryptionEnv,
  MetricsEnv,
  OtpEnv,
  OtpGuardEnv,
  parseEnv,
  ProviderEnv,
  StoreEnv,
  TeamWeightsEnv,
  TemporalEnv,
  TracingEnv,
  WorkerEnv,
  WorkerSettings,
} from '../../src/config.js';
import { generateKey } from '../../src/crypto/keyring.js';
import { otpSealKeyRingOf } from '../../src/crypto/otp-keys.js';
import { storeOptionsOf } from '../../src/store/index.js';
import { activeTracing } from '../../src/tracing/setup.js';
import { workflowBuildId } from '../../src/temporal/build-id.js';
import { createMsgflowWorkerFromEnv, workerVersioningOf } from '../../src/worker.js';

const LOOKUP_KEY = Buffer.alloc(32, 7).toString('base64');

describe('WorkerSettings', () => {
  it('holds every variable of each part the worker wires', () => {
    const parts = [
      TemporalEnv,
      TracingEnv,
      WorkerEnv,
      ProviderEnv,
      TeamWeightsEnv,
      OtpGuardEnv,
      OtpEnv,
      EncryptionEnv,
      MetricsEnv,
      StoreEnv,
    ];
    const names = parts.flatMap((part) => Object.keys(part.shape));
    expect(Object.keys(WorkerSettings.shape).sort()).toEqual([...new Set(names)].sort());
  });

  it('names every wrong variable in one error', () => {
    const env = {
      MSGFLOW_RATE_LIMIT_PER_MINUTE: '-1',
      MSGFLOW_STORE_RETENTION: '1m',
      MSGFLOW_WORKER_METRICS_ADDRESS: 'nowhere',
      TEMPORAL_TLS_CERT: 'client.pem',
    };
    const error = errorOf(() => parseEnv(WorkerSettings, env));
    expect(error).toBeInstanceOf(ConfigError);
    for (const name of Object.keys(env)) expect(error?.message).toContain(name);
  });

  it('stops a worker with one error naming a bad worker, Temporal and tracing variable together', async () => {
    const env = {
      MSGFLOW_API_TOKEN: 'token',
      MSGFLOW_MAX_CACHED_WORKFLOWS: '1',
      TEMPORAL_TLS: 'maybe',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
    };
    const error = await createMsgflowWorkerFromEnv(env).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error).toBeInstanceOf(ConfigError);
    const named = error!.message.split('\n').filter((line) => line.startsWith('  '));
    expect(named.map((line) => line.trim().split(':')[0]).sort()).toEqual([
      'MSGFLOW_MAX_CACHED_WORKFLOWS',
      'OTEL_EXPORTER_OTLP_PROTOCOL',
      'TEMPORAL_TLS',
    ]);
    expect(activeTracing()).toBeUndefined();
  });

  it('stops a worker serving the Nexus service without the OTP hash key, before it connects', async () => {
    const error = await createMsgflowWorkerFromEnv({ MSGFLOW_API_TOKEN: 'token', MSGFLOW_NEXUS: 'true' }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.message).toMatch(/^MSGFLOW_OTP_HASH_KEY is required for OTP/);
  });

  it("keeps the store's rule: an encryption key needs a lookup key", () => {
    expect(() => parseEnv(WorkerSettings, { MSGFLOW_ENCRYPTION_KEY: generateKey() })).toThrow(
      /MSGFLOW_STORE_LOOKUP_KEY/,
    );
  });

  it('gives each part its share of one parse', () => {
    const encryptionKey = generateKey();
    const sealKey = generateKey();
    const settings = parseEnv(WorkerSettings, {
      MSGFLOW_ENCRYPTION_KEY: encryptionKey,
      MSGFLOW_STORE_LOOKUP_KEY: LOOKUP_KEY,
      MSGFLOW_OTP_SEAL_KEY: sealKey,
      MSGFLOW_STORE_FILE: '/tmp/worker-settings.db',
    });
    const store = storeOptionsOf(settings);
    expect(store.file).toBe('/tmp/worker-settings.db');
    expect(store.encryption?.lookupKey).toEqual(Buffer.from(LOOKUP_KEY, 'base64'));
    // The seal key wins over the encryption key: codes and payloads rotate apart.
    expect(otpSealKeyRingOf(settings)?.keys.get('k0')).toEqual(Buffer.from(sealKey, 'base64'));
  });
});

function errorOf(run: () => unknown): Error | undefined {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

describe("the worker's deployment version", () => {
  it('joins deployment msgflow with the workflow code’s build id, current only when the deployment has none', () => {
    expect(workerVersioningOf(parseEnv(WorkerEnv, {}))).toEqual({
      deploymentName: 'msgflow',
      buildId: workflowBuildId(),
      makeCurrent: 'if-none',
    });
  });

  it('takes the deployment, build id and promotion from the environment; `msgflow dev` always makes it current', () => {
    const env = {
      MSGFLOW_DEPLOYMENT_NAME: 'billing',
      MSGFLOW_BUILD_ID: 'v1.2.3',
      MSGFLOW_DEPLOYMENT_MAKE_CURRENT: 'never',
    };
    expect(workerVersioningOf(parseEnv(WorkerEnv, env))).toEqual({
      deploymentName: 'billing',
      buildId: 'v1.2.3',
      makeCurrent: 'never',
    });
    expect(workerVersioningOf(parseEnv(WorkerEnv, env), 'always')?.makeCurrent).toBe('always');
  });

  it('is off with MSGFLOW_WORKER_VERSIONING=false: the worker polls unversioned', () => {
    expect(workerVersioningOf(parseEnv(WorkerEnv, { MSGFLOW_WORKER_VERSIONING: 'false' }))).toBeUndefined();
  });

  it('refuses names the visibility query or the version string could not hold', () => {
    expect(() => parseEnv(WorkerEnv, { MSGFLOW_DEPLOYMENT_NAME: 'msg.flow' })).toThrow(/MSGFLOW_DEPLOYMENT_NAME/);
    expect(() => parseEnv(WorkerEnv, { MSGFLOW_BUILD_ID: "a'b" })).toThrow(/MSGFLOW_BUILD_ID/);
    expect(() => parseEnv(WorkerEnv, { MSGFLOW_DEPLOYMENT_MAKE_CURRENT: 'sometimes' })).toThrow(
      /MSGFLOW_DEPLOYMENT_MAKE_CURRENT/,
    );
    expect(() => parseEnv(WorkerEnv, { MSGFLOW_WORKER_VERSIONING: 'off' })).toThrow(/MSGFLOW_WORKER_VERSIONING/);
  });
});
