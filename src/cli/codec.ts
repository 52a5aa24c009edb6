/**
 * `msgflow codec …`: the codec endpoint that lets the Temporal UI and CLI show msgflow's encrypted payloads
 * to operators holding its token (`serve`), and generators for the secrets it needs (`key`, `token`).
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { startCodecServerFromEnv } from '../codec-server/from-env.js';
import { generateKey } from '../crypto/keyring.js';
import { createLogger } from '../log.js';
import { listening } from './busy-port.js';
import { type JsonFlag, printResult, withJson } from './common.js';
import { untilStopSignal } from './signals.js';

/** A codec endpoint token: 32 random bytes, URL-safe so it can also sit in the UI's endpoint path. */
export function generateCodecToken(): string {
  return randomBytes(32).toString('base64url');
}

export function registerCodecCommands(codec: Command): void {
  codec
    .command('serve')
    .description(
      'Serve POST /encode and /decode (MSGFLOW_ENCRYPTION_KEY, MSGFLOW_CODEC_TOKEN, MSGFLOW_CODEC_HOST/PORT/CORS_ORIGINS)',
    )
    .action(async () => {
      const log = createLogger('codec');
      const server = await listening(startCodecServerFromEnv(process.env, log), 'codec endpoint', 'MSGFLOW_CODEC_PORT');
      log.info('codec endpoint listening', { url: server.url });
      console.log(
        `codec endpoint: ${server.url}  (Temporal CLI: --codec-endpoint ${server.url} --codec-auth "Bearer $MSGFLOW_CODEC_TOKEN")`,
      );
      await untilStopSignal();
      await server.close();
    });

  withJson(
    codec
      .command('key')
      .description(
        'Print a new random AES-256 key for MSGFLOW_ENCRYPTION_KEY (prefix it with an id, e.g. k2:<key>, to rotate)',
      ),
  ).action((flags: JsonFlag) => {
    const key = generateKey();
    printResult(flags, { key }, () => key);
  });

  withJson(codec.command('token').description('Print a new random bearer token for MSGFLOW_CODEC_TOKEN')).action(
    (flags: JsonFlag) => {
      const token = generateCodecToken();
      printResult(flags, { token }, () => token);
    },
  );
}
