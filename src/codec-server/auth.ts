/**
 * Who may use the codec endpoint: a caller presenting one of its tokens, as `Authorization: Bearer <token>`
 * (the Temporal CLI's `--codec-auth`, scripts) or as the URL's first path segment, `/<token>/decode` (the
 * Temporal UI, which sends no custom header to a codec endpoint; the protocol routes on the last segment
 * only). Such a URL is as secret as the token itself.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type Credential = { header?: string; pathPrefix: string };

export function tokenChecker(tokens: readonly string[]): (credential: Credential) => boolean {
  if (tokens.length === 0) throw new Error('the codec endpoint needs at least one token');
  const digests = tokens.map(digest);
  const matches = (candidate: string) => {
    const d = digest(candidate);
    // Compare fixed-size digests in constant time, against every token, so timing reveals nothing.
    return digests.map((known) => timingSafeEqual(known, d)).includes(true);
  };
  return ({ header, pathPrefix }) => {
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1];
    if (bearer !== undefined) return matches(bearer);
    const segment = pathPrefix.replace(/^\/+|\/+$/g, '');
    return segment.length > 0 && !segment.includes('/') && matches(decodeURIComponent(segment));
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
