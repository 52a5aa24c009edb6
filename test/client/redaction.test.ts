import { describe, expect, it } from 'vitest';
import { maskNumber, maskNumbersInText, redact, SECRET_MASK } from '../../src/client/redaction.js';

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
