/** Inputs from backend services are checked with the schemas of src/api before anything reaches Temporal. */
import type { z } from 'zod';
import { detailsOf, type ErrorDetail } from '../api/errors.js';

export class InvalidWorkflowInputError extends Error {
  override name = 'InvalidWorkflowInputError';
  constructor(
    message: string,
    readonly details: ErrorDetail[],
  ) {
    super(`${message}: ${details.map((d) => `${d.path || '(input)'} ${d.message}`).join('; ')}`);
  }
}

/** The parsed input, or an InvalidWorkflowInputError naming `what` and every problem found. */
export function validate<T extends z.ZodType>(schema: T, input: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(input);
  if (!result.success) throw new InvalidWorkflowInputError(what, detailsOf(result.error));
  return result.data;
}
