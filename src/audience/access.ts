/**
 * Which files and URLs an audience may be read from. Whoever can start a campaign names its source, and the
 * worker reads it: without these rules that would be any file the worker can open and any address it can
 * reach (its own host, the internal network, a cloud metadata service).
 */
import { realpath } from 'node:fs/promises';
import { isIP } from 'node:net';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { DEFAULT_AUDIENCE_DIR } from '../config.js';
import { AUDIENCE_FAILURES, audienceFailure } from './failures.js';

export interface AudienceAccess {
  /** Folders file audiences may be read from, subfolders included. */
  folders: string[];
  /** Hosts URL audiences may be downloaded from: exact names, `*.example.com` for subdomains, `*` for any. */
  urlHosts: string[];
  /** Plain `http:` URLs too (default: `https:` only). */
  allowHttp?: boolean;
  /** Hosts that resolve to loopback, private, link-local or other internal addresses (default: refused). */
  allowInternalAddresses?: boolean;
}

/** A worker's access when none is configured: files in its own data folder, no URLs. */
export const DEFAULT_AUDIENCE_ACCESS: AudienceAccess = { folders: [DEFAULT_AUDIENCE_DIR], urlHosts: [] };

/** The setting each rule is relaxed by, named in refusals. */
export const AUDIENCE_SETTINGS = {
  folders: 'MSGFLOW_AUDIENCE_DIRS',
  urlHosts: 'MSGFLOW_AUDIENCE_URL_HOSTS',
  allowHttp: 'MSGFLOW_AUDIENCE_URL_ALLOW_HTTP',
  allowInternalAddresses: 'MSGFLOW_AUDIENCE_URL_ALLOW_INTERNAL',
} as const;

function refused(message: string) {
  return audienceFailure(AUDIENCE_FAILURES.refused, message);
}

/**
 * The real path of an audience file inside one of the allowed folders (links and `..` resolved first), or an
 * AudienceSourceRefused failure that says nothing of the file.
 */
export async function allowedFile(path: string, access: AudienceAccess): Promise<string> {
  const real = await realpath(resolve(path)).catch(() => resolve(path));
  const folders = await Promise.all(access.folders.map((f) => realpath(resolve(f)).catch(() => resolve(f))));
  if (folders.some((folder) => isInside(real, folder))) return real;
  throw refused(
    `the audience file is outside the folders audiences may be read from; allow its folder with ${AUDIENCE_SETTINGS.folders}`,
  );
}

function isInside(path: string, folder: string): boolean {
  const rel = relative(folder, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

/** The URL, if its scheme and host are allowed (its addresses are checked when it is fetched). */
export function allowedUrl(text: string, access: AudienceAccess): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw refused('the audience URL is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && access.allowHttp)) {
    throw refused(
      url.protocol === 'http:'
        ? `the audience URL must use https (plain http is allowed by ${AUDIENCE_SETTINGS.allowHttp}=true)`
        : `the audience URL must use https, not ${url.protocol.replace(/:$/, '')}`,
    );
  }
  if (url.username || url.password) throw refused('the audience URL must not carry credentials');
  const host = hostOf(url);
  if (!access.urlHosts.some((pattern) => hostMatches(host, pattern))) {
    throw refused(`the audience URL's host is not allowed; allow it with ${AUDIENCE_SETTINGS.urlHosts}`);
  }
  if (isIP(host) && isInternalAddress(host) && !access.allowInternalAddresses) throw internalAddressRefused();
  return url;
}

/** The host without IPv6 brackets, lower case. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
}

function hostMatches(host: string, pattern: string): boolean {
  const p = pattern.toLowerCase();
  if (p === '*') return true;
  if (p.startsWith('*.')) return host.endsWith(p.slice(1));
  return host === p;
}

export function internalAddressRefused() {
  return refused(
    `the audience URL's host has an internal address (loopback, private or link-local); allow such hosts with ${AUDIENCE_SETTINGS.allowInternalAddresses}=true`,
  );
}

/**
 * Whether an address is one a URL from outside must not reach: unspecified, loopback, private (RFC 1918,
 * unique local), shared (carrier-grade NAT), link-local, multicast, reserved, and IPv4 inside IPv6.
 */
export function isInternalAddress(address: string): boolean {
  const version = isIP(address);
  if (version === 4) return isInternalV4(address.split('.').map(Number));
  if (version === 6) return isInternalV6(address.toLowerCase());
  return true; // not an address at all: nothing to trust
}

function isInternalV4([a = 0, b = 0]: number[]): boolean {
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // shared address space
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) || // IETF protocol assignments
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast, reserved, broadcast
  );
}

function isInternalV6(address: string): boolean {
  const groups = expandV6(address);
  const [first = 0, second = 0, , , , sixth = 0, seventh = 0, eighth = 0] = groups;
  // IPv4 inside IPv6 (::ffff:10.0.0.1, ::10.0.0.1; also :: and ::1) is judged as the IPv4 address it reaches.
  if (groups.slice(0, 5).every((g) => g === 0) && (sixth === 0 || sixth === 0xffff)) {
    if (sixth === 0 && seventh === 0) return true; // ::, ::1 and the rest of ::/96
    return isInternalV4([seventh >> 8, seventh & 0xff, eighth >> 8, eighth & 0xff]);
  }
  return (
    (first & 0xfe00) === 0xfc00 || // unique local fc00::/7
    (first & 0xffc0) === 0xfe80 || // link-local fe80::/10
    (first & 0xffc0) === 0xfec0 || // site-local (deprecated)
    (first & 0xff00) === 0xff00 || // multicast
    (first === 0x64 && second === 0xff9b) // NAT64 64:ff9b::/96 reaches IPv4 addresses
  );
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function expandV6(address: string): number[] {
  const hex = address
    .replace(/%.*$/, '') // a zone id
    .replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
      [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((g) => g.toString(16)).join(':'),
    );
  const [head = '', tail] = hex.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}
