/** Runs the ingress as an HTTP server with graceful shutdown (stop accepting, finish in-flight requests). */
import { listen } from '../http/listen.js';
import { createIngressApp, type IngressAppOptions, WEBHOOK_PATH } from './app.js';

export interface RunningIngress {
  /** Base URL, e.g. http://127.0.0.1:4020 */
  url: string;
  /** Where the provider should deliver events. */
  webhookUrl: string;
  close(): Promise<void>;
}

export async function startIngress(
  options: IngressAppOptions & { host?: string; port?: number },
): Promise<RunningIngress> {
  const { host = '127.0.0.1', port = 0, ...appOptions } = options;
  const { url, close } = await listen(createIngressApp(appOptions), host, port);
  return { url, webhookUrl: `${url}${WEBHOOK_PATH}`, close };
}
