/**
 * The text encoding of an audience file, told by its first bytes: UTF-8 (with or without its byte order
 * mark), or UTF-16 little- or big-endian with its byte order mark. Anything else (Latin-1, Windows-1252,
 * UTF-16 without a mark) is refused with a failure that says to save the file as UTF-8, instead of reading
 * every row as an invalid number.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { AUDIENCE_FAILURES, audienceFailure } from './failures.js';

export type TextEncoding = 'utf8' | 'utf16le' | 'utf16be';

/** How many leading bytes are enough to tell the encoding. */
export const ENCODING_SAMPLE_BYTES = 64 * 1024;

const SAVE_AS_UTF8 = 'save it as UTF-8 (CSV UTF-8 in a spreadsheet) and start again';

export function notUtf8(what: string): Error {
  return audienceFailure(AUDIENCE_FAILURES.invalidFormat, `the audience file ${what}: ${SAVE_AS_UTF8}`);
}

/** The encoding of a file whose first bytes are `sample`; throws a non-retryable failure for any other. */
export function encodingOf(sample: Buffer): TextEncoding {
  if (sample[0] === 0xff && sample[1] === 0xfe) return 'utf16le';
  if (sample[0] === 0xfe && sample[1] === 0xff) return 'utf16be';
  if (sample.includes(0)) throw notUtf8('holds NUL bytes (UTF-16 without a byte order mark?)');
  // A sample cut inside a character is not an error: `stream` keeps the cut bytes back.
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(sample, { stream: true });
  } catch {
    throw notUtf8('is not UTF-8 text');
  }
  return 'utf8';
}

/** Decodes `bytes` (whole characters) of a file in `encoding` to a string. */
export function decodeText(bytes: Buffer, encoding: TextEncoding): string {
  return new TextDecoder(encoding === 'utf8' ? 'utf-8' : encoding === 'utf16le' ? 'utf-16le' : 'utf-16be').decode(
    bytes,
  );
}

/** Swaps each byte pair, turning UTF-16BE into UTF-16LE (byte offsets stay the same). */
export function swapBytePairs(): Transform {
  let carry: Buffer | null = null;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      const bytes: Buffer = carry ? Buffer.concat([carry, chunk]) : Buffer.from(chunk);
      const even = bytes.length - (bytes.length % 2);
      carry = even < bytes.length ? bytes.subarray(even) : null;
      callback(null, bytes.subarray(0, even).swap16());
    },
    flush(callback: TransformCallback) {
      callback(null, carry ?? undefined);
    },
  });
}

/** Passes UTF-8 bytes through, failing the stream at the first byte sequence that is not UTF-8. */
export function checkUtf8(): Transform {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        decoder.decode(chunk, { stream: true });
        callback(null, chunk);
      } catch {
        callback(notUtf8('is not UTF-8 text'));
      }
    },
  });
}

/** For line formats (plain text, NDJSON), which are read as UTF-8 only. */
export function requireUtf8(sample: Buffer): void {
  if (encodingOf(sample) !== 'utf8') throw notUtf8('is UTF-16 text, which only a CSV audience may be');
}
