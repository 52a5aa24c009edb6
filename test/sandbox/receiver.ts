/** A real HTTP server that receives webhook deliveries in tests, with scriptable answers. */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  method: string;
  headers: IncomingHttpHeaders;
  /** Raw body, exactly as received (what the signature covers). */
  body: string;
  /** The parsed body, untyped: tests assert on whatever the sandbox sent. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json: any;
  webhookId: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** Hold the answer back this long (e.g. to exceed the sandbox's timeout). */
  delayMs?: number;
}

export interface Receiver {
  url: string;
  port: number;
  received: Delivery[];
  /** Decides the answer to each delivery; `n` counts deliveries from 1. Default 200. */
  answer: (delivery: Delivery, n: number) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(port = 0): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    port: 0,
    received: [],
    answer: () => ({ status: 200 }),
    close: async () => {},
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const delivery: Delivery = {
        method: req.method ?? '',
        headers: req.headers,
        body,
        json,
        webhookId: String(req.headers['webhook-id']),
      };
      receiver.received.push(delivery);
      const answer = receiver.answer(delivery, receiver.received.length);
      setTimeout(() => {
        if (res.destroyed) return;
        res.writeHead(answer.status, answer.headers).end();
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  receiver.port = (server.address() as AddressInfo).port;
  receiver.url = `http://127.0.0.1:${receiver.port}/hooks`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return receiver;
}

/** A port that nothing listens on (for "connection refused"). */
export async function closedPort(): Promise<number> {
  const probe = await startReceiver();
  await probe.close();
  return probe.port;
}
