/** JSON request bodies: content-type check (415), parsing (400), size limit (413), zod validation (422). */
import express, { type Request, type Response } from 'express';
import type { z } from 'zod';
import { detailsOf } from '../../api/errors.js';
import { ApiError } from './errors.js';

export type JsonParser = (req: Request, res: Response) => Promise<void>;

/** A parser that runs on demand, after authentication, so anonymous callers never get their body read. */
export function jsonBodyParser(limitBytes: number): JsonParser {
  const parse = express.json({ limit: limitBytes, strict: true, type: () => true });
  return (req, res) => {
    // An empty body (Content-Length: 0, as fetch sends for a bare POST) is no body: the schema then says what
    // is missing.
    if (req.get('content-length') === '0') return Promise.resolve();
    // req.is() is null when the request has no body, false when its type is not JSON.
    if (req.is('application/json') === false) {
      return Promise.reject(
        new ApiError('unsupported_media_type', 'Send the body as JSON with Content-Type: application/json'),
      );
    }
    return new Promise((resolve, reject) => parse(req, res, (error?: unknown) => (error ? reject(error) : resolve())));
  };
}

export function validate<S extends z.ZodType>(
  schema: S,
  value: unknown,
  where: 'body' | 'query' | 'header' | 'path',
): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const what = { body: 'request body', query: 'query string', header: 'request headers', path: 'path' }[where];
  throw new ApiError('validation_failed', `The ${what} is not valid`, detailsOf(result.error));
}

/** Maps the body parser's own errors (they carry a `type`) onto API errors; null for anything else. */
export function bodyParserError(error: unknown): ApiError | null {
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type !== 'string') return null;
  switch (type) {
    case 'entity.parse.failed':
      return new ApiError('invalid_json', 'The body is not valid JSON (an object or array is expected)');
    case 'entity.too.large':
      return new ApiError(
        'payload_too_large',
        `The body is larger than the limit of ${(error as { limit?: number }).limit ?? '?'} bytes`,
      );
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'Send the body as UTF-8 JSON without a content encoding');
    default:
      return new ApiError('bad_request', 'The request body could not be read');
  }
}
