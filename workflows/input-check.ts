/**
 * Each workflow checks its first run's input before anything else: one started by type name (from another
 * language, or the dev worker's plain JSON) had no other check, and a bad input failed its workflow tasks
 * forever or reached the provider. The failure is final and names the field (`recipients: at most 50`).
 */
import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../src/definitions/failure-types.js';
import { describeProblem } from '../src/definitions/input-schema-check.js';
import { inputProblem, type WorkflowInputType } from '../src/definitions/workflow-inputs.js';

/** Runs recorded before the check replay without it. */
const INPUT_CHECK_PATCH = 'input-checked';

/** Fails the workflow, not retryably, when `input` is not a good `type` input. A continued run is not checked again. */
export function checkFirstInput(type: WorkflowInputType, input: unknown): void {
  if (workflowInfo().continuedFromExecutionRunId !== undefined) return;
  if (!patched(INPUT_CHECK_PATCH)) return;
  const found = inputProblem(type, input);
  if (found) throw ApplicationFailure.nonRetryable(describeProblem(found), FAILURE_TYPES.invalidInput);
}
