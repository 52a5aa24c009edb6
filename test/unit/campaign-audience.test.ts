/**
 * Audience reading on real files: CSV/NDJSON/text pages from byte offsets, validation, de-duplication across
 * pages, and a worker without memory (a fresh deduper) rebuilding what it had seen. Loaders through the
 * documented interface.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AudienceLoader, importAudienceLoaders } from '../../src/audience/loaders.js';
import { csvLayoutOfFile, readCsvFile } from '../../src/audience/csv.js';
import { AudienceDeduper, classifyEntries, scanAudience } from '../../src/audience/dedup.js';
import { DownloadCache, pageReaderFor, type PageReader, readLines } from '../../src/audience/sources.js';

const dir = mkdtempSync(join(tmpdir(), 'campaign-audience-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const context = {
  campaign: { id: 'campaign:test', startedAt: '2026-03-02T09:00:00Z' },
  loaders: {},
  downloads: new DownloadCache(),
  // This file's own folder, and its servers on loopback.
  access: { folders: [dir], urlHosts: ['127.0.0.1'], allowHttp: true, allowInternalAddresses: true },
};
const signal = new AbortController().signal;

async function readAll(read: PageReader, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page = await read(cursor, limit, signal);
    pages.push(page.entries);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return pages;
}

describe('file sources', () => {
  it('reads lines in pages from byte offsets, skipping blank lines, with or without a final newline', async () => {
    const path = join(dir, 'lines.txt');
    writeFileSync(path, 'a\r\n\nbé\nc\n\nd');
    expect(await readLines(path, 0, 2)).toMatchObject({ lines: ['a', 'bé'] });
    const first = await readLines(path, 0, 2);
    expect(await readLines(path, first.end, 10)).toMatchObject({ lines: ['c', 'd'], eof: true });
  });

  it('reads a CSV by its phone column, quoted fields included', async () => {
    const path = join(dir, 'due.csv');
    writeFileSync(
      path,
      'name,"Phone Number",due\n"Ada, L.",+234 801 234 5678,2026-03-01\nBola,2348098765432,2026-03-02\n',
    );
    const read = pageReaderFor({ type: 'file', path }, context);
    expect(await readAll(read, 1)).toEqual([['+234 801 234 5678'], ['2348098765432']]);
    await expect(pageReaderFor({ type: 'file', path, column: 'mobile' }, context)(null, 10, signal)).rejects.toThrow(
      /no column "mobile"/,
    );
  });

  it('reads a ;-separated file with a BOM and CRLF line ends, every column kept by header name', async () => {
    const path = join(dir, 'excel.csv');
    writeFileSync(path, '\uFEFFName;Mobile;Amount\r\nAda;+234 801 234 5678;1,50\r\nBola;2348098765432;2,00\r\n');
    const layout = await csvLayoutOfFile(path, {});
    expect(layout).toMatchObject({ delimiter: ';', columns: ['Name', 'Mobile', 'Amount'], phoneColumn: 'Mobile' });
    expect(await readCsvFile(path, layout, layout.dataStart, 10)).toMatchObject({
      records: [
        { Name: 'Ada', Mobile: '+234 801 234 5678', Amount: '1,50' },
        { Name: 'Bola', Mobile: '2348098765432', Amount: '2,00' },
      ],
      eof: true,
    });
    expect(await readAll(pageReaderFor({ type: 'file', path }, context), 1)).toEqual([
      ['+234 801 234 5678'],
      ['2348098765432'],
    ]);
  });

  it('keeps a row whose quoted field holds a line break, and pages across it by byte offset', async () => {
    const path = join(dir, 'multiline.csv');
    writeFileSync(
      path,
      'phone,note\n2348012345678,"first line\nsecond line, with a comma"\n2348098765432,"said ""hi"""\n2348011111111,\n',
    );
    const layout = await csvLayoutOfFile(path, {});
    const first = await readCsvFile(path, layout, layout.dataStart, 1);
    expect(first.records).toEqual([{ phone: '2348012345678', note: 'first line\nsecond line, with a comma' }]);
    const rest = await readCsvFile(path, layout, first.end, 10);
    expect(rest.records).toEqual([
      { phone: '2348098765432', note: 'said "hi"' },
      { phone: '2348011111111', note: '' },
    ]);
    expect(await readAll(pageReaderFor({ type: 'file', path }, context), 2)).toEqual([
      ['2348012345678', '2348098765432'],
      ['2348011111111'],
    ]);
  });

  it('detects a tab-separated file, and takes a delimiter when given', async () => {
    const tsv = join(dir, 'list.tsv');
    writeFileSync(tsv, 'name\tphone\nAda, L.\t2348012345678\n');
    expect(await readAll(pageReaderFor({ type: 'file', path: tsv }, context), 10)).toEqual([['2348012345678']]);
    const piped = join(dir, 'piped.csv');
    writeFileSync(piped, 'msisdn|name\n2348012345678|Ada\n');
    await expect(csvLayoutOfFile(piped, {})).resolves.toMatchObject({ delimiter: '|', phoneColumn: 'msisdn' });
    // A given delimiter wins over detection: here the header is then one column.
    await expect(csvLayoutOfFile(piped, { delimiter: ';' })).resolves.toMatchObject({
      delimiter: ';',
      phoneColumn: 'msisdn|name',
    });
  });

  it('reads a CSV from a URL the same way (delimiter, quotes, BOM)', async () => {
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/csv; charset=utf-8');
      res.end('\uFEFFname;phone\n"Ada\nL.";2348012345678\nBola;2348098765432\n');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/due`;
      const read = pageReaderFor({ type: 'url', url }, { ...context, downloads: new DownloadCache() });
      expect(await readAll(read, 10)).toEqual([['2348012345678', '2348098765432']]);
    } finally {
      server.close();
    }
  });

  it('reads local numbers in the default country, and refuses them without one', () => {
    const entries = ['08012345678', '+2348098765432', '0801 234 5679'];
    expect(classifyEntries(entries, new Set(), 0, 'NG')).toEqual({
      recipients: ['2348012345678', '2348098765432', '2348012345679'],
      positions: [0, 1, 2],
      invalid: [],
      duplicates: 0,
    });
    const refused = classifyEntries(entries, new Set(), 0);
    expect(refused.recipients).toEqual(['2348098765432']);
    expect(refused.invalid[0]).toEqual({
      index: 0,
      value: '*********78',
      reason: expect.stringContaining("a local number needs the campaign's default country"),
    });
  });

  it('reads NDJSON strings and objects', async () => {
    const path = join(dir, 'due.ndjson');
    writeFileSync(path, '"2348012345678"\n{"msisdn":"+2348098765432","name":"B"}\n{"name":"no number"}\n');
    const read = pageReaderFor({ type: 'file', path }, context);
    const [entries] = await readAll(read, 10);
    expect(entries).toEqual(['2348012345678', '+2348098765432', '{"name":"no number"}']);
  });

  it('reports a missing file as a non-retryable failure', async () => {
    await expect(
      pageReaderFor({ type: 'file', path: join(dir, 'missing.csv') }, context)(null, 10, signal),
    ).rejects.toMatchObject({
      type: 'AudienceUnavailable',
      nonRetryable: true,
    });
  });

  it('reports a folder as a non-retryable failure, in every format (opening it succeeds, reading it fails)', async () => {
    const folder = join(dir, 'a-folder');
    mkdirSync(folder);
    for (const format of ['csv', 'ndjson', 'txt'] as const) {
      await expect(
        pageReaderFor({ type: 'file', path: folder, format }, context)(null, 10, signal),
      ).rejects.toMatchObject({
        type: 'AudienceUnavailable',
        nonRetryable: true,
        message: expect.stringContaining('a folder, not a file (EISDIR)'),
      });
    }
  });
});

describe('de-duplication', () => {
  const path = join(dir, 'dups.txt');
  // 12 entries: 2 invalid, 3 repeats (one written differently), 7 unique valid numbers.
  writeFileSync(
    path,
    [
      '2348010000001',
      '2348010000002',
      'not a number',
      '+234 801 000 0001',
      '2348010000003',
      '2348010000004',
      '2348010000002',
      '12',
      '2348010000005',
      '2348010000006',
      '00234 8010000003',
      '2348010000007',
    ].join('\n'),
  );
  const source = { type: 'file' as const, path };

  async function pages(
    deduper: AudienceDeduper,
    limit: number,
    from: { cursor: string | null; index: number } = { cursor: null, index: 0 },
  ) {
    const read = pageReaderFor(source, context);
    const out = [];
    let { cursor, index } = from;
    do {
      const page = await deduper.page(
        'k',
        { cursor, firstIndex: index },
        { read, limit, signal, onProgress: () => {} },
      );
      out.push(page);
      cursor = page.nextCursor;
      index += page.entries;
    } while (cursor !== null);
    return out;
  }

  it('sends each number once, the first time it appears, and reports invalid entries by position', async () => {
    const result = await pages(new AudienceDeduper(), 4);
    expect(result.flatMap((p) => p.recipients)).toEqual([
      '2348010000001',
      '2348010000002',
      '2348010000003',
      '2348010000004',
      '2348010000005',
      '2348010000006',
      '2348010000007',
    ]);
    expect(result.reduce((n, p) => n + p.duplicates, 0)).toBe(3);
    expect(result.flatMap((p) => p.invalid)).toEqual([
      { index: 2, value: '[redacted, 12 chars]', reason: 'unknown number format' },
      { index: 7, value: '12', reason: expect.stringContaining('unknown number format') },
    ]);
  });

  it('rebuilds what it had seen when a worker without that memory reads a later page', async () => {
    let rebuilt = 0;
    const reading = { read: pageReaderFor(source, context), limit: 4, signal, onProgress: () => rebuilt++ };
    const first = await new AudienceDeduper().page('k', { cursor: null, firstIndex: 0 }, reading);
    // A fresh deduper (another worker, or this one after a crash) continues at the second page.
    const fresh = new AudienceDeduper();
    const second = await fresh.page('k', { cursor: first.nextCursor, firstIndex: 4 }, reading);
    expect(rebuilt).toBe(1);
    expect(second.recipients).toEqual(['2348010000003', '2348010000004']);
    expect(second.duplicates).toBe(1); // 2348010000002, seen on the first page
    // Retrying the same page (an activity retry) gives the same answer, not "all duplicates".
    const retried = await fresh.page('k', { cursor: first.nextCursor, firstIndex: 4 }, reading);
    expect(retried.recipients).toEqual(second.recipients);
  });

  it('starts from nothing seen on a first page, whatever an earlier read under the same key left', async () => {
    const deduper = new AudienceDeduper();
    const once = await pages(deduper, 4);
    const again = await pages(deduper, 4);
    expect(again.flatMap((p) => p.recipients)).toEqual(once.flatMap((p) => p.recipients));
  });

  it('counts the whole audience for pre-flight', async () => {
    const reading = { read: pageReaderFor(source, context), limit: 5, signal, onProgress: () => {} };
    expect(await scanAudience(reading)).toEqual({
      entries: 12,
      valid: 7,
      invalid: 2,
      duplicates: 3,
    });
  });
});

describe('loaders', () => {
  const rows = Array.from({ length: 7 }, (_, i) => ({
    id: i + 1,
    phone: `+23480100000${String(i + 1).padStart(2, '0')}`,
  }));
  const keyset: AudienceLoader = {
    async readPage({ cursor, limit, params }) {
      const after = cursor === null ? 0 : Number(cursor);
      const page = rows.filter((r) => r.id > after && r.id <= Number(params.upTo ?? 99)).slice(0, limit);
      const last = page.at(-1);
      return {
        recipients: page.map((r) => r.phone),
        nextCursor: page.length === limit && last ? String(last.id) : null,
      };
    },
  };

  it('pages through a registered loader with its params', async () => {
    const read = pageReaderFor(
      { type: 'loader', name: 'due', params: { upTo: 5 } },
      { ...context, loaders: { due: keyset } },
    );
    expect((await readAll(read, 2)).flat()).toHaveLength(5);
  });

  it('names the loaders it knows when asked for an unknown one', async () => {
    const read = pageReaderFor({ type: 'loader', name: 'nope' }, { ...context, loaders: { due: keyset } });
    await expect(read(null, 2, signal)).rejects.toMatchObject({
      type: 'AudienceUnavailable',
      message: expect.stringContaining('known: due'),
    });
  });

  it('refuses a loader that ignores the page size', async () => {
    const greedy: AudienceLoader = { readPage: async () => ({ recipients: ['1', '2', '3'], nextCursor: null }) };
    const read = pageReaderFor({ type: 'loader', name: 'greedy' }, { ...context, loaders: { greedy } });
    await expect(read(null, 2, signal)).rejects.toThrow(/returned 3 entries for a page of 2/);
  });
});

describe('URL sources', () => {
  let server: Server;
  let base: string;
  let downloads = 0;
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('downloads once per campaign, then pages from memory; a 404 is not retried', async () => {
    server = createServer((req, res) => {
      if (req.url === '/due.csv') {
        downloads += 1;
        res
          .writeHead(200, { 'content-type': 'text/csv' })
          .end('phone,name\n+2348010000001,A\n2348010000002,B\n2348010000003,C\n');
      } else res.writeHead(404).end();
    });
    await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

    const read = pageReaderFor({ type: 'url', url: `${base}/due.csv` }, { ...context, downloads: new DownloadCache() });
    expect(await readAll(read, 2)).toEqual([['+2348010000001', '2348010000002'], ['2348010000003']]);
    expect(downloads).toBe(1);
    await expect(
      pageReaderFor({ type: 'url', url: `${base}/missing.csv` }, context)(null, 2, signal),
    ).rejects.toMatchObject({
      type: 'AudienceUnavailable',
      nonRetryable: true,
      message: 'the audience URL answered 404',
    });
  });
});

describe('a loaders module (MSGFLOW_AUDIENCE_LOADERS)', () => {
  it('imports the loaders a module exports', async () => {
    const path = join(dir, 'loaders.mjs');
    writeFileSync(
      path,
      'export const audienceLoaders = { vip: { async readPage() { return { recipients: ["+2348010000009"], nextCursor: null }; } } };\n',
    );
    const loaders = await importAudienceLoaders(path);
    const read = pageReaderFor({ type: 'loader', name: 'vip' }, { ...context, loaders });
    expect(await read(null, 10, signal)).toEqual({ entries: ['+2348010000009'], nextCursor: null });
  });

  it('says what is wrong with a module that exports no loaders', async () => {
    const path = join(dir, 'empty.mjs');
    writeFileSync(path, 'export const other = 1;\n');
    await expect(importAudienceLoaders(path)).rejects.toThrow(/must export audienceLoaders/);
    const broken = join(dir, 'broken.mjs');
    writeFileSync(broken, 'export default { vip: {} };\n');
    await expect(importAudienceLoaders(broken)).rejects.toThrow(/"vip" .* has no readPage/);
  });
});

describe('file encodings', () => {
  const rows = 'name,phone\nAdé,2348012345678\nBola,2348098765432\n';
  const utf16be = (text: string) => Buffer.from(text, 'utf16le').swap16();

  it('reads UTF-16 CSV files with their byte order mark, little- or big-endian, page by page', async () => {
    for (const [name, bytes] of [
      ['le.csv', Buffer.from(`\uFEFF${rows}`, 'utf16le')],
      ['be.csv', utf16be(`\uFEFF${rows}`)],
    ] as const) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      expect(await readAll(pageReaderFor({ type: 'file', path }, context), 1)).toEqual([
        ['2348012345678'],
        ['2348098765432'],
      ]);
      const layout = await csvLayoutOfFile(path, {});
      expect((await readCsvFile(path, layout, layout.dataStart, 1)).records).toEqual([
        { name: 'Adé', phone: '2348012345678' },
      ]);
    }
  });

  it('reads a UTF-16 CSV from a URL, and refuses a Latin-1 one', async () => {
    let body = utf16be(`\uFEFF${rows}`);
    const server = createServer((_req, res) => {
      res.setHeader('content-type', 'text/csv');
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/due`;
      const read = () => pageReaderFor({ type: 'url', url }, { ...context, downloads: new DownloadCache() });
      expect(await readAll(read(), 10)).toEqual([['2348012345678', '2348098765432']]);
      body = Buffer.from(rows, 'latin1');
      await expect(readAll(read(), 10)).rejects.toMatchObject({
        type: 'AudienceFormatInvalid',
        message: expect.stringMatching(/save it as UTF-8/),
      });
    } finally {
      server.close();
    }
  });

  it('refuses other encodings with a non-retryable "save it as UTF-8", wherever the bad bytes are', async () => {
    const latin1 = join(dir, 'latin1.csv');
    writeFileSync(latin1, Buffer.from(rows, 'latin1'));
    const noMark = join(dir, 'nomark.csv');
    writeFileSync(noMark, Buffer.from(rows, 'utf16le'));
    const late = join(dir, 'late.csv');
    writeFileSync(
      late,
      Buffer.concat([Buffer.from(`phone\n${'2348012345678\n'.repeat(6000)}`), Buffer.from('Adé\n', 'latin1')]),
    );
    const utf16Text = join(dir, 'list.txt');
    writeFileSync(utf16Text, Buffer.from('\uFEFF2348012345678\n', 'utf16le'));
    const latin1Text = join(dir, 'latin1.txt');
    writeFileSync(latin1Text, Buffer.from(`${'2348012345678\n'.repeat(6000)}Adé\n`, 'latin1'));
    for (const path of [latin1, noMark, late, utf16Text, latin1Text]) {
      await expect(readAll(pageReaderFor({ type: 'file', path }, context), 10_000)).rejects.toMatchObject({
        type: 'AudienceFormatInvalid',
        nonRetryable: true,
        message: expect.stringMatching(/save it as UTF-8/),
      });
    }
  });
});
