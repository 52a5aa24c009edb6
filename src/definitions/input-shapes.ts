/**
 * A small structural validator without zod, for workflow code: types, lengths, counts, patterns and the
 * fields an object may have. The zod schemas of src/api stay the contract; test/unit/workflow-input-shapes.test.ts
 * feeds both the same inputs and requires the same verdict. What needs libphonenumber or Intl (is this number
 * valid, is this time zone known) is left to the activities, which refuse it non-retryably.
 */

/** One problem: the field's path (`recipients[0]`, `audience.type`; empty for the input itself) and what is wrong. */
export interface InputProblem {
  path: string;
  message: string;
}

/** Checks a value at a path; returns its first problem, or undefined. */
export type Shape = (value: unknown, path: string) => InputProblem | undefined;

const problem = (path: string, message: string): InputProblem => ({ path, message });
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

export function text(rule: { min?: number; max?: number; pattern?: RegExp; hint?: string } = {}): Shape {
  const { min = 0, max = Infinity, pattern, hint } = rule;
  return (value, path) => {
    if (typeof value !== 'string') return problem(path, 'must be a string');
    if (value.length < min) return problem(path, min === 1 ? 'must not be empty' : `at least ${min} characters`);
    if (value.length > max) return problem(path, `at most ${max} characters`);
    if (pattern && !pattern.test(value)) return problem(path, hint ?? `must match ${String(pattern)}`);
    return undefined;
  };
}

export function integer(rule: { min?: number; max?: number } = {}): Shape {
  const { min = -Infinity, max = Infinity } = rule;
  return (value, path) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) return problem(path, 'must be an integer');
    if (value < min) return problem(path, `at least ${min}`);
    if (value > max) return problem(path, `at most ${max}`);
    return undefined;
  };
}

export const boolean: Shape = (value, path) =>
  typeof value === 'boolean' ? undefined : problem(path, 'must be true or false');

export function oneOf(values: readonly string[]): Shape {
  return (value, path) =>
    typeof value === 'string' && values.includes(value)
      ? undefined
      : problem(path, `must be one of ${values.join(', ')}`);
}

export function list(item: Shape, rule: { min?: number; max?: number } = {}): Shape {
  const { min = 0, max = Infinity } = rule;
  return (value, path) => {
    if (!Array.isArray(value)) return problem(path, 'must be a list');
    if (value.length < min) return problem(path, min === 1 ? 'must not be empty' : `at least ${min}`);
    if (value.length > max) return problem(path, `at most ${max}`);
    for (let i = 0; i < value.length; i++) {
      const found = item(value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return undefined;
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Any JSON object (a loader's parameters). */
export const anyObject: Shape = (value, path) =>
  isPlainObject(value) ? undefined : problem(path, 'must be an object');

/** A field that may be left out (`undefined`). */
export interface Optional {
  optional: Shape;
}
export const optional = (shape: Shape): Optional => ({ optional: shape });

/** An object with exactly these fields (the required ones present, no others), then its cross-field rules. */
export function fields(
  spec: Record<string, Shape | Optional>,
  ...rules: Array<(value: Record<string, unknown>) => InputProblem | undefined>
): Shape {
  return (value, path) => {
    if (!isPlainObject(value)) return problem(path, 'must be an object');
    for (const [key, field] of Object.entries(spec)) {
      const at = join(path, key);
      const present = value[key] !== undefined;
      if (typeof field === 'function') {
        const found = present ? field(value[key], at) : problem(at, 'is required');
        if (found) return found;
      } else if (present) {
        const found = field.optional(value[key], at);
        if (found) return found;
      }
    }
    const unknown = Object.keys(value).find((key) => !(key in spec));
    if (unknown !== undefined) return problem(join(path, unknown), 'is not a known field');
    for (const rule of rules) {
      const found = rule(value);
      if (found) return { path: join(path, found.path), message: found.message };
    }
    return undefined;
  };
}

/** One of several object shapes, chosen by the string in field `tag`. */
export function tagged(tag: string, shapes: Record<string, Shape>): Shape {
  return (value, path) => {
    if (!isPlainObject(value)) return problem(path, 'must be an object');
    const kind = value[tag];
    const shape = typeof kind === 'string' && Object.hasOwn(shapes, kind) ? shapes[kind] : undefined;
    if (!shape) return problem(join(path, tag), `must be one of ${Object.keys(shapes).join(', ')}`);
    return shape(value, path);
  };
}

/** A shape with an extra rule on its value once the shape holds. */
export function refined(shape: Shape, rule: (value: never) => boolean, message: string): Shape {
  return (value, path) => shape(value, path) ?? (rule(value as never) ? undefined : problem(path, message));
}

/** The first problem of `value` as one line, `recipients[0]: must be …` (`input: …` for the input itself). */
export function describeProblem(found: InputProblem): string {
  return `${found.path || 'input'}: ${found.message}`;
}
