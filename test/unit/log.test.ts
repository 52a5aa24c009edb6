/** The JSON logger: what each line holds, the level threshold, and redaction of secrets and personal data. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger, type LogLevel } from '../../src/log.js';
import { redact, SECRET_MASK } from '../../src/redaction.js';

const SECRET_KEYS = ['authorization', 'Token', 'api_key', 'apikey', 'secret', 'secrets', 'code', 'otp', 'password'];
const PERSONAL_KEYS = ['mobile_number', 'recipient', 'recipients', 'to', 'number', 'message', 'text', 'body', 'email'];

function captured(options: { level?: LogLevel; showPersonalData?: boolean } = {}) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('test-component', {
    ...options,
    write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>),
  });
  return { logger, lines };
}

describe('redact', () => {
  it('removes every secret, whether personal data is shown or not', () => {
    for (const key of [...SECRET_KEYS, 'admin_token', 'adminToken']) {
      expect(redact({ [key]: 'value' }, false)).toEqual({ [key]: SECRET_MASK });
      expect(redact({ [key]: 'value' }, true)).toEqual({ [key]: SECRET_MASK });
    }
  });

  it('masks personal data unless it is allowed', () => {
    for (const key of PERSONAL_KEYS) {
      expect(JSON.stringify(redact({ [key]: '+2348012345678' }, false))).not.toContain('2348012345678');
      expect(redact({ [key]: '+2348012345678' }, true)).toEqual({ [key]: '+2348012345678' });
    }
  });

  it('matches whole keys only', () => {
    const fields = {
      otp_id: 'otp_1',
      codec: 'aes',
      tokens_left: 3,
      phone_to: 'x',
      sender: 'ACME',
      context: 'retry',
      message_count: 2,
    };
    expect(redact(fields, false)).toEqual(fields);
  });

  it('reaches into nested objects and arrays of objects', () => {
    const fields = { request: { headers: { authorization: 'Bearer t' }, items: [{ to: '+2348012345678', id: 7 }] } };
    expect(redact(fields, false)).toEqual({
      request: { headers: { authorization: SECRET_MASK }, items: [{ to: '+***********78', id: 7 }] },
    });
  });

  it('logs an error as its name and message, without its stack or other properties', () => {
    const error = Object.assign(new TypeError('bad input'), { token: 'secret-token' });
    expect(redact({ error }, false)).toEqual({ error: { name: 'TypeError', message: 'bad input' } });
  });

  it('keeps values that are not objects as they are', () => {
    expect(redact({ count: 3, ok: true, none: null, missing: undefined }, false)).toEqual({
      count: 3,
      ok: true,
      none: null,
      missing: undefined,
    });
    expect(redact('plain', false)).toBe('plain');
  });
});

describe('createLogger', () => {
  it('writes one JSON object a line: time, level, component, message and the redacted fields', () => {
    const { logger, lines } = captured();
    logger.info('sent', { provider_message_id: 'msg_1', to: '+2348012345678', token: 't' });
    expect(lines).toHaveLength(1);
    const [line] = lines;
    expect(line).toMatchObject({
      level: 'info',
      component: 'test-component',
      message: 'sent',
      provider_message_id: 'msg_1',
      to: '+***********78',
      token: SECRET_MASK,
    });
    expect(Date.parse(line!.time as string)).not.toBeNaN();
  });

  it('shows personal data only when allowed', () => {
    const { logger, lines } = captured({ showPersonalData: true });
    logger.warn('refused', { to: '+2348012345678', code: '123456' });
    expect(lines[0]).toMatchObject({ level: 'warn', to: '+2348012345678', code: SECRET_MASK });
  });

  it('drops lines below its level and keeps the rest', () => {
    const { logger, lines } = captured({ level: 'warn' });
    logger.debug('d');
    logger.info('i');
    logger.warn('w');
    logger.error('e');
    expect(lines.map((l) => [l.level, l.message])).toEqual([
      ['warn', 'w'],
      ['error', 'e'],
    ]);
  });

  it('never reads the fields of a line below its level (redaction would walk them all for nothing)', () => {
    const { logger } = captured({ level: 'info' });
    let reads = 0;
    const fields = {
      get attempt() {
        reads += 1;
        return 1;
      },
    };
    logger.debug('below the level', fields);
    expect(reads).toBe(0);
    logger.info('at the level', fields);
    expect(reads).toBe(1);
  });

  it('logs everything at debug, and falls back to info for an unknown level', () => {
    const debug = captured({ level: 'debug' });
    debug.logger.debug('d');
    expect(debug.lines.map((l) => l.level)).toEqual(['debug']);
    const unknown = captured({ level: 'verbose' as LogLevel });
    unknown.logger.debug('d');
    unknown.logger.info('i');
    expect(unknown.lines.map((l) => l.level)).toEqual(['info']);
  });

  it('by default writes to stderr, and shows personal data only when MSGFLOW_LOG_PERSONAL_DATA is true', () => {
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    vi.stubEnv('MSGFLOW_LOG_PERSONAL_DATA', '');
    createLogger('env').info('hidden', { recipient: '2348012345678' });
    vi.stubEnv('MSGFLOW_LOG_PERSONAL_DATA', 'true');
    createLogger('env').info('shown', { recipient: '2348012345678' });
    expect(written.map((line) => (JSON.parse(line) as { recipient: string }).recipient)).toEqual([
      '***********78',
      '2348012345678',
    ]);
    expect(written.every((line) => line.endsWith('}\n'))).toBe(true);
  });

  it('writes one readable line in the pretty format: time, level, component, message, redacted fields', () => {
    const lines: string[] = [];
    const logger = createLogger('worker', { format: 'pretty', write: (line) => lines.push(line) });
    logger.warn('retention purge failed', { messages: 3, to: '+2348012345678', token: 't' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: worker: retention purge failed \{/);
    expect(lines[0]).toContain('"messages":3');
    expect(lines[0]).toContain('"to":"+***********78"');
    expect(lines[0]).toContain('"token":"[secret]"');
    expect(lines[0]).not.toContain('2348012345678');
  });

  it('takes its format from MSGFLOW_LOG_FORMAT: pretty, or JSON for anything else', () => {
    const lines: string[] = [];
    vi.stubEnv('MSGFLOW_LOG_FORMAT', 'pretty');
    createLogger('env', { write: (line) => lines.push(line) }).info('readable');
    vi.stubEnv('MSGFLOW_LOG_FORMAT', 'yaml');
    createLogger('env', { write: (line) => lines.push(line) }).info('json');
    expect(lines[0]).toMatch(/INFO: env: readable$/);
    expect(JSON.parse(lines[1]!)).toMatchObject({ level: 'info', component: 'env', message: 'json' });
  });

  afterEach(() => {
    vi.restoreAllMocks();
    vi.unstubAllEnvs();
  });
});

describe('redact without options', () => {
  it('masks personal data and matches keys whole, at their start too', () => {
    expect(redact({ recipient: '2348012345678', barcode: '123', mytoken: 'x' })).toEqual({
      recipient: '***********78',
      barcode: '123',
      mytoken: 'x',
    });
  });
});

describe('one redaction rule for the logs and the client', () => {
  it('masks an error message like any other text, and keeps it when personal data is shown', () => {
    const error = new Error('recipient +234 801 234 5678 is barred');
    expect(redact({ error }, false)).toEqual({
      error: { name: 'Error', message: 'recipient +*** *** *** **78 is barred' },
    });
    expect(redact({ error }, true)).toEqual({ error: { name: 'Error', message: error.message } });
  });

  it('keeps ISO dates in free text, and leaves a text masked already as it is', () => {
    expect(redact({ at: '2026-03-02T10:00:00Z', note: 'due 2026-03-02' })).toEqual({
      at: '2026-03-02T10:00:00Z',
      note: 'due 2026-03-02',
    });
    expect(redact(redact({ message: 'Hello Ada' }))).toEqual({ message: '[redacted, 9 chars]' });
  });

  it('writes a log line with exactly the masks the client hands its logging hook', () => {
    const fields = { to: '+2348012345678', text: 'Hello Ada', code: '123456', url: 'https://x.test/a?t=1' };
    const { logger, lines } = captured();
    logger.info('sent', fields);
    expect(lines[0]).toMatchObject(redact(fields) as Record<string, unknown>);
    expect(lines[0]).toMatchObject({
      to: '+***********78',
      text: '[redacted, 9 chars]',
      code: SECRET_MASK,
      url: 'https://x.test/a?[redacted]',
    });
  });
});
