/**
 * Reading a successful response. Parsing is lenient by design: the record schemas are `looseObject`s,
 * so unknown fields are kept; and a payload that deviates from the schema inside a well-formed envelope
 * is returned as sent (the deviations are reported) unless the client is strict. Only a response that
 * is not the envelope at all (not JSON, no `data`, a list without its array) is an error.
 */
import type { z } from 'zod';
import { paginated } from '../api/common.js';
import { isJsonObject } from '../api/json.js';
import type { Route } from '../api/routes.js';
import type { ResponseMeta, WithResponse } from './options.js';

export type PayloadResult = { ok: true; payload: unknown; issues: string[] } | { ok: false; reason: string };

/** The envelope check: the minimum a response must satisfy to be usable at all. */
function envelopeProblem(route: Route, body: unknown): string | undefined {
  if (!isJsonObject(body) || !('data' in body)) return 'the response has no `data` envelope';
  if (route.paginated) {
    if (!Array.isArray(body.data)) return 'the list response has no `data` array';
    if (body.next_cursor !== null && typeof body.next_cursor !== 'string')
      return 'the list response has no `next_cursor`';
  } else if (!isJsonObject(body.data)) {
    return 'the response `data` is not an object';
  }
  return undefined;
}

function issuePaths(error: z.ZodError): string[] {
  return error.issues.map((issue) => `${issue.path.map(String).join('.') || '(root)'}: ${issue.code}`);
}

/** Parses a JSON body against the route's response schema (see the module comment for leniency). */
export function parsePayload(route: Route, body: unknown, strict: boolean): PayloadResult {
  if (!route.response) return { ok: true, payload: undefined, issues: [] };
  const problem = envelopeProblem(route, body);
  if (problem) return { ok: false, reason: problem };
  const raw = body as Record<string, unknown>;
  // A list is checked whole (data, next_cursor, per_page); a record payload alone, so issue paths name its fields.
  const parsed = route.paginated ? paginated(route.response).safeParse(raw) : route.response.safeParse(raw.data);
  if (parsed.success) return { ok: true, payload: parsed.data, issues: [] };
  const issues = issuePaths(parsed.error);
  if (strict) return { ok: false, reason: `the response does not match the contract (${issues.join('; ')})` };
  return { ok: true, payload: route.paginated ? raw : raw.data, issues };
}

/** Parses a body text as JSON; `undefined` for an empty body, a marker object when unparsable. */
export const UNPARSABLE = Symbol('unparsable');
export function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return UNPARSABLE;
  }
}

/** Attaches `lastResponse` stripe-style, non-enumerable so results serialize to the payload alone. */
export function withResponse<T extends object>(value: T, meta: ResponseMeta): WithResponse<T> {
  Object.defineProperty(value, 'lastResponse', { value: meta, enumerable: false, configurable: true });
  return value as WithResponse<T>;
}
