/**
 * Server-sent events for open console pages: a `change` event whenever messages, their states, webhook
 * deliveries or their attempts, calls or the ledger change, or an API call is refused. One timer watches the database for all
 * subscribers (a few cheap MAX(seq) reads), so open tabs cost almost nothing.
 */
import type { Request, Response } from 'express';
import type { SandboxContext } from '../context.js';

const WATCH_MS = 250;
const KEEPALIVE_MS = 20_000;

const VERSION_SQL = `SELECT
  (SELECT COALESCE(MAX(seq), 0) FROM messages) || ':' ||
  (SELECT COALESCE(MAX(seq), 0) FROM status_history) || ':' ||
  (SELECT COALESCE(MAX(seq), 0) FROM deliveries) || ':' ||
  (SELECT COALESCE(MAX(seq), 0) FROM delivery_attempts) || ':' ||
  (SELECT COALESCE(MAX(seq), 0) FROM voice_calls) || ':' ||
  (SELECT COALESCE(MAX(seq), 0) FROM ledger) || ':' ||
  (SELECT COUNT(*) FROM messages) AS version`;

export class LiveFeed {
  private readonly subscribers = new Set<Response>();
  private timer: NodeJS.Timeout | undefined;
  private version = '';
  private lastWrite = 0;

  constructor(private readonly ctx: SandboxContext) {}

  /**
   * `since` is the version the page was rendered at: when the data moved on between rendering and
   * subscribing, the page hears about it at once rather than at the next change.
   */
  subscribe(req: Request, res: Response): void {
    res.status(200).set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    const current = liveVersion(this.ctx);
    if (typeof req.query.since === 'string' && req.query.since !== current)
      res.write(`event: change\ndata: ${current}\n\n`);
    this.subscribers.add(res);
    req.on('close', () => {
      this.subscribers.delete(res);
      if (this.subscribers.size === 0) this.stop();
    });
    this.start();
  }

  close(): void {
    this.stop();
    for (const res of this.subscribers) res.end();
    this.subscribers.clear();
  }

  private start(): void {
    if (this.timer) return;
    this.version = this.read();
    this.timer = setInterval(() => this.check(), WATCH_MS);
    this.timer.unref();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    let version: string;
    try {
      version = this.read();
    } catch {
      this.close(); // the database is closing with the sandbox
      return;
    }
    const now = Date.now();
    if (version !== this.version) {
      this.version = version;
      this.broadcast(`event: change\ndata: ${version}\n\n`);
    } else if (now - this.lastWrite > KEEPALIVE_MS) {
      this.broadcast(': keep-alive\n\n');
    }
  }

  private broadcast(chunk: string): void {
    this.lastWrite = Date.now();
    for (const res of this.subscribers) res.write(chunk);
  }

  private read(): string {
    return liveVersion(this.ctx);
  }
}

/** A value that changes whenever anything a console page shows live changes. */
export function liveVersion(ctx: SandboxContext): string {
  return `${(ctx.db.prepare(VERSION_SQL).get() as { version: string }).version}:${ctx.refusals.total}`;
}
