/**
 * The input of every workflow other languages start by type name, as the one zod schema that defines it.
 * `npm run schemas` writes each as a JSON Schema (schemas/workflow-inputs/<type>.json, for other languages)
 * and as the data the workflows check their first input with (src/definitions/workflow-input-schemas.ts);
 * test/unit/workflow-input-schemas.test.ts fails when either is stale.
 */
import { z } from 'zod';
import { CampaignInput } from './campaign-io.js';
import type { WorkflowInputType } from './input-rules.js';
import { CheckContactsInput, FollowVoiceCallInput, OtpVerificationInput, VoiceCallInput } from './otp-io.js';
import { AwaitMessageInput, SendSmsInput } from './workflow-io.js';

export const WORKFLOW_INPUTS: Record<WorkflowInputType, z.ZodType> = {
  sendSms: SendSmsInput,
  awaitMessage: AwaitMessageInput,
  smsCampaign: CampaignInput,
  otpVerification: OtpVerificationInput,
  voiceCall: VoiceCallInput,
  followVoiceCall: FollowVoiceCallInput,
  checkContacts: CheckContactsInput,
};

type JsonObject = Record<string, unknown>;

/**
 * The JSON Schema (2020-12) of a workflow's input, as JSON input (defaults make fields optional). A pattern
 * carries its zod message in `patternMessage`, msgflow's own keyword (validators ignore it), so the workflows'
 * check tells what zod would. Checks JSON Schema cannot state (a number's validity, a known time zone, the
 * rules of input-rules.ts) are left out: the workflows and their activities still apply them.
 */
export function workflowInputJsonSchema(type: WorkflowInputType): JsonObject {
  const schema = z.toJSONSchema(WORKFLOW_INPUTS[type], {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'throw',
    reused: 'inline',
    override: ({ zodSchema, jsonSchema }) => addPatternMessages(zodSchema, jsonSchema as JsonObject),
  });
  return {
    $schema: schema.$schema,
    title: `${type} input`,
    description:
      `The input of msgflow's \`${type}\` workflow, started by type name. The workflow checks it again when it ` +
      'starts, with rules across fields this schema cannot state, and fails with type InvalidInput naming the field.',
    ...schema,
  };
}

/** The custom message of each regex check, beside the pattern it became (in `allOf` when there are several). */
function addPatternMessages(zodSchema: z.core.$ZodType, jsonSchema: JsonObject): void {
  const messages = new Map<string, string>();
  for (const check of zodSchema._zod.def.checks ?? []) {
    const def = check._zod.def as { format?: string; pattern?: RegExp; error?: () => unknown };
    const message = def.format === 'regex' ? def.error?.() : undefined;
    if (def.pattern && typeof message === 'string') messages.set(def.pattern.source, message);
  }
  for (const part of [jsonSchema, ...((jsonSchema.allOf as JsonObject[] | undefined) ?? [])]) {
    const message = typeof part.pattern === 'string' ? messages.get(part.pattern) : undefined;
    if (message !== undefined) part.patternMessage = message;
  }
}
