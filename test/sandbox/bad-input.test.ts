/** Bad input of any kind gets a 4xx JSON error {code, message, details?}: never a 5xx, never a crash. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ErrorBody } from '../../src/api/errors.js';
import { buildPath, type Route, routes } from '../../src/api/routes.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { type ApiCaller, apiFor, type Reply, sms } from './helpers.js';

function expectClientError(reply: Reply, status?: number, label = '') {
  expect(reply.status, label).toBeGreaterThanOrEqual(400);
  expect(reply.status, label).toBeLessThan(500);
  if (status !== undefined) expect(reply.status, label).toBe(status);
  expect(reply.headers.get('content-type'), label).toMatch(/^application\/json/);
  const body = ErrorBody.parse(reply.body);
  expect(ERROR_CODES[body.code as keyof typeof ERROR_CODES], label).toBe(reply.status);
  return body;
}

describe('bad input', () => {
  let t: TestSandbox;
  let api: ApiCaller;
  beforeAll(async () => {
    t = await startTestSandbox();
    api = apiFor(t.sandbox.baseUrl, (await t.newAccount({ ratePerMinute: 100_000 })).token);
  });
  afterAll(() => t.close());

  it('malformed JSON is 400 invalid_json', async () => {
    for (const body of ['{', '{"recipients": [}', 'null', '"text"', '42', '\u0000']) {
      expect(expectClientError(await api('POST', '/sms/send', body), 400, body).code).toBe('invalid_json');
    }
  });

  it('a body that is not JSON is 415', async () => {
    const reply = await api('POST', '/sms/send', 'recipients=1', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(expectClientError(reply, 415).code).toBe('unsupported_media_type');
    const latin1 = await api('POST', '/sms/send', '{}', { 'content-type': 'application/json; charset=latin1' });
    expectClientError(latin1, 415);
  });

  it('an unknown path is 404, a wrong method 405 with Allow', async () => {
    expect(expectClientError(await apiFor(t.sandbox.baseUrl)('GET', '/nothing/here'), 404).code).toBe('not_found');
    expect(expectClientError(await apiFor(t.sandbox.url)('GET', '/v2/messages'), 404).code).toBe('not_found');
    const wrong = await api('DELETE', '/balance');
    expect(expectClientError(wrong, 405).code).toBe('method_not_allowed');
    expect(wrong.headers.get('allow')).toBe('GET, HEAD');
    expect((await api('PUT', '/webhooks/wh_1')).headers.get('allow')).toBe('GET, PATCH, DELETE, HEAD');
  });

  it('schema failures are 422 validation_failed with details naming each field', async () => {
    const body = expectClientError(
      await api('POST', '/sms/send', { recipients: ['+12025550100', 'abc'], sender: '', extra: 1 }),
      422,
    );
    expect(body.code).toBe('validation_failed');
    const paths = body.details!.map((d) => d.path);
    expect(paths).toEqual(expect.arrayContaining(['recipients.0', 'recipients.1', 'sender', 'message', '']));
    expect(body.details!.find((d) => d.path === '')!.message).toMatch(/extra/);
    const empty = expectClientError(await api('POST', '/sms/send'), 422);
    expect(empty.details![0]!.path).toBe('');
    expectClientError(await api('GET', '/messages?unknown=1'), 422);
    expectClientError(await api('GET', '/messages?per_page=1&per_page=2'), 422);
  });

  it('an unapproved sender is 422 sender_not_approved', async () => {
    const body = expectClientError(await api('POST', '/sms/send', sms(['12025550100'], 'hi', 'STRANGER')), 422);
    expect(body.code).toBe('sender_not_approved');
    expect(body.details![0]!.path).toBe('sender');
  });

  it('a broken path encoding is a 400, not a crash', async () => {
    expectClientError(await api('GET', '/messages/%E0%A4%A'), 400);
  });

  it('no operation answers 5xx to any of a range of hostile bodies', async () => {
    const hostile: unknown[] = [
      {},
      [],
      [{}],
      { recipients: 'x' },
      { recipients: Array(5).fill(null) },
      { recipients: ['12025550100'], sender: 'ACME', message: 'x'.repeat(5000) },
      {
        recipient: { $gt: '' },
        number: Infinity,
        email: ['a@b.c'],
        url: 'javascript:alert(1)',
        otp_id: 1,
        code: 123456,
      },
      { url: 'http://127.0.0.1/x', events: '*' },
      { url: 'http://127.0.0.1/x', events: ['*', 'message.failed'] },
      JSON.parse('{"__proto__": {"polluted": true}}'),
      '{"a":' + '['.repeat(5000) + ']'.repeat(5000) + '}',
    ];
    for (const [name, route] of Object.entries(routes) as [string, Route][]) {
      if (!route.body) continue;
      const path = buildPath(route.path, { id: 'wh_x' });
      for (const body of hostile) {
        const reply = await api(route.method, path, typeof body === 'string' ? body : JSON.stringify(body));
        expectClientError(reply, undefined, `${name} ${JSON.stringify(body).slice(0, 60)}`);
      }
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await api('GET', '/balance')).status).toBe(200); // still serving
  });
});
