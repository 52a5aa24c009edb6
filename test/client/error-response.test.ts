import { describe, expect, it } from 'vitest';
import {
  AuthenticationError,
  IdempotencyConflictError,
  InsufficientBalanceError,
  IpNotAllowedError,
  MessagingApiError,
  MessagingError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  SpendCapExceededError,
  ValidationError,
} from '../../src/client/index.js';
import { errorFromResponse, readErrorBody } from '../../src/client/error-response.js';

const make = (status: number, body: unknown = { code: 'c', message: 'm' }) =>
  errorFromResponse({ status, body, headers: {} });

describe('errorFromResponse', () => {
  it.each([
    [401, AuthenticationError],
    [402, InsufficientBalanceError],
    [403, PermissionDeniedError],
    [404, NotFoundError],
    [409, IdempotencyConflictError],
    [422, ValidationError],
    [429, RateLimitError],
    [500, ServerError],
    [503, ServerError],
  ])('maps %i to its class', (status, cls) => {
    const error = make(status);
    expect(error).toBeInstanceOf(cls);
    expect(error).toBeInstanceOf(MessagingApiError);
    expect(error).toBeInstanceOf(MessagingError);
    expect(error.name).toBe(cls.name);
    expect(error.status).toBe(status);
  });

  it('tells the 403 causes apart by code', () => {
    expect(make(403, { code: 'ip_not_allowed', message: 'm' })).toBeInstanceOf(IpNotAllowedError);
    expect(make(403, { code: 'spend_cap_exceeded', message: 'm' })).toBeInstanceOf(SpendCapExceededError);
    const scope = make(403, { code: 'insufficient_scope', message: 'm' });
    expect(scope).toBeInstanceOf(PermissionDeniedError);
    expect(scope).not.toBeInstanceOf(IpNotAllowedError);
    expect(scope.code).toBe('insufficient_scope');
  });

  it('uses the generic class for other statuses', () => {
    const error = make(418);
    expect(error.constructor).toBe(MessagingApiError);
  });

  it('keeps requestId, headers and Retry-After', () => {
    const error = errorFromResponse({
      status: 429,
      body: {},
      headers: { 'retry-after': '2' },
      requestId: 'req_1',
      retryAfterMs: 2000,
    });
    expect(error).toMatchObject({ requestId: 'req_1', headers: { 'retry-after': '2' }, retryAfterMs: 2000 });
  });
});

describe('readErrorBody', () => {
  it('reads the code from code, error_code or error.code', () => {
    expect(readErrorBody(400, { code: 'a', message: 'x' }).code).toBe('a');
    expect(readErrorBody(400, { error_code: 'b', message: 'x' }).code).toBe('b');
    expect(readErrorBody(400, { error: { code: 'c', message: 'nested' } })).toMatchObject({
      code: 'c',
      message: 'nested',
    });
  });
  it('keeps well-formed details and drops the rest', () => {
    const fields = readErrorBody(422, {
      code: 'validation_failed',
      message: 'x',
      details: [{ path: 'sender', message: 'bad' }, 'junk'],
    });
    expect(fields.details).toEqual([{ path: 'sender', message: 'bad' }]);
  });
  it('falls back to http_<status> and a generic message for bodies without either', () => {
    expect(readErrorBody(502, undefined)).toEqual({
      code: 'http_502',
      message: 'The provider answered HTTP 502',
      details: [],
    });
    expect(readErrorBody(500, 'oops').code).toBe('http_500');
    expect(readErrorBody(500, null).code).toBe('http_500');
    expect(readErrorBody(500, { error: null, message: 'm' })).toMatchObject({ code: 'http_500', message: 'm' });
  });
  it('skips empty strings and reads an array body as no body at all', () => {
    expect(readErrorBody(400, { code: '', error_code: 'b', message: '', error: 'plain' })).toMatchObject({
      code: 'b',
      message: 'plain',
    });
    expect(readErrorBody(400, [{ code: 'in_an_array', message: 'x' }])).toMatchObject({
      code: 'http_400',
      message: 'The provider answered HTTP 400',
    });
    expect(readErrorBody(400, { error: ['not', 'an', 'object'], code: 'x' }).message).toBe(
      'The provider answered HTTP 400',
    );
  });
});
