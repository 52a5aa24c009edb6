/**
 * `msgflow temporal …`: get a Temporal CLI (`ensure`), register msgflow's search attributes on a real
 * cluster (`setup`), or run a dev server in the foreground (`server`).
 */
import { InvalidArgumentError, type Command } from 'commander';
import { DATA_DIR, parseEnv, TemporalEnv } from '../config.js';
import { resolveTemporalCli } from '../temporal/cli.js';
import { configuredAddress, connectClient, DEFAULT_NAMESPACE } from '../temporal/connection.js';
import { GRPC_STATUS, grpcCodeOf } from '../temporal/grpc.js';
import { startDevServer } from '../temporal/dev-server.js';
import { registerSearchAttributes } from '../temporal/search-attribute-registration.js';
import { ensureTemporalServer, TEMPORAL_SERVER_VERSION } from '../temporal/server-install.js';
import { SEARCH_ATTRIBUTE_DEFINITIONS } from '../definitions/search-attributes.js';
import { type JsonFlag, printResult } from './common.js';
import { untilStopSignal } from './signals.js';

interface ServerOptions {
  port: number;
  uiPort: number;
  headless?: boolean;
  db: string;
  memory?: boolean;
  namespace?: string;
  codecEndpoint?: string;
}

function portNumber(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new InvalidArgumentError('expected a port number, 1-65535');
  return port;
}

export function registerTemporalCommands(temporal: Command): void {
  temporal
    .command('ensure')
    .description('Find the Temporal CLI (building or downloading it on first use) and print its path')
    .option('--json', 'print {"path"} (or {"address"} when a server is configured) as JSON')
    .action(async (flags: JsonFlag) => {
      const address = configuredAddress();
      if (address) {
        const why = process.env.TEMPORAL_ADDRESS
          ? `TEMPORAL_ADDRESS=${address} is set`
          : `the profile names ${address}`;
        console.error(`${why}: that server is used, no Temporal CLI is needed`);
        if (flags.json) printResult(flags, { address }, () => '');
        return;
      }
      const path = await resolveTemporalCli();
      printResult(flags, { path }, () => path);
    });

  temporal
    .command('ensure-server')
    .description(
      `Find the Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool (building them with Go on first use) and print their paths`,
    )
    .option('--json', 'print {"server", "sql", "postgresSchema"} as JSON')
    .action(async (flags: JsonFlag) => {
      const binaries = await ensureTemporalServer();
      printResult(flags, binaries, () =>
        [
          `server          ${binaries.server}`,
          `sql             ${binaries.sql}`,
          `postgres schema ${binaries.postgresSchema}`,
        ].join('\n'),
      );
    });

  temporal
    .command('setup')
    .description(
      "Register msgflow's search attributes in the configured namespace (TEMPORAL_* variables or temporal.toml profile)",
    )
    .option('--json', 'print {"namespace", "searchAttributes"} as JSON')
    .action(async (flags: JsonFlag) => {
      const client = await connectClient();
      const namespace = client.options.namespace;
      try {
        await registerSearchAttributes(client.connection, namespace);
      } catch (error) {
        const code = grpcCodeOf(error);
        if (code !== GRPC_STATUS.permissionDenied && code !== GRPC_STATUS.unimplemented) throw error;
        throw new Error(
          `The server refused to add search attributes (${(error as Error).message}). On Temporal Cloud, add them ` +
            `to namespace ${namespace} in the Cloud UI or with tcld: ${definitionsList()}`,
          { cause: error },
        );
      } finally {
        await client.connection.close();
      }
      printResult(
        flags,
        { namespace, searchAttributes: SEARCH_ATTRIBUTE_DEFINITIONS },
        () => `search attributes ready in namespace ${namespace}: ${definitionsList()}`,
      );
    });

  temporal
    .command('server')
    .description('Run a Temporal dev server in the foreground (Ctrl-C stops it)')
    .option('--port <port>', 'frontend gRPC port', portNumber, 7233)
    .option('--ui-port <port>', 'Web UI port', portNumber, 8233)
    .option('--headless', 'run without the Web UI')
    .option('--db <file>', 'SQLite file keeping the state across restarts', `${DATA_DIR}/temporal.db`)
    .option('--memory', 'keep the state in memory only (lost on stop)')
    .option('--namespace <name>', 'namespace to create besides "default" (default: TEMPORAL_NAMESPACE)')
    .option('--codec-endpoint <url>', 'codec server the Web UI uses to decode payloads')
    .action(async (options: ServerOptions) => {
      const server = await startDevServer({
        port: options.port,
        uiPort: options.headless ? false : options.uiPort,
        ...(options.memory ? {} : { dbFile: options.db }),
        namespace: options.namespace ?? parseEnv(TemporalEnv).TEMPORAL_NAMESPACE ?? DEFAULT_NAMESPACE,
        ...(options.codecEndpoint ? { codecEndpoint: options.codecEndpoint } : {}),
        log: (line) => console.error(line),
      });
      console.log(
        [
          `Temporal dev server on ${server.address} (namespace ${server.namespace})`,
          `  Web UI  ${server.uiUrl ?? '(headless)'}`,
          `  State   ${options.memory ? '(in memory)' : options.db}`,
          `Use it from other shells with TEMPORAL_ADDRESS=${server.address}. Ctrl-C stops it.`,
        ].join('\n'),
      );
      const ended = await Promise.race([untilStopSignal().then(() => undefined), server.exited]);
      await server.stop();
      if (ended !== undefined) throw new Error(`Temporal dev server ${ended}`);
    });
}

function definitionsList(): string {
  return Object.entries(SEARCH_ATTRIBUTE_DEFINITIONS)
    .map(([name, type]) => `${name}=${type}`)
    .join(' ');
}
