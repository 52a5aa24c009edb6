/**
 * Personal data at rest. With a key ring, numbers (and rejected events, which hold one) are sealed with
 * AES-256-GCM bound to their row (associated data), and lookups by number go through HMAC-SHA256 under a
 * separate lookup key: rotating the ring changes ciphertexts but not lookup values. Without a ring the
 * number itself is both the stored value and the lookup value.
 */
import { createHmac } from 'node:crypto';
import { decrypt, encrypt, KeyRingError } from '../crypto/keyring.js';
import type { EncryptionOptions } from './types.js';

const SEALED = /^v1\.([\w-]{1,32})\.([\w-]+)$/;

export class PersonalData {
  constructor(private readonly encryption: EncryptionOptions | undefined) {}

  /** Whether numbers are sealed and looked up by keyed hash (a key ring and lookup key are configured). */
  get encrypted(): boolean {
    return this.encryption !== undefined;
  }

  /** The value to store; `context` (e.g. the message id) binds the ciphertext to its row. */
  seal(plain: string, context: string): string {
    if (!this.encryption) return plain;
    const { keyId, data } = encrypt(this.encryption.ring, Buffer.from(plain, 'utf8'), Buffer.from(context, 'utf8'));
    return `v1.${keyId}.${data.toString('base64url')}`;
  }

  /** A stored value back in clear (values stored before encryption was configured are returned as they are). */
  open(stored: string, context: string): string {
    const sealed = SEALED.exec(stored);
    if (!sealed) return stored;
    if (!this.encryption) throw new KeyRingError('the store holds encrypted data: configure MSGFLOW_ENCRYPTION_KEY');
    const [, keyId, data] = sealed;
    return decrypt(
      this.encryption.ring,
      { keyId: keyId!, data: Buffer.from(data!, 'base64url') },
      Buffer.from(context, 'utf8'),
    ).toString('utf8');
  }

  /** The lookup value of a number. */
  lookup(number: string): string {
    if (!this.encryption) return number;
    return `h1.${createHmac('sha256', this.encryption.lookupKey).update(number, 'utf8').digest('base64url')}`;
  }

  /** Every lookup value rows about `number` may hold (rows written before encryption hold the number). */
  lookups(number: string): string[] {
    return [...new Set([this.lookup(number), number])];
  }
}
