/** GET /v1/openapi.json and /healthz without auth; every operation of the route table is mounted. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';
import { buildPath, type Route, routes } from '../../src/api/routes.js';
import { startTestSandbox, type TestSandbox } from '../support/sandbox.js';
import { apiFor } from './helpers.js';

describe('OpenAPI and health', () => {
  let t: TestSandbox;
  beforeAll(async () => {
    t = await startTestSandbox();
  });
  afterAll(() => t.close());

  it('serves the generated OpenAPI document without auth', async () => {
    const reply = await apiFor(t.sandbox.baseUrl)('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual(JSON.parse(JSON.stringify(openApiDocument('/v1'))));
    expect(reply.body.openapi).toBe('3.1.0');
    for (const route of Object.values(routes) as Route[]) {
      expect(reply.body.paths[route.path]?.[route.method.toLowerCase()], `${route.method} ${route.path}`).toBeDefined();
    }
  });

  it('GET /healthz answers 200 without auth', async () => {
    const reply = await apiFor(t.sandbox.url)('GET', '/healthz');
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: 'ok' });
  });

  it('mounts every operation of the route table with its success status', async () => {
    const { token } = await t.newAccount();
    const api = apiFor(t.sandbox.baseUrl, token);
    const webhook = (await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/x' })).body.data.id;
    const sent = (await api('POST', '/sms/send', { recipients: ['12025550100'], sender: 'ACME', message: 'hi' })).body
      .data;
    const call = (await api('POST', '/voice/send', { recipient: '12025550100', message: 'hi' })).body.data.id;
    const lookup = (await api('POST', '/lookup', { number: '12025550100' })).body.data.id;
    const otp = (await api('POST', '/otp/send', { recipient: '12025550100' })).body.data.otp_id;
    const requests: Record<keyof typeof routes, [Record<string, string>, unknown]> = {
      smsSend: [{}, { recipients: ['12025550100'], sender: 'ACME', message: 'hi' }],
      otpSend: [{}, { recipient: '12025550100' }],
      otpVerify: [{}, { otp_id: otp, code: '0000' }],
      voiceSend: [{}, { recipient: '12025550100', message: 'hi' }],
      voiceGet: [{ id: call }, undefined],
      lookupCreate: [{}, { number: '12025550100' }],
      lookupList: [{}, undefined],
      lookupGet: [{ id: lookup }, undefined],
      emailVerify: [{}, { email: 'a@example.com' }],
      messageList: [{}, undefined],
      messageGet: [{ id: sent.messages[0].provider_message_id }, undefined],
      campaignList: [{}, undefined],
      campaignGet: [{ id: sent.campaign_id }, undefined],
      balanceGet: [{}, undefined],
      pricingGet: [{}, undefined],
      webhookCreate: [{}, { url: 'http://127.0.0.1:9/y' }],
      webhookList: [{}, undefined],
      webhookGet: [{ id: webhook }, undefined],
      webhookUpdate: [{ id: webhook }, { batch: true }],
      webhookDelete: [{ id: webhook }, undefined],
    };
    for (const [name, route] of Object.entries(routes) as [keyof typeof routes, Route][]) {
      const [params, body] = requests[name];
      const reply = await api(route.method, buildPath(route.path, params), body);
      expect(reply.status, name).toBe(route.status);
      if (route.status !== 204) expect(reply.body, name).toHaveProperty('data');
    }
  });
});
