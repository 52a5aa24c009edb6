/**
 * The workflows' own input check (the JSON Schema generated from each input's zod schema, then the rules of
 * src/api/input-rules.ts, all without zod) gives the zod schema's verdict on every sample; where only
 * libphonenumber or Intl can tell (a well-shaped number that is not a real one, an unknown time zone), the
 * check lets it through and the activities refuse it.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { CampaignInput } from '../../src/api/campaign-io.js';
import {
  CheckContactsInput,
  FollowVoiceCallInput,
  OtpVerificationInput,
  VoiceCallInput,
} from '../../src/api/otp-io.js';
import { AwaitMessageInput, SendSmsInput } from '../../src/api/workflow-io.js';
import { describeProblem } from '../../src/definitions/input-schema-check.js';
import { inputProblem, type WorkflowInputType } from '../../src/definitions/workflow-inputs.js';

const number = '2348012345678';
const many = (n: number) => Array.from({ length: n }, (_, i) => `23480123${String(i).padStart(5, '0')}`);
const garbage: unknown[] = ['garbage', null, 42, [], true];

function sameVerdict(schema: z.ZodType, type: WorkflowInputType, samples: unknown[]) {
  for (const sample of samples) {
    const found = inputProblem(type, sample);
    expect(found === undefined, `${JSON.stringify(sample)?.slice(0, 200)} → ${found && describeProblem(found)}`).toBe(
      schema.safeParse(sample).success,
    );
  }
}

const sms = { recipients: [number], sender: 'ACME', message: 'Hello' };

describe('workflow input check', () => {
  it('sendSms: the same verdict as SendSmsInput', () => {
    sameVerdict(SendSmsInput, 'sendSms', [
      sms,
      { ...sms, recipients: many(50) },
      { ...sms, recipients: many(51) },
      { ...sms, recipients: [] },
      { ...sms, recipients: ['not a number'] },
      { ...sms, recipients: [Number(number)] },
      { ...sms, recipients: `${number}` },
      { ...sms, sender: 'TOO LONG SENDER' },
      { ...sms, sender: '' },
      { ...sms, message: '' },
      { ...sms, message: 'x'.repeat(1530) },
      { ...sms, message: 'x'.repeat(1531) },
      { ...sms, waitWindowMs: 1000 },
      { ...sms, waitWindowMs: 0 },
      { ...sms, waitWindowMs: 1.5 },
      { ...sms, waitWindowMs: null },
      { ...sms, extra: 1 },
      { recipients: [number], sender: 'ACME' },
      {},
      ...garbage,
    ]);
  });

  it('names the field and the rule', () => {
    const problem = (input: unknown) => describeProblem(inputProblem('sendSms', input)!);
    expect(problem({ ...sms, recipients: many(60) })).toBe('recipients: at most 50');
    expect(problem({ ...sms, recipients: ['not a number'] })).toMatch(/^recipients\[0\]: not a phone number/);
    expect(problem('garbage')).toBe('input: must be an object');
    expect(problem({ sender: 'ACME', message: 'Hi' })).toBe('recipients: is required');
    expect(problem({ ...sms, colour: 'red' })).toBe('colour: is not a known field');
  });

  it('leaves a well-shaped number that is not a real one to the activity', () => {
    const shaped = { ...sms, recipients: ['1234567'] };
    expect(inputProblem('sendSms', shaped)).toBeUndefined();
    expect(SendSmsInput.safeParse(shaped).success).toBe(false);
  });

  it('otpVerification: the same verdict as OtpVerificationInput', () => {
    const otp = { purpose: 'login', recipient: number };
    sameVerdict(OtpVerificationInput, 'otpVerification', [
      otp,
      { ...otp, purpose: 'Login' },
      { ...otp, recipient: 'abc' },
      { ...otp, template: 'Code {code}' },
      { ...otp, template: 'No placeholder' },
      { ...otp, length: 3 },
      { ...otp, ttlSeconds: 3601 },
      { ...otp, channels: ['sms', 'voice'] },
      { ...otp, channels: ['voice'] },
      { ...otp, channels: ['sms', 'sms'] },
      { ...otp, channels: [] },
      { ...otp, lockoutSeconds: 0 },
      { ...otp, extra: true },
      { purpose: 'login' },
      ...garbage,
    ]);
  });

  it('voiceCall: the same verdict as VoiceCallInput', () => {
    const call = { recipient: number, message: 'Your code is 1 2 3' };
    sameVerdict(VoiceCallInput, 'voiceCall', [
      call,
      { ...call, language: 'fr-FR', repeat: 3, deadlineMs: 60_000 },
      { ...call, language: 'french' },
      { ...call, repeat: 4 },
      { ...call, deadlineMs: 24 * 60 * 60 * 1000 + 1 },
      { ...call, message: '' },
      { recipient: number },
      ...garbage,
    ]);
  });

  it('followVoiceCall: the same verdict as FollowVoiceCallInput', () => {
    sameVerdict(FollowVoiceCallInput, 'followVoiceCall', [
      { callId: 'call_1' },
      { callId: 'call_1', deadlineMs: 60_000 },
      { callId: '' },
      { callId: 'x'.repeat(201) },
      { callId: 'call_1', deadlineMs: 0 },
      { callId: 'call_1', extra: true },
      {},
      ...garbage,
    ]);
  });

  it('checkContacts: the same verdict as CheckContactsInput', () => {
    sameVerdict(CheckContactsInput, 'checkContacts', [
      { numbers: [number] },
      { emails: ['a@example.com'] },
      { numbers: [], emails: [] },
      {},
      { numbers: ['12'] },
      { numbers: many(600), emails: Array.from({ length: 401 }, (_, i) => `p${i}@example.com`) },
      { numbers: [number], concurrency: 51 },
      { numbers: number },
      ...garbage,
    ]);
  });

  it('awaitMessage: the same verdict as AwaitMessageInput', () => {
    sameVerdict(AwaitMessageInput, 'awaitMessage', [
      { providerMessageId: 'msg_1' },
      { providerMessageId: 'msg_1', waitWindowMs: 60_000 },
      { providerMessageId: '' },
      { providerMessageId: 'msg_1', waitWindowMs: 0 },
      { providerMessageId: 'msg_1', extra: 1 },
      {},
      ...garbage,
    ]);
  });

  it('names the field of a rule across fields, as zod does, with the same message', () => {
    const campaign = { sender: 'ACME', message: 'Hi', audience: { type: 'inline', recipients: [number] } };
    const window = { start: '08:00', end: '08:00', timeZone: 'Africa/Lagos' };
    const cases: Array<[WorkflowInputType, z.ZodType, unknown, string]> = [
      ['smsCampaign', CampaignInput, { ...campaign, chunkSize: 100, maxOutstanding: 99 }, 'maxOutstanding'],
      ['smsCampaign', CampaignInput, { ...campaign, maxCost: 500, preflight: false }, 'maxCost'],
      ['smsCampaign', CampaignInput, { ...campaign, message: 'Hi {name}' }, 'message'],
      ['smsCampaign', CampaignInput, { ...campaign, message: 'Hi {name' }, 'message'],
      ['smsCampaign', CampaignInput, { ...campaign, sendWindow: window }, 'sendWindow.end'],
      [
        'otpVerification',
        OtpVerificationInput,
        { purpose: 'login', recipient: number, channels: ['voice'] },
        'channels',
      ],
      ['checkContacts', CheckContactsInput, {}, ''],
    ];
    for (const [type, schema, input, path] of cases) {
      const found = inputProblem(type, input);
      const issues = schema.safeParse(input).error?.issues ?? [];
      expect(found, JSON.stringify(input)).toEqual({ path, message: issues[0]?.message });
      expect(issues.map((i) => i.path.join('.'))).toEqual([path]);
    }
    expect(describeProblem(inputProblem('smsCampaign', cases[0]![2])!)).toBe(
      'maxOutstanding: must be at least chunkSize',
    );
  });

  it('smsCampaign: the same verdict as CampaignInput', () => {
    const campaign = { sender: 'ACME', message: 'Hi', audience: { type: 'inline', recipients: [number] } };
    const file = { type: 'file', path: '/data/customers.csv' };
    const window = { start: '08:00', end: '20:00', timeZone: 'Africa/Lagos' };
    sameVerdict(CampaignInput, 'smsCampaign', [
      campaign,
      { ...campaign, audience: { type: 'inline', recipients: [] } },
      { ...campaign, audience: { type: 'inline', recipients: ['x'.repeat(65)] } },
      { ...campaign, audience: { type: 'carrier pigeon' } },
      { ...campaign, audience: file },
      { ...campaign, audience: { ...file, path: 'relative.csv' } },
      { ...campaign, audience: { ...file, delimiter: ';;' } },
      { ...campaign, audience: { type: 'url', url: 'https://example.com/a.csv', format: 'csv' } },
      { ...campaign, audience: { type: 'url', url: 'ftp://example.com/a.csv' } },
      { ...campaign, audience: { type: 'loader', name: 'crm', params: { segment: 'vip' } } },
      { ...campaign, audience: { type: 'loader', name: '1crm' } },
      { ...campaign, message: 'Hi {name}' },
      { ...campaign, message: 'Hi {name}', audience: file },
      { ...campaign, message: 'Hi {name', audience: file },
      { ...campaign, sendWindow: window },
      { ...campaign, sendWindow: { ...window, end: '08:00' } },
      { ...campaign, sendWindow: { ...window, start: '25:00' } },
      { ...campaign, sendWindow: { ...window, timeZoneField: 'tz' } },
      { ...campaign, sendWindow: { ...window, timeZone: 'recipient' } },
      { ...campaign, audience: file, sendWindow: { ...window, timeZone: 'recipient', timeZoneField: 'tz' } },
      { ...campaign, chunkSize: 1001 },
      { ...campaign, chunkSize: 100, maxOutstanding: 99 },
      { ...campaign, maxOutstanding: 9000, maxEventsPerRun: 5000 },
      { ...campaign, maxOutstanding: 10_001 },
      { ...campaign, preflight: 'yes' },
      { ...campaign, maxCost: 500 },
      { ...campaign, maxCost: -1 },
      { ...campaign, maxCost: 2.5 },
      { ...campaign, maxCost: 500, preflight: false },
      { ...campaign, defaultCountry: 'ng' },
      { ...campaign, defaultCountry: 'NG' },
      { ...campaign, team: 'clinic' },
      { ...campaign, team: 'a b' },
      { ...campaign, team: 'x'.repeat(65) },
      { ...campaign, team: 3 },
      { sender: 'ACME', message: 'Hi' },
      ...garbage,
    ]);
  });
});
