import { describe, expect, it } from 'vitest';
import { maskNumber, maskNumbersInText, maskText, redact, SECRET_MASK } from '../../src/redaction.js';

describe('redact', () => {
  const body = { recipients: ['2348012345678'], sender: 'ACME', message: 'Your parcel is at 12 Main St' };

  it('masks numbers and texts by default', () => {
    const out = JSON.stringify(redact(body, false));
    expect(out).not.toContain('2348012345678');
    expect(out).not.toContain('Main St');
    expect(out).toContain('ACME');
    expect(out).toContain('78');
  });

  it('keeps personal data when asked, but never secrets', () => {
    expect(redact(body, true)).toEqual(body);
    expect(redact({ otp_id: 'otp_1', code: '123456' }, true)).toEqual({ otp_id: 'otp_1', code: SECRET_MASK });
  });

  it('drops URL query strings and credentials', () => {
    const out = redact({ url: 'https://user:pw@example.com/hook?token=abc' }, true) as { url: string };
    expect(out.url).not.toContain('abc');
    expect(out.url).not.toContain('pw');
    expect(out.url).toContain('example.com/hook');
  });
});

describe('masking helpers', () => {
  it('keeps only the last two digits of a number', () => {
    expect(maskNumber('+2348012345678')).toBe('+***********78');
  });
  it('masks number-like runs in free text, not short numbers', () => {
    expect(maskNumbersInText('recipient +234 801 234 5678 is barred (code 42)')).toBe(
      'recipient +*** *** *** **78 is barred (code 42)',
    );
  });
});

describe('redact, key by key', () => {
  it('masks a secret whatever its shape, and whatever logPersonalData says', () => {
    for (const key of ['code', 'secret', 'token', 'password', 'api_key']) {
      for (const value of ['s3cr3t', ['a', 'b'], { nested: 'x' }, 42]) {
        expect(redact({ [key]: value }, true), `${key}: ${JSON.stringify(value)}`).toEqual({ [key]: SECRET_MASK });
      }
    }
    expect(SECRET_MASK).toBe('[secret]');
  });

  it('masks numbers under every number key, and texts under every text key', () => {
    for (const key of ['recipients', 'recipient', 'mobile_number', 'number', 'e164', 'to']) {
      expect(redact({ [key]: '+2348012345678' }, false), key).toEqual({ [key]: '+***********78' });
      expect(redact({ [key]: ['2348012345678'] }, false), key).toEqual({ [key]: ['***********78'] });
    }
    for (const key of ['message', 'text', 'template', 'email']) {
      expect(redact({ [key]: 'Hello Ada' }, false), key).toEqual({ [key]: '[redacted, 9 chars]' });
    }
    expect(redact({ sender: 'ACME', count: 2, ok: true }, false)).toEqual({ sender: 'ACME', count: 2, ok: true });
  });

  it('masks a value under a number key even when it is too short to look like a number elsewhere', () => {
    for (const key of ['recipients', 'recipient', 'mobile_number', 'number', 'e164', 'to']) {
      expect(redact({ [key]: '12345' }, false), key).toEqual({ [key]: '***45' });
    }
    expect(redact({ reference: '12345' }, false)).toEqual({ reference: '12345' });
  });

  it('masks numbers found in any other text, keeping short digit runs', () => {
    expect(redact({ detail: 'call +234 801 234 5678 now' }, false)).toEqual({ detail: 'call +*** *** *** **78 now' });
    expect(maskNumbersInText('order 12345678 and 123-4567 and 123456')).toBe('order ******78 and ***-**67 and 123456');
    expect(maskNumbersInText('+1 (202) 555-0101')).toBe('+* (***) ***-**01');
    expect(maskNumbersInText('a 1234567b')).toBe('a *****67b');
    expect(maskNumbersInText('2348012345678 called')).toBe('***********78 called');
    expect(maskNumbersInText('rows 1 (2) 3-4 5')).toBe('rows 1 (2) 3-4 5'); // number-like, but too few digits
    // Ids are kept whole: a run id, a workflow id with a UUID, the hex of a hash.
    const runId = '4f032b6d-4e21-4c1a-8d3e-123456789012';
    expect(maskNumbersInText(`workflow sms:${runId} run ${runId}`)).toBe(`workflow sms:${runId} run ${runId}`);
    expect(maskNumbersInText('otp:login:ab12345678901cd')).toBe('otp:login:ab12345678901cd');
    expect(maskNumbersInText('key otp-2348012345678')).toBe('key otp-***********78');
  });

  it('keeps a URL without its credentials or query, and says a query was there', () => {
    expect(redact({ url: 'https://example.com/hook' }, true)).toEqual({ url: 'https://example.com/hook' });
    expect(redact({ url: 'https://u:p@example.com/hook?t=1' }, false)).toEqual({
      url: 'https://example.com/hook?[redacted]',
    });
    expect(redact({ url: 'not a url' }, true)).toEqual({ url: '[unparsable url]' });
    expect(redact({ url: 42 }, true)).toEqual({ url: 42 });
  });

  it('masks a text of its own by length', () => {
    expect(maskText('')).toBe('[redacted, 0 chars]');
  });

  it('masks a number given as a JavaScript number, and leaves other values under personal keys alone', () => {
    expect(redact({ to: 2348012345678 })).toEqual({ to: '***********78' });
    expect(redact({ to: null, message: true, number: undefined })).toEqual({
      to: null,
      message: true,
      number: undefined,
    });
  });

  it('matches number keys whole: a key that only ends like one is free text', () => {
    expect(redact({ photo: 'img 123', order_number: 'n 456' })).toEqual({ photo: 'img 123', order_number: 'n 456' });
  });

  it('takes only a whole mask for a text masked already', () => {
    expect(maskText('[redacted, 12 chars]')).toBe('[redacted, 12 chars]');
    expect(maskText('Ada [redacted, 3 chars]')).toBe('[redacted, 23 chars]');
    expect(maskText('[redacted, 3 chars] Ada')).toBe('[redacted, 23 chars]');
  });

  it('keeps only a whole ISO date, and only a whole UUID', () => {
    expect(maskNumbersInText('ref 555 2026-03-02')).toBe('ref *** ****-**-02');
    expect(maskNumbersInText('2026-03-02 2348012345678')).toBe('****-**-** ***********78');
    expect(maskNumbersInText('run 1234567a-4e21-4c1a-8d3e-123456789012')).toBe(
      'run 1234567a-4e21-4c1a-8d3e-123456789012',
    );
    expect(maskNumbersInText('deadbeef-dead-beef-dead-2348012345')).toBe('deadbeef-dead-beef-dead-********45');
  });
});
