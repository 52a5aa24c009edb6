/**
 * SMS segment counting (GSM 03.38 / 3GPP TS 23.038), the rule behind every SMS price:
 * cost = recipients × segments × price per segment.
 *
 * A text made only of GSM-7 characters fits 160 septets in one segment, 153 per segment when split
 * (the user-data header takes 7). Characters of the GSM-7 extension table cost two septets and are never
 * split across segments. Any other character switches the whole text to UCS-2: 70 per segment, 67 when split.
 */

const GSM7_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞ\u001bÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM7_EXTENSION = '^{}\\[~]|€\f';

const basic = new Set(GSM7_BASIC);
const extension = new Set(GSM7_EXTENSION);

export type SmsEncoding = 'GSM-7' | 'UCS-2';

export interface SegmentCount {
  encoding: SmsEncoding;
  segments: number;
}

export function countSegments(text: string): SegmentCount {
  const chars = [...text];
  if (chars.every((c) => basic.has(c) || extension.has(c))) {
    return { encoding: 'GSM-7', segments: countGsm7Segments(chars) };
  }
  return { encoding: 'UCS-2', segments: countUcs2Segments(text) };
}

function countGsm7Segments(chars: string[]): number {
  const septets = chars.reduce((n, c) => n + (extension.has(c) ? 2 : 1), 0);
  if (septets <= 160) return 1;
  // Split text: 153 septets per segment, and an escape pair never straddles two segments.
  let segments = 1;
  let used = 0;
  for (const c of chars) {
    const width = extension.has(c) ? 2 : 1;
    if (used + width > 153) {
      segments += 1;
      used = 0;
    }
    used += width;
  }
  return segments;
}

function countUcs2Segments(text: string): number {
  // UCS-2 counts UTF-16 code units; a surrogate pair (e.g. an emoji) is never split across segments.
  const units = text.length;
  if (units <= 70) return 1;
  let segments = 1;
  let used = 0;
  for (const c of text) {
    const width = c.length;
    if (used + width > 67) {
      segments += 1;
      used = 0;
    }
    used += width;
  }
  return segments;
}
