/**
 * The ceiling's webhook receiver: a bare Node HTTP server that reads each body, hands it to `onBody` and
 * answers 200. No signature check, no store, no Temporal: what any receiver costs at the least.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface BareReceiver {
  url: string;
  close(): Promise<void>;
}

export async function startBareReceiver(onBody: (raw: string) => void = () => {}): Promise<BareReceiver> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      onBody(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks/messaging`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}
