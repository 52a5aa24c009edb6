/**
 * The check each workflow gives its first input (a workflow started by type name from another language gets
 * no other): the JSON Schema generated from the input's zod schema, then the rules that schema cannot state
 * (src/api/input-rules.ts), both without zod. Whether a number is a real one, or a time zone a known one, is
 * the activities' check (it needs libphonenumber or Intl).
 */
import {
  firstRuleProblem,
  type InputProblem,
  type WorkflowInputType,
  WORKFLOW_INPUT_RULES,
} from '../api/input-rules.js';
import { schemaProblem } from './input-schema-check.js';
import { WORKFLOW_INPUT_SCHEMAS } from './workflow-input-schemas.js';

export type { WorkflowInputType } from '../api/input-rules.js';

/** The first problem of a workflow's input (its shape first, then its rules), or undefined when it is good. */
export function inputProblem(type: WorkflowInputType, input: unknown): InputProblem | undefined {
  const rules: readonly ((value: never) => InputProblem | undefined)[] = WORKFLOW_INPUT_RULES[type];
  return schemaProblem(WORKFLOW_INPUT_SCHEMAS[type], input) ?? firstRuleProblem(rules, input as never);
}
