/**
 * A real Prometheus server (Debian's `prometheus` package; scripts/ensure-debian-package.sh installs it) scraping
 * the given targets every second, its data in a temporary folder, on a free port on 127.0.0.1. Tests use it to
 * evaluate the Grafana dashboard's queries against what msgflow processes really export.
 */
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { freePort } from '../../src/temporal/dev-server.js';
import { findOnPath } from '../../src/temporal/cli.js';
import { startTool } from './tool-process.js';

export interface ScrapeJob {
  job: string;
  /** `http://host:port/metrics` URLs. */
  urls: string[];
}

export interface PrometheusSample {
  metric: Record<string, string>;
  value: [number, string];
}

export interface TestPrometheus {
  url: string;
  /** An instant query; throws with Prometheus's own error for an invalid one. */
  query(expr: string): Promise<PrometheusSample[]>;
  /** Every metric name Prometheus has scraped so far. */
  metricNames(): Promise<string[]>;
  stop(): Promise<void>;
}

export async function startPrometheus(jobs: ScrapeJob[]): Promise<TestPrometheus> {
  const binary = findOnPath('prometheus', process.env.PATH);
  if (!binary)
    throw new Error(
      'prometheus is not installed: run `bash scripts/ensure-debian-package.sh prometheus /usr/bin/prometheus`',
    );
  const dir = await mkdtemp(join(tmpdir(), 'msgflow-prometheus-'));
  const config = {
    global: { scrape_interval: '1s', evaluation_interval: '1s' },
    scrape_configs: jobs.map(({ job, urls }) => ({
      job_name: job,
      metrics_path: '/metrics',
      static_configs: [{ targets: urls.map((u) => new URL(u).host) }],
    })),
  };
  await writeFile(join(dir, 'prometheus.yml'), stringify(config));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const stop = await startTool({
    binary,
    args: [
      `--config.file=${join(dir, 'prometheus.yml')}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    dir,
    readyUrl: `${url}/-/ready`,
    what: `Prometheus ready on ${url}`,
  });
  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${url}${path}`);
    const body = (await response.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`Prometheus ${path}: ${body.error ?? response.status}`);
    return body.data;
  };
  return {
    url,
    async query(expr) {
      const data = await api<{ resultType: string; result: PrometheusSample[] }>(
        `/api/v1/query?query=${encodeURIComponent(expr)}`,
      );
      return data.result;
    },
    metricNames: () => api<string[]>('/api/v1/label/__name__/values'),
    stop,
  };
}
