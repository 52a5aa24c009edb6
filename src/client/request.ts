/**
 * The one request pipeline every resource method goes through: validate the input against the route's
 * schemas, attach auth and idempotency headers, send with a per-attempt timeout, turn error statuses into
 * typed errors, retry by the policy in retry-policy.ts, parse the payload, and report each attempt to the
 * logger (redacted).
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Id } from '../api/common.js';
import { buildPath, IDEMPOTENCY_KEY_HEADER, type Route } from '../api/routes.js';
import { errorFromResponse } from './error-response.js';
import {
  ConnectionError,
  InvalidInputError,
  MessagingApiError,
  type MessagingError,
  type ResponseHeaders,
  TimeoutError,
} from './errors.js';
import {
  headersToObject,
  isReplayed,
  parseRateLimit,
  parseRetryAfter,
  type RateLimitState,
  requestIdOf,
} from './headers.js';
import type { LogEntry, Logger, ResponseMeta, SendOptions } from './options.js';
import { maskNumbersInText, redact } from '../redaction.js';
import { parseJson, parsePayload, UNPARSABLE } from './response.js';
import { decideRetry, type RetrySettings } from './retry-policy.js';
import { sleep } from '../sleep.js';
import type { z } from 'zod';
import { requireInteger, validate } from './validation.js';
import { inSpan, markFailed, SpanKind } from '../tracing/spans.js';

export interface PipelineSettings extends RetrySettings {
  baseUrl: string;
  token: string;
  timeoutMs: number;
  fetch: typeof fetch;
  logger?: Logger;
  logPersonalData: boolean;
  strictResponses: boolean;
  userAgent: string;
}

export interface Call {
  route: Route;
  /** Path parameters (`{id}`), validated as ids. */
  params?: Record<string, string>;
  /** Wire-format query (snake_case), validated against the route's query schema. */
  query?: Record<string, unknown>;
  /** Request body, validated against the route's body schema. */
  body?: unknown;
  options?: SendOptions;
}

export interface CallResult {
  payload: unknown;
  meta: ResponseMeta;
}

/** Header values must be visible ASCII (spaces allowed inside); anything else would make fetch throw. */
const IDEMPOTENCY_KEY_PATTERN = /^[!-~](?:[ -~]{0,253}[!-~])?$/;

/** GET and DELETE can be repeated without repeating an effect (RFC 9110 §9.2.2); POSTs need a key. */
const IDEMPOTENT_METHODS = new Set(['GET', 'DELETE']);

/** Everything about a call that stays the same across its attempts. */
interface Prepared {
  path: string;
  url: string;
  init: { method: string; headers: Record<string, string>; body?: string };
  idempotencyKey: string | undefined;
  logFields: Partial<LogEntry>;
}

type Attempt =
  | { kind: 'response'; status: number; headers: ResponseHeaders; body: unknown }
  | { kind: 'failure'; error: ConnectionError };

export class RequestPipeline {
  private latestRateLimit?: RateLimitState;

  constructor(private readonly settings: PipelineSettings) {}

  /** The X-RateLimit-* state of the most recent response (successful or not). */
  get rateLimit(): RateLimitState | undefined {
    return this.latestRateLimit;
  }

  async call(call: Call): Promise<CallResult> {
    const prepared = this.prepare(call);
    const options = call.options ?? {};
    const settings: RetrySettings = { ...this.settings, maxRetries: options.maxRetries ?? this.settings.maxRetries };
    const replaySafe = IDEMPOTENT_METHODS.has(call.route.method) || prepared.idempotencyKey !== undefined;

    for (let attempt = 1; ; attempt++) {
      if (options.signal?.aborted) throw options.signal.reason;
      const started = performance.now();
      const outcome = await this.tracedAttempt(call.route, prepared, options, attempt);
      const logEntry: LogEntry = {
        method: call.route.method,
        path: prepared.path,
        attempt,
        durationMs: Math.round(performance.now() - started),
        ...prepared.logFields,
      };

      let failure: MessagingError;
      let retryAfterMs: number | undefined;
      if (outcome.kind === 'response') {
        const response = this.observe(outcome, logEntry);
        if (outcome.status >= 200 && outcome.status < 300)
          return this.succeed(call.route, prepared, response, logEntry);
        retryAfterMs = parseRetryAfter(outcome.headers['retry-after']);
        failure = errorFromResponse({
          status: outcome.status,
          body: outcome.body === UNPARSABLE ? undefined : outcome.body,
          headers: outcome.headers,
          ...(response.requestId === undefined ? {} : { requestId: response.requestId }),
          ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
        });
      } else {
        failure = outcome.error;
      }

      // A caller's abort wins over whatever the attempt produced.
      if (options.signal?.aborted) {
        this.log({ ...logEntry, error: { type: 'AbortError', message: 'aborted by the caller' } });
        throw options.signal.reason;
      }
      const decision = decideRetry({
        failure,
        retriesDone: attempt - 1,
        replaySafe,
        hasIdempotencyKey: prepared.idempotencyKey !== undefined,
        settings,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
      this.log({
        ...logEntry,
        error: describe(failure, this.settings.logPersonalData),
        ...(decision.retry ? { retryInMs: decision.delayMs } : {}),
      });
      if (!decision.retry) throw failure;
      await sleep(decision.delayMs, options.signal);
    }
  }

  /** What every answer tells, success or not: request id and rate-limit state. */
  private observe(outcome: Extract<Attempt, { kind: 'response' }>, logEntry: LogEntry) {
    const requestId = requestIdOf(outcome.headers);
    const rateLimit = parseRateLimit(outcome.headers);
    if (rateLimit) this.latestRateLimit = rateLimit;
    logEntry.status = outcome.status;
    if (requestId !== undefined) logEntry.requestId = requestId;
    return { ...outcome, requestId, rateLimit };
  }

  private succeed(
    route: Route,
    prepared: Prepared,
    response: ReturnType<RequestPipeline['observe']>,
    logEntry: LogEntry,
  ): CallResult {
    const { status, headers, body, requestId, rateLimit } = response;
    const meta: ResponseMeta = { status, replayed: isReplayed(headers) };
    if (requestId !== undefined) meta.requestId = requestId;
    if (prepared.idempotencyKey !== undefined) meta.idempotencyKey = prepared.idempotencyKey;
    if (rateLimit) meta.rateLimit = rateLimit;
    logEntry.replayed = meta.replayed;

    const parsed =
      body === UNPARSABLE
        ? ({ ok: false, reason: 'the response is not JSON' } as const)
        : parsePayload(route, body, this.settings.strictResponses);
    if (parsed.ok) {
      if (parsed.issues.length > 0) logEntry.responseIssues = parsed.issues;
      this.log(logEntry);
      return { payload: parsed.payload, meta };
    }
    // A malformed success is not retried: the provider acted, and a replay would return the same body.
    const error = new MessagingApiError({
      status,
      code: 'invalid_response',
      message: `Unexpected response from ${route.method} ${route.path}: ${parsed.reason}`,
      headers,
      ...(requestId === undefined ? {} : { requestId }),
    });
    this.log({ ...logEntry, error: describe(error, this.settings.logPersonalData) });
    throw error;
  }

  /** Validates the call and builds everything that stays the same across attempts. */
  private prepare(call: Call): Prepared {
    const { route, options = {} } = call;
    for (const [name, value] of Object.entries(call.params ?? {})) validate(Id, value, name);
    const body: unknown = route.body
      ? validate(route.body, call.body, `request body for ${route.method} ${route.path}`)
      : undefined;
    const query = new URLSearchParams();
    if (route.query) {
      const given = validateQuery(route.query, call.query ?? {}, `query for ${route.method} ${route.path}`);
      // Send only what the caller gave, so the provider's own defaults apply to the rest.
      for (const [name, value] of Object.entries(given)) query.set(name, value);
    }
    let idempotencyKey: string | undefined;
    if (route.idempotent) {
      idempotencyKey = options.idempotencyKey ?? randomUUID();
      if (!IDEMPOTENCY_KEY_PATTERN.test(idempotencyKey)) {
        throw new InvalidInputError('Invalid idempotencyKey', [
          {
            path: 'idempotencyKey',
            message: 'must be 1-255 printable ASCII characters, not starting or ending with a space',
          },
        ]);
      }
    }
    requireInteger(options.timeoutMs, 'timeoutMs', 1);
    requireInteger(options.maxRetries, 'maxRetries');

    const path = buildPath(route.path, call.params);
    const search = query.toString();
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.settings.token}`,
      Accept: 'application/json',
      'User-Agent': this.settings.userAgent,
    };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (idempotencyKey !== undefined) headers[IDEMPOTENCY_KEY_HEADER] = idempotencyKey;

    const logFields: Partial<LogEntry> = {};
    if (search) logFields.query = Object.fromEntries(query);
    // Redacting a chunk's thousand numbers is work only a logger reads.
    if (body !== undefined && this.settings.logger) logFields.body = redact(body, this.settings.logPersonalData);
    if (idempotencyKey !== undefined) logFields.idempotencyKey = idempotencyKey;

    return {
      path,
      url: `${this.settings.baseUrl}${path}${search ? `?${search}` : ''}`,
      init: { method: call.route.method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
      idempotencyKey,
      logFields,
    };
  }

  /** An attempt in its own client span, named by the route's template (no ids or numbers from the URL). */
  private tracedAttempt(route: Route, prepared: Prepared, options: SendOptions, attempt: number): Promise<Attempt> {
    const attributes = {
      'http.request.method': route.method,
      'url.template': route.path,
      'server.address': new URL(this.settings.baseUrl).host,
      'http.request.resend_count': attempt - 1,
    };
    return inSpan(`${route.method} ${route.path}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      const outcome = await this.attempt(prepared, options);
      if (outcome.kind === 'failure') markFailed(span, outcome.error.name);
      else {
        span.setAttribute('http.response.status_code', outcome.status);
        if (outcome.status >= 400) markFailed(span, String(outcome.status));
      }
      return outcome;
    });
  }

  /** One HTTP exchange, body included, bounded by the timeout and the caller's signal. */
  private async attempt(prepared: Prepared, options: SendOptions): Promise<Attempt> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.settings.timeoutMs);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    try {
      const response = await this.settings.fetch(prepared.url, { ...prepared.init, signal });
      const text = await response.text();
      return {
        kind: 'response',
        status: response.status,
        headers: headersToObject(response.headers),
        body: parseJson(text),
      };
    } catch (cause) {
      if (options.signal?.aborted) throw options.signal.reason;
      if (timeout.aborted) {
        return {
          kind: 'failure',
          error: new TimeoutError(
            `No response from ${prepared.init.method} ${prepared.path} ` +
              `within ${options.timeoutMs ?? this.settings.timeoutMs} ms`,
            { cause },
          ),
        };
      }
      const reason =
        cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
      return {
        kind: 'failure',
        error: new ConnectionError(
          `Could not reach the provider for ${prepared.init.method} ${prepared.path}: ${reason}`,
          { cause },
        ),
      };
    }
  }

  private log(entry: LogEntry): void {
    if (!this.settings.logger) return;
    try {
      this.settings.logger(entry);
    } catch {
      // A failing logger must never fail the request it describes.
    }
  }
}

/**
 * Checks a query as given and as it goes on the wire (strings), returning the wire form: the schema
 * coerces numbers, so `per_page: true` would pass as 1 yet be sent as "true", which the provider refuses.
 */
export function validateQuery(schema: z.ZodType, query: Record<string, unknown>, what: string): Record<string, string> {
  const given = definedEntries(query);
  validate(schema, given, what);
  const wire = Object.fromEntries(Object.entries(given).map(([name, value]) => [name, String(value)]));
  validate(schema, wire, what);
  return wire;
}

/** The query without undefined values (an omitted option is not a parameter). */
export function definedEntries(query: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined));
}

function describe(error: MessagingError, logPersonalData: boolean): NonNullable<LogEntry['error']> {
  const message = logPersonalData ? error.message : maskNumbersInText(error.message);
  return error instanceof MessagingApiError
    ? { type: error.name, code: error.code, message }
    : { type: error.name, message };
}
