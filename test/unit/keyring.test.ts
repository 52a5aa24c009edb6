import { describe, expect, it } from 'vitest';
import {
  decrypt,
  encrypt,
  generateKey,
  KeyRingError,
  openString,
  parseKeyRing,
  sealString,
} from '../../src/crypto/keyring.js';

describe('key ring', () => {
  it('round-trips and never leaves the plaintext in the sealed form', () => {
    const ring = parseKeyRing(generateKey());
    const sealed = sealString(ring, '482913');
    expect(sealed).not.toContain('482913');
    expect(openString(ring, sealed)).toBe('482913');
  });

  it('decrypts with an older key after rotation and encrypts with the newest', () => {
    const [oldKey, newKey] = [generateKey(), generateKey()];
    const before = parseKeyRing(`old:${oldKey}`);
    const sealedBefore = encrypt(before, Buffer.from('payload'));
    const rotated = parseKeyRing(`new:${newKey},old:${oldKey}`);
    expect(decrypt(rotated, sealedBefore).toString()).toBe('payload');
    expect(encrypt(rotated, Buffer.from('x')).keyId).toBe('new');
  });

  it('refuses tampered data, unknown keys and malformed key specs', () => {
    const ring = parseKeyRing(generateKey());
    const sealed = encrypt(ring, Buffer.from('payload'));
    sealed.data[sealed.data.length - 1]! ^= 1;
    expect(() => decrypt(ring, sealed)).toThrow();
    expect(() => decrypt(parseKeyRing(`other:${generateKey()}`), encrypt(ring, Buffer.from('x')))).toThrow(
      KeyRingError,
    );
    expect(() => parseKeyRing('short')).toThrow(/32 bytes/);
    expect(() => parseKeyRing('')).toThrow(KeyRingError);
  });
});
