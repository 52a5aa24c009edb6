/** The codec endpoint as an HTTP server (`msgflow codec serve`, and inside `msgflow dev`). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CodecAppOptions, createCodecApp } from './app.js';

export interface RunningCodecServer {
  /** Base URL for callers sending `Authorization: Bearer …` (Temporal CLI `--codec-endpoint`). */
  url: string;
  /** Base URL carrying the first token in its path, for the Temporal UI (`--ui-codec-endpoint`). Secret. */
  uiEndpoint: string;
  close(): Promise<void>;
}

export async function startCodecServer(options: CodecAppOptions & { host?: string; port?: number }): Promise<RunningCodecServer> {
  const { host = '127.0.0.1', port = 0, ...appOptions } = options;
  const app = createCodecApp(appOptions);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, host, () => resolve(s));
    s.once('error', reject);
  });
  const { port: actualPort } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  return {
    url,
    uiEndpoint: `${url}/${encodeURIComponent(appOptions.tokens[0]!)}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
