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

export function requireNonNegativeInteger(value: number | undefined, name: string): void {
  if (value !== undefined && !(Number.isInteger(value) && value >= 0)) {
    throw new InvalidInputError(`Invalid ${name}: must be a non-negative integer`, [{ path: name, message: 'must be a non-negative integer' }]);
  }
}
