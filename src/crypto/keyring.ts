/**
 * AES-256-GCM with a key ring, for everything msgflow encrypts (workflow payloads, sealed OTP codes).
 * MSGFLOW_ENCRYPTION_KEY is either one base64 key, or `id:base64key` pairs separated by commas: the first
 * encrypts, every one decrypts, so keys rotate by prepending a new one and dropping the old one later.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface KeyRing {
  /** Id of the key new data is encrypted with. */
  currentId: string;
  keys: ReadonlyMap<string, Buffer>;
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class KeyRingError extends Error {
  override name = 'KeyRingError';
}

export function parseKeyRing(spec: string): KeyRing {
  const entries = spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry, index) => {
      const [id, encoded] = entry.includes(':') ? (entry.split(':', 2) as [string, string]) : [`k${index}`, entry];
      const key = Buffer.from(encoded, 'base64');
      if (!/^[\w-]{1,32}$/.test(id)) throw new KeyRingError(`key id "${id}" must be 1-32 letters, digits, - or _`);
      if (key.length !== KEY_BYTES)
        throw new KeyRingError(`key "${id}" must be ${KEY_BYTES} bytes, base64-encoded (got ${key.length})`);
      return [id, key] as const;
    });
  if (entries.length === 0) throw new KeyRingError('no key given');
  return { currentId: entries[0]![0], keys: new Map(entries) };
}

/** A fresh random key, base64-encoded, for MSGFLOW_ENCRYPTION_KEY. */
export function generateKey(): string {
  return randomBytes(KEY_BYTES).toString('base64');
}

export interface Sealed {
  keyId: string;
  /** iv ‖ ciphertext ‖ tag */
  data: Buffer;
}

export function encrypt(ring: KeyRing, plaintext: Buffer, associatedData?: Buffer): Sealed {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', ring.keys.get(ring.currentId)!, iv);
  if (associatedData) cipher.setAAD(associatedData);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { keyId: ring.currentId, data: Buffer.concat([iv, body, cipher.getAuthTag()]) };
}

export function decrypt(ring: KeyRing, { keyId, data }: Sealed, associatedData?: Buffer): Buffer {
  const key = ring.keys.get(keyId);
  if (!key) throw new KeyRingError(`no key "${keyId}" in the key ring (was it rotated out too early?)`);
  if (data.length < IV_BYTES + TAG_BYTES) throw new KeyRingError('ciphertext too short');
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
  if (associatedData) decipher.setAAD(associatedData);
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return Buffer.concat([decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)), decipher.final()]);
}

/**
 * A secret as one printable string (`v1.<keyId>.<base64url>`), e.g. an OTP code that must not sit readable in
 * a history.
 */
export function sealString(ring: KeyRing, secret: string): string {
  const { keyId, data } = encrypt(ring, Buffer.from(secret, 'utf8'));
  return `v1.${keyId}.${data.toString('base64url')}`;
}

export function openString(ring: KeyRing, sealed: string): string {
  const [version, keyId, data] = sealed.split('.');
  if (version !== 'v1' || !keyId || !data) throw new KeyRingError('not a sealed value');
  return decrypt(ring, { keyId, data: Buffer.from(data, 'base64url') }).toString('utf8');
}
