/** Client-side input checks: a failure is an InvalidInputError naming each field, and nothing is sent. */
import type { z } from 'zod';
import { detailsOf } from '../api/errors.js';
import { InvalidInputError } from './errors.js';

export function validate<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = detailsOf(parsed.error);
  const summary = details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; ');
  throw new InvalidInputError(`Invalid ${what}: ${summary}`, details);
}

/** Numeric options: integers from `min` up (0 for counts and delays, 1 for timeouts). */
export function requireInteger(value: number | undefined, name: string, min = 0): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= min)) {
    const rule = `must be an integer of at least ${min}`;
    throw new InvalidInputError(`Invalid ${name}: ${rule}`, [{ path: name, message: rule }]);
  }
}
