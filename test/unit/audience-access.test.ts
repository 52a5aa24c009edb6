/**
 * Where audiences may be read from: files only inside the allowed folders (links and `..` resolved), URLs
 * only over https to allowed hosts, internal addresses refused after name resolution and on every redirect,
 * and refused entries reported masked. Real files, real sockets on loopback.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AudienceAccess, allowedFile, allowedUrl, isInternalAddress } from '../../src/audience/access.js';
import { classifyEntries, maskedEntry } from '../../src/audience/dedup.js';
import { downloadAudience } from '../../src/audience/download.js';

const root = mkdtempSync(join(tmpdir(), 'audience-access-'));
const allowed = join(root, 'allowed');
const outside = join(root, 'outside');
mkdirSync(allowed);
mkdirSync(outside);
writeFileSync(join(allowed, 'list.txt'), '2348012345678\n');
writeFileSync(join(outside, 'secret.txt'), 'root:x:0:0:root:/root:/bin/bash\n');
symlinkSync(join(outside, 'secret.txt'), join(allowed, 'link-out.txt'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const files: AudienceAccess = { folders: [allowed], urlHosts: [] };
const REFUSED = { type: 'AudienceSourceRefused', nonRetryable: true };

describe('file audiences', () => {
  it('are read inside an allowed folder, subfolders included', async () => {
    expect(await allowedFile(join(allowed, 'list.txt'), files)).toBe(join(allowed, 'list.txt'));
    mkdirSync(join(allowed, 'sub'), { recursive: true });
    writeFileSync(join(allowed, 'sub', 'more.txt'), '');
    expect(await allowedFile(join(allowed, 'sub', 'more.txt'), files)).toBe(join(allowed, 'sub', 'more.txt'));
  });

  it('are refused outside it, by absolute path, `..` or a link, naming the setting and nothing of the file', async () => {
    for (const path of [
      '/etc/passwd',
      join(outside, 'secret.txt'),
      join(allowed, '..', 'outside', 'secret.txt'),
      join(allowed, 'link-out.txt'),
      `${allowed}-sibling/list.txt`,
      allowed,
    ]) {
      const refusal = await allowedFile(path, files).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal, path).toMatchObject({ ...REFUSED, message: expect.stringContaining('MSGFLOW_AUDIENCE_DIRS') });
      expect(String((refusal as Error).message)).not.toMatch(/root|bash/);
    }
  });

  it('are refused everywhere when no folder is allowed', async () => {
    await expect(allowedFile(join(allowed, 'list.txt'), { folders: [], urlHosts: [] })).rejects.toMatchObject(REFUSED);
  });
});

describe('URL audiences', () => {
  const hosts: AudienceAccess = { folders: [], urlHosts: ['lists.example.com', '*.crm.example'] };

  it('need https and an allowed host (exact, or a subdomain of a wildcard)', () => {
    expect(allowedUrl('https://lists.example.com/due.csv', hosts).href).toBe('https://lists.example.com/due.csv');
    expect(allowedUrl('https://eu.crm.example/export', hosts).hostname).toBe('eu.crm.example');
    expect(() => allowedUrl('http://lists.example.com/due.csv', hosts)).toThrow(
      /https.*MSGFLOW_AUDIENCE_URL_ALLOW_HTTP/,
    );
    expect(() => allowedUrl('ftp://lists.example.com/due.csv', hosts)).toThrow(/must use https, not ftp/);
    expect(() => allowedUrl('file:///etc/passwd', hosts)).toThrow(/must use https, not file/);
    expect(() => allowedUrl('https://other.example.com/', hosts)).toThrow(/MSGFLOW_AUDIENCE_URL_HOSTS/);
    expect(() => allowedUrl('https://crm.example/', hosts)).toThrow(/MSGFLOW_AUDIENCE_URL_HOSTS/);
    expect(() => allowedUrl('https://lists.example.com.evil.test/', hosts)).toThrow(/MSGFLOW_AUDIENCE_URL_HOSTS/);
    expect(() => allowedUrl('https://user:pw@lists.example.com/', hosts)).toThrow(/credentials/);
    expect(() => allowedUrl('not a url', hosts)).toThrow(/not a valid URL/);
  });

  it('allow plain http only when told to', () => {
    expect(allowedUrl('http://lists.example.com/', { ...hosts, allowHttp: true }).protocol).toBe('http:');
  });

  it('refuse an internal address written in the URL, even on an allowed host list', () => {
    const any: AudienceAccess = { folders: [], urlHosts: ['*'], allowHttp: true };
    for (const url of [
      'http://127.0.0.1:4010/',
      'http://[::1]/',
      'http://169.254.169.254/latest',
      'http://10.0.0.5/',
    ]) {
      expect(() => allowedUrl(url, any), url).toThrow(/internal address.*MSGFLOW_AUDIENCE_URL_ALLOW_INTERNAL/);
    }
    expect(allowedUrl('http://127.0.0.1:4010/', { ...any, allowInternalAddresses: true }).port).toBe('4010');
  });

  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.16.0.1', true],
    ['172.31.255.255', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['100.128.0.1', false],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['::1', true],
    ['::', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:8.8.8.8', false],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fc00::8.8.8.8', true],
    ['fd12:3456::1', true],
    ['ff02::1', true],
    ['64:ff9b::a00:1', true],
    ['2001:4860:4860::8888', false],
    ['not-an-address', true],
  ])('%s is internal: %s', (address, internal) => {
    expect(isInternalAddress(address)).toBe(internal);
  });
});

describe('downloading a URL audience', () => {
  let server: Server;
  let base: string;
  const requests: string[] = [];
  const signal = new AbortController().signal;

  beforeAll(async () => {
    server = createServer((req, res) => {
      requests.push(req.url ?? '');
      if (req.url === '/to-localhost') res.writeHead(302, { location: `http://localhost:${port()}/list` }).end();
      else if (req.url === '/to-file') res.writeHead(302, { location: 'file:///etc/passwd' }).end();
      else if (req.url === '/loop') res.writeHead(302, { location: '/loop' }).end();
      else res.writeHead(200, { 'content-type': 'text/plain' }).end('2348012345678\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${port()}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = () => (server.address() as AddressInfo).port;
  const loopback: AudienceAccess = {
    folders: [],
    urlHosts: ['127.0.0.1'],
    allowHttp: true,
    allowInternalAddresses: true,
  };

  it('reads an allowed host', async () => {
    const got = await downloadAudience(`${base}/list`, loopback, 1024, signal);
    expect(got.body.toString()).toBe('2348012345678\n');
  });

  it('checks each redirect again: another host, another scheme, too many hops', async () => {
    await expect(downloadAudience(`${base}/to-localhost`, loopback, 1024, signal)).rejects.toMatchObject({
      ...REFUSED,
      message: expect.stringContaining('MSGFLOW_AUDIENCE_URL_HOSTS'),
    });
    await expect(downloadAudience(`${base}/to-file`, loopback, 1024, signal)).rejects.toMatchObject(REFUSED);
    await expect(downloadAudience(`${base}/loop`, loopback, 1024, signal)).rejects.toThrow(/redirected more than 5/);
    expect(requests.filter((r) => r === '/list')).toHaveLength(1); // only the allowed read reached it
  });

  it('refuses a host name that resolves to an internal address, before any request', async () => {
    const before = requests.length;
    const byName: AudienceAccess = { folders: [], urlHosts: ['localhost'], allowHttp: true };
    await expect(downloadAudience(`http://localhost:${port()}/list`, byName, 1024, signal)).rejects.toMatchObject({
      ...REFUSED,
      message: expect.stringContaining('internal address'),
    });
    expect(requests.length).toBe(before);
    const allowedInternal = { ...byName, allowInternalAddresses: true };
    expect(
      (await downloadAudience(`http://localhost:${port()}/list`, allowedInternal, 1024, signal)).url.hostname,
    ).toBe('localhost');
  });

  it('refuses a body larger than the limit', async () => {
    await expect(downloadAudience(`${base}/list`, loopback, 4, signal)).rejects.toThrow(/larger than 4 bytes/);
  });
});

describe('refused entries', () => {
  it('are reported masked: a number keeps its last two digits, other text only its length', () => {
    expect(maskedEntry('0803 000 0021')).toBe('**** *** **21');
    expect(maskedEntry('root:x:0:0:root:/root:/bin/bash')).toBe('[redacted, 31 chars]');
    const { invalid } = classifyEntries(['root:x:0:0:root:/root:/bin/bash', '12', '2348012345678'], new Set(), 0);
    expect(invalid).toEqual([
      { index: 0, value: '[redacted, 31 chars]', reason: 'unknown number format' },
      { index: 1, value: '12', reason: expect.stringContaining('unknown number format') },
    ]);
  });
});
