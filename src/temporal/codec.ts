/**
 * The payload codec that keeps personal data (phone numbers, texts) unreadable in Temporal: every workflow,
 * activity, signal, query, memo and failure payload is serialized whole and sealed with AES-256-GCM from
 * the key ring (src/crypto/keyring.ts, the one place for encryption). It runs in clients and workers, never
 * inside the workflow sandbox. Search attributes are NOT payloads this codec sees: keep personal data out.
 */
import type { Payload, PayloadCodec } from '@temporalio/common';
// A CommonJS module whose named exports Node's ESM loader cannot detect: take them off the default export.
import proto from '@temporalio/proto';
import { decrypt, encrypt, type KeyRing, KeyRingError } from '../crypto/keyring.js';

const ProtoPayload = proto.temporal.api.common.v1.Payload;

/** `metadata.encoding` of a payload this codec sealed (the Temporal convention for encrypted payloads). */
export const ENCRYPTED_ENCODING = 'binary/encrypted';
/** `metadata` key naming the key-ring entry a payload was sealed with, so rotation needs no re-encryption. */
export const KEY_ID_METADATA = 'encryption-key-id';
/** Associated data: a payload's ciphertext cannot be passed off as another kind of sealed value (e.g. an OTP). */
const ASSOCIATED_DATA = Buffer.from('msgflow/payload/v1');

export class PayloadDecryptionError extends Error {
  override name = 'PayloadDecryptionError';
}

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly ring: KeyRing) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      const sealed = encrypt(this.ring, Buffer.from(ProtoPayload.encode(payload).finish()), ASSOCIATED_DATA);
      return {
        metadata: { encoding: utf8(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8(sealed.keyId) },
        data: sealed.data,
      };
    });
  }

  /** Payloads this codec did not seal (written before a key was configured) pass through unchanged. */
  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => {
      if (!isEncrypted(payload)) return payload;
      const keyId = text(payload.metadata?.[KEY_ID_METADATA]);
      if (!keyId) throw new PayloadDecryptionError(`an encrypted payload has no ${KEY_ID_METADATA}`);
      try {
        const plain = decrypt(this.ring, { keyId, data: Buffer.from(payload.data ?? []) }, ASSOCIATED_DATA);
        return ProtoPayload.decode(plain);
      } catch (error) {
        const reason =
          error instanceof KeyRingError ? error.message : 'authentication failed (wrong key or altered data)';
        throw new PayloadDecryptionError(`cannot decrypt a payload sealed with key "${keyId}": ${reason}`, {
          cause: error,
        });
      }
    });
  }
}

export function isEncrypted(payload: Payload): boolean {
  return text(payload.metadata?.encoding) === ENCRYPTED_ENCODING;
}

function utf8(value: string): Uint8Array {
  return Buffer.from(value, 'utf8');
}

function text(value: Uint8Array | null | undefined): string | undefined {
  return value ? Buffer.from(value).toString('utf8') : undefined;
}
