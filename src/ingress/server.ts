/** Runs the ingress as an HTTP server with graceful shutdown (stop accepting, finish in-flight requests). */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createIngressApp, type IngressAppOptions, WEBHOOK_PATH } from './app.js';

export interface RunningIngress {
  /** Base URL, e.g. http://127.0.0.1:4020 */
  url: string;
  /** Where the provider should deliver events. */
  webhookUrl: string;
  close(): Promise<void>;
}

export async function startIngress(options: IngressAppOptions & { host?: string; port?: number }): Promise<RunningIngress> {
  const { host = '127.0.0.1', port = 0, ...appOptions } = options;
  const app = createIngressApp(appOptions);
  const server: Server = await new Promise((resolve, reject) => {
    const s = app.listen(port, host, () => resolve(s));
    s.once('error', reject);
  });
  const { port: actualPort } = server.address() as AddressInfo;
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${actualPort}`;
  return {
    url,
    webhookUrl: `${url}${WEBHOOK_PATH}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeIdleConnections();
      }),
  };
}
