/**
 * Every workflow the worker registers, each with its versioning behaviour as src/definitions/versioning.ts
 * declares it (and why). Deterministic code only: nothing imported here does I/O.
 */
import { setWorkflowOptions, type Workflow } from '@temporalio/workflow';
import { type MsgflowWorkflowType, WORKFLOW_VERSIONING } from '../src/definitions/versioning.js';
import { awaitMessage } from './await-message.js';
import { sendSms } from './send-sms.js';
import { smsCampaign } from './campaign.js';
import { checkContacts } from './contacts.js';
import { otpVerification } from './otp.js';
import { voiceCall } from './voice.js';
import { followVoiceCall } from './voice-follow.js';

// `satisfies`: a workflow added here without its versioning entry, or an entry without its workflow, fails to
// compile.
const WORKFLOWS = {
  awaitMessage,
  sendSms,
  smsCampaign,
  checkContacts,
  otpVerification,
  voiceCall,
  followVoiceCall,
} satisfies Record<MsgflowWorkflowType, Workflow>;

for (const [type, workflow] of Object.entries(WORKFLOWS) as Array<[MsgflowWorkflowType, Workflow]>)
  setWorkflowOptions({ versioningBehavior: WORKFLOW_VERSIONING[type].behavior }, workflow);

export { awaitMessage, sendSms, smsCampaign, checkContacts, otpVerification, voiceCall, followVoiceCall };
