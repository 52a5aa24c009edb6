/**
 * A campaign's audience names a file or URL its worker reads. With a worker's default access (its own data
 * folder, no URLs) a host file and a loopback service are refused with a reason, and the campaign's failure
 * and report echo nothing of them; with folders and hosts allowed, the same kinds of source are sent to.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AUDIENCE_ACCESS } from '../../src/audience/access.js';
import type { AudienceSource } from '../../src/api/campaign-io.js';
import type { RunningStack } from '../../src/stack.js';
import { startTestStack } from '../support/stack.js';

const SERVICE_ANSWER = 'internal-service-answer';

describe('audience sources', () => {
  let server: Server;
  let serviceUrl: string;
  let served = 0;
  const dir = mkdtempSync(join(tmpdir(), 'audience-access-e2e-'));
  const listFile = join(dir, 'list.txt');
  writeFileSync(listFile, '2348012345678\n2348012345679\n');

  beforeAll(async () => {
    server = createServer((_req, res) => {
      served += 1;
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`${SERVICE_ANSWER}\n2348012345670\n`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    serviceUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/list.txt`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function failureOf(stack: RunningStack, audience: AudienceSource) {
    const run = await stack.msgflow.startCampaign({ sender: 'ACME', message: 'hello', audience });
    const failure = await run.result().then(
      () => undefined,
      (error: unknown) => error as Error & { cause?: Error & { type?: string } },
    );
    return { failure, progress: await run.progress() };
  }

  describe("with a worker's default access", () => {
    let stack: RunningStack;
    beforeAll(async () => {
      stack = await startTestStack({ audienceAccess: DEFAULT_AUDIENCE_ACCESS });
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('refuses a file outside its folder and says nothing of it', { timeout: 60_000 }, async () => {
      const { failure, progress } = await failureOf(stack, { type: 'file', path: '/etc/passwd', format: 'txt' });
      expect(failure?.cause).toMatchObject({
        type: 'AudienceSourceRefused',
        message: expect.stringContaining('MSGFLOW_AUDIENCE_DIRS'),
      });
      const told = JSON.stringify({ failure: String(failure?.cause?.message), progress });
      expect(told).not.toMatch(/root|nologin|\/bin\//);
    });

    it('refuses a loopback URL before any request and says nothing of its answer', { timeout: 60_000 }, async () => {
      const { failure, progress } = await failureOf(stack, { type: 'url', url: serviceUrl });
      expect(failure?.cause).toMatchObject({
        type: 'AudienceSourceRefused',
        message: expect.stringContaining('https'),
      });
      expect(JSON.stringify({ failure: String(failure?.cause?.message), progress })).not.toContain(SERVICE_ANSWER);
      expect(served).toBe(0);
    });
  });

  describe('with a folder and a host allowed', () => {
    let stack: RunningStack;
    beforeAll(async () => {
      stack = await startTestStack({
        audienceAccess: { folders: [dir], urlHosts: ['127.0.0.1'], allowHttp: true, allowInternalAddresses: true },
      });
    });
    afterAll(async () => {
      await stack?.close();
    });

    it('sends to a file in the folder and a URL on the host', { timeout: 60_000 }, async () => {
      const fromFile = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'hello',
        audience: { type: 'file', path: listFile },
      });
      expect((await fromFile.result()).sent).toBe(2);
      const fromUrl = await stack.msgflow.startCampaign({
        sender: 'ACME',
        message: 'hello',
        audience: { type: 'url', url: serviceUrl },
      });
      const result = await fromUrl.result();
      expect(result.sent).toBe(1);
      expect(served).toBe(1);
      // The answer's first line is no number: reported by its row, masked.
      expect(result.invalid.recipients).toEqual([
        { index: 0, value: `[redacted, ${SERVICE_ANSWER.length} chars]`, reason: 'unknown number format' },
      ]);
    });
  });
});
