/**
 * Downloads a URL audience within the access rules: every hop of a redirect is checked again, and the host's
 * addresses are checked as they are resolved, on the very connection made to them (a second resolution
 * could answer differently).
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { type AudienceAccess, allowedUrl, internalAddressRefused, isInternalAddress } from './access.js';
import { AUDIENCE_FAILURES, audienceFailure } from './failures.js';

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export interface Downloaded {
  body: Buffer;
  contentType: string | null;
  /** Where the body came from, after redirects. */
  url: URL;
}

/** Raised by the lookup when a host resolves to an internal address, so the request can say why it failed. */
class InternalAddressError extends Error {}

export async function downloadAudience(
  given: string,
  access: AudienceAccess,
  maxBytes: number,
  signal: AbortSignal,
): Promise<Downloaded> {
  let url = allowedUrl(given, access);
  for (let redirects = 0; ; redirects += 1) {
    const response = await get(url, access, signal);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECTS.has(status) && location) {
      response.resume();
      if (redirects === MAX_REDIRECTS)
        throw audienceFailure(
          AUDIENCE_FAILURES.unavailable,
          `the audience URL redirected more than ${MAX_REDIRECTS} times`,
        );
      url = allowedUrl(new URL(location, url).href, access);
      continue;
    }
    if (status < 200 || status > 299) {
      response.resume();
      const message = `the audience URL answered ${status}`;
      // A client error will not change on retry; a server error or rate limit may.
      if (status >= 400 && status < 500 && status !== 408 && status !== 429)
        throw audienceFailure(AUDIENCE_FAILURES.unavailable, message);
      throw new Error(message);
    }
    return { body: await bodyOf(response, maxBytes), contentType: response.headers['content-type'] ?? null, url };
  }
}

function get(url: URL, access: AudienceAccess, signal: AbortSignal): Promise<IncomingMessage> {
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = transport.get(url, { signal, lookup: checkedLookup(access) }, resolve);
    request.on('error', (error) => reject(error instanceof InternalAddressError ? internalAddressRefused() : error));
  });
}

/** A DNS lookup that fails when any address of the host is internal (unless allowed). */
function checkedLookup(access: AudienceAccess): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 0);
      if (!access.allowInternalAddresses && addresses.some((a) => isInternalAddress(a.address)))
        return callback(new InternalAddressError(hostname), '', 0);
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
      const [first] = addresses;
      return callback(null, first!.address, first!.family);
    });
  };
}

async function bodyOf(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    audienceFailure(AUDIENCE_FAILURES.unavailable, `the audience is larger than ${maxBytes} bytes`);
  if (Number(response.headers['content-length'] ?? 0) > maxBytes) {
    response.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.destroy();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
