/**
 * A real Jaeger (v1.76.0, the all-in-one v2 binary; scripts/ensure-jaeger.sh builds it into the msgflow cache on
 * first use) receiving OTLP/HTTP and keeping traces in memory, on free ports on 127.0.0.1. Tests export msgflow's
 * spans to it and read them back through its query API, as the Jaeger UI does.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import { freePort } from '../../src/temporal/dev-server.js';
import { startTool } from './tool-process.js';

/** A span as Jaeger's query API returns it. */
export interface JaegerSpan {
  traceID: string;
  spanID: string;
  operationName: string;
  references: Array<{ refType: 'CHILD_OF' | 'FOLLOWS_FROM'; traceID: string; spanID: string }>;
  tags: Array<{ key: string; type: string; value: unknown }>;
  logs: Array<{ fields: Array<{ key: string; value: unknown }> }>;
  processID: string;
}

export interface JaegerTrace {
  traceID: string;
  spans: JaegerSpan[];
  processes: Record<string, { serviceName: string; tags: Array<{ key: string; value: unknown }> }>;
}

export interface TestJaeger {
  /** Where OTLP/HTTP exporters send (OTEL_EXPORTER_OTLP_ENDPOINT). */
  otlpEndpoint: string;
  /** The UI and its query API. */
  uiUrl: string;
  /** Traces of `service` holding a span with these tags (Jaeger's tag search). */
  findTraces(service: string, tags: Record<string, string>): Promise<JaegerTrace[]>;
  trace(traceId: string): Promise<JaegerTrace | undefined>;
  stop(): Promise<void>;
}

const ENSURE_JAEGER = new URL('../../scripts/ensure-jaeger.sh', import.meta.url).pathname;

/**
 * `uiAssets`: a folder of built Jaeger UI assets (the Go build serves a placeholder page in their stead); the
 * query API needs none.
 */
export async function startJaeger({ uiAssets }: { uiAssets?: string } = {}): Promise<TestJaeger> {
  const binary = await ensureJaeger();
  const dir = await mkdtemp(join(tmpdir(), 'msgflow-jaeger-'));
  const [otlpPort, uiPort, grpcPort] = [await freePort(), await freePort(), await freePort()];
  const config = {
    service: {
      extensions: ['jaeger_storage', 'jaeger_query'],
      pipelines: { traces: { receivers: ['otlp'], exporters: ['jaeger_storage_exporter'] } },
      telemetry: { metrics: { level: 'none' }, logs: { level: 'warn' } },
    },
    extensions: {
      jaeger_query: {
        storage: { traces: 'memory' },
        http: { endpoint: `127.0.0.1:${uiPort}` },
        grpc: { endpoint: `127.0.0.1:${grpcPort}` },
        ...(uiAssets ? { ui: { assets_path: uiAssets } } : {}),
      },
      jaeger_storage: { backends: { memory: { memory: { max_traces: 10_000 } } } },
    },
    receivers: { otlp: { protocols: { http: { endpoint: `127.0.0.1:${otlpPort}` } } } },
    exporters: { jaeger_storage_exporter: { trace_storage: 'memory' } },
  };
  await writeFile(join(dir, 'jaeger.yaml'), stringify(config));
  const uiUrl = `http://127.0.0.1:${uiPort}`;
  const stop = await startTool({
    binary,
    args: [`--config=file:${join(dir, 'jaeger.yaml')}`],
    dir,
    readyUrl: `${uiUrl}/api/services`,
    what: `Jaeger ready on ${uiUrl}`,
    // Jaeger would trace itself to localhost:4317 by default.
    env: { ...process.env, OTEL_TRACES_EXPORTER: 'none', OTEL_SDK_DISABLED: 'true' },
  });
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${uiUrl}/api/${path}`);
    if (!response.ok) throw new Error(`Jaeger answered ${response.status} for /api/${path}: ${await response.text()}`);
    return ((await response.json()) as { data: T }).data;
  };
  return {
    otlpEndpoint: `http://127.0.0.1:${otlpPort}`,
    uiUrl,
    findTraces: async (service, tags) =>
      (await api<JaegerTrace[] | null>(
        `traces?${new URLSearchParams({ service, tags: JSON.stringify(tags), lookback: '1h', limit: '20' })}`,
      )) ?? [],
    trace: async (traceId) => (await api<JaegerTrace[] | null>(`traces/${traceId}`))?.[0],
    stop,
  };
}

/** The binary's path; a failure says why (the script's own message) and what to do. */
async function ensureJaeger(): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)('bash', [ENSURE_JAEGER], { maxBuffer: 10 * 1024 * 1024 });
    return stdout.trim();
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    const said = (stderr ?? '').trim().split('\n').slice(-20).join('\n') || (error as Error).message;
    throw new Error(
      `Jaeger for the tracing tests could not be prepared (scripts/ensure-jaeger.sh): ${said}\n` +
        'Likely fix: install Go with access to its module proxy (the script builds Jaeger into the msgflow cache ' +
        'on first use), or place a Jaeger v1.76.0 binary where the script looks for it.',
      { cause: error },
    );
  }
}

/** A span's tag value, if it has that tag. */
export function tagOf(span: JaegerSpan, key: string): unknown {
  return span.tags.find((t) => t.key === key)?.value;
}
