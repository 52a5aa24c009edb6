/**
 * Each workflow checks its first run's input before anything else: one started by type name (from another
 * language, or the dev worker's plain JSON) had no other check, and a bad input failed its workflow tasks
 * forever or reached the provider. The failure is final and names the field (`recipients: at most 50`).
 */
import { ApplicationFailure, patched, workflowInfo } from '@temporalio/workflow';
import { FAILURE_TYPES } from '../src/definitions/failure-types.js';
import { describeProblem, type Shape } from '../src/definitions/input-shapes.js';

/** Runs recorded before the check replay without it. */
const INPUT_CHECK_PATCH = 'input-checked';

/** Fails the workflow, not retryably, when `input` does not have `shape`. A continued run is not checked again. */
export function checkFirstInput(shape: Shape, input: unknown): void {
  if (workflowInfo().continuedFromExecutionRunId !== undefined) return;
  if (!patched(INPUT_CHECK_PATCH)) return;
  const found = shape(input, '');
  if (found) throw ApplicationFailure.nonRetryable(describeProblem(found), FAILURE_TYPES.invalidInput);
}
