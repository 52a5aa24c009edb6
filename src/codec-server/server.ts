/** The codec endpoint as an HTTP server (`msgflow codec serve`, and inside `msgflow dev`). */
import { listen } from '../http/listen.js';
import { type CodecAppOptions, createCodecApp } from './app.js';

export interface RunningCodecServer {
  /** Base URL for callers sending `Authorization: Bearer …` (Temporal CLI `--codec-endpoint`). */
  url: string;
  /** Base URL carrying the first token in its path, for the Temporal UI (`--ui-codec-endpoint`). Secret. */
  uiEndpoint: string;
  close(): Promise<void>;
}

export async function startCodecServer(
  options: CodecAppOptions & { host?: string; port?: number },
): Promise<RunningCodecServer> {
  const { host = '127.0.0.1', port = 0, ...appOptions } = options;
  const { url, close } = await listen(createCodecApp(appOptions), host, port);
  return { url, uiEndpoint: `${url}/${encodeURIComponent(appOptions.tokens[0]!)}`, close };
}
