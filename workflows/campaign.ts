/**
 * `smsCampaign`: one text to an audience of any size. Pre-flight (validate, de-duplicate, estimate the cost,
 * check the balance), then chunks of up to 1000 recipients, a few in flight at once, each sent once by its
 * deterministic idempotency key on the rate-limited provider queue. The sending activity records each chunk's
 * messages in the message store; the ingress signals their outcomes back, many per signal. A sliding window
 * bounds the messages awaiting an outcome, and the run continues as new before its history grows past a few
 * thousand events, so state and histories stay bounded at any size. No workflow is started per message.
 *
 * The rules of each step live in campaign-run.ts (the run's methods) and campaign-state.ts (`nextStep`, the
 * order in which they apply); this function is the story.
 */
import type { CampaignInput, CampaignResult } from '../src/api/campaign-io.js';
import { tagForOperators } from './campaign-operators.js';
import { CampaignRun } from './campaign-run.js';
import { type CampaignState, nextStep } from './campaign-state.js';
import { checkFirstInput } from './input-check.js';
import { keepInputForRetry } from './campaign-steps.js';

export { CAMPAIGN_FAILURES } from './campaign-steps.js';

export async function smsCampaign(input: CampaignInput, carried?: CampaignState): Promise<CampaignResult> {
  checkFirstInput('smsCampaign', input);
  const run = new CampaignRun(input, carried);
  run.answerSignalsQueriesAndUpdates();
  if (run.state.runs === 1) {
    tagForOperators(input);
    await keepInputForRetry(input);
  }
  if (!run.state.preflightDone) await run.preflight();

  // Send while there is room and the window is open, settle what is overdue, drain; then finish, or hand over
  // to a new run before the history grows too long.
  for (;;) {
    const step = nextStep(run);
    switch (step.kind) {
      case 'continue-as-new':
        return await run.continueAsNew();
      case 'finish':
        return await run.finish();
      case 'sends-before-continuing':
        await run.sendsAnswered();
        break;
      case 'settle-overdue':
        await run.settleOverdue(step.ids);
        break;
      case 'sends-before-failure':
        await run.waitFor(() => run.sendsInFlight() === 0);
        break;
      case 'act-on-failure':
        run.actOnFailure();
        break;
      case 'drain':
        await run.drain();
        break;
      case 'paused':
        await run.whilePaused();
        break;
      case 'outside-window':
        await run.untilWindowOpens(step.opensAt, step.perChunk);
        break;
      case 'read-ahead':
        await run.readPage();
        break;
      case 'wait-for-room':
        await run.untilRoom(step.throttled);
        break;
      case 'send':
        await run.sendNextChunk();
        break;
    }
  }
}
