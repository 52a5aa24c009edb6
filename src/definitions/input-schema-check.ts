/**
 * Checks a value against one of the JSON Schemas generated from the workflow inputs' zod schemas, without zod
 * (workflow code may not import it): the keywords those schemas use, each named in SCHEMA_KEYWORDS, with the
 * first problem named by its field. A test fails when a generated schema uses a keyword not named there.
 * What needs libphonenumber or Intl (is this number real, is this time zone known) is not in the schemas:
 * the activities refuse it, non-retryably.
 */
import type { InputProblem } from '../api/input-rules.js';

/** The part of JSON Schema (2020-12) the generated input schemas use. */
export interface JsonSchema {
  $schema?: string;
  title?: string;
  description?: string;
  default?: unknown;
  example?: unknown;
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  properties?: Record<string, JsonSchema>;
  required?: readonly string[];
  additionalProperties?: boolean | JsonSchema;
  propertyNames?: JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  /** msgflow's own keyword: what a value that misses `pattern` is told (the zod schema's message). */
  patternMessage?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  enum?: readonly unknown[];
  const?: unknown;
  anyOf?: readonly JsonSchema[];
  oneOf?: readonly JsonSchema[];
  allOf?: readonly JsonSchema[];
}

/** Every keyword the check understands, and the annotations it may ignore. */
export const SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  ...[
    'type',
    'properties',
    'required',
    'additionalProperties',
    'propertyNames',
    'items',
    'minItems',
    'maxItems',
    'minLength',
    'maxLength',
    'pattern',
    'patternMessage',
    'minimum',
    'maximum',
    'exclusiveMinimum',
    'enum',
    'const',
    'anyOf',
    'oneOf',
    'allOf',
  ],
  ...['$schema', '$id', 'title', 'description', 'default', 'example', 'examples', 'format'],
]);

const problem = (path: string, message: string): InputProblem => ({ path, message });
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const oneOfThese = (values: readonly unknown[]) => `must be one of ${values.map(String).join(', ')}`;

/** The first problem of `value` at `path` (empty for the input itself), or undefined when it has the schema. */
export function schemaProblem(schema: JsonSchema, value: unknown, path = ''): InputProblem | undefined {
  const choices = schema.oneOf ?? schema.anyOf;
  if (choices) return choiceProblem(choices, value, path);
  if (schema.const !== undefined && value !== schema.const) return problem(path, oneOfThese([schema.const]));
  if (schema.enum && !schema.enum.includes(value)) return problem(path, oneOfThese(schema.enum));
  const found = typeProblem(schema, value, path);
  if (found) return found;
  for (const part of schema.allOf ?? []) {
    const inPart = schemaProblem(part, value, path);
    if (inPart) return inPart;
  }
  return undefined;
}

function typeProblem(schema: JsonSchema, value: unknown, path: string): InputProblem | undefined {
  switch (schema.type) {
    case 'object':
      return objectProblem(schema, value, path);
    case 'array':
      return arrayProblem(schema, value, path);
    case 'string':
      return stringProblem(schema, value, path);
    case 'integer':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) return problem(path, 'must be an integer');
      return rangeProblem(schema, value, path);
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) return problem(path, 'must be a number');
      return rangeProblem(schema, value, path);
    case 'boolean':
      return typeof value === 'boolean' ? undefined : problem(path, 'must be true or false');
    case undefined:
      return schema.pattern === undefined || typeof value !== 'string' ? undefined : stringProblem(schema, value, path);
  }
}

function objectProblem(schema: JsonSchema, value: unknown, path: string): InputProblem | undefined {
  if (!isPlainObject(value)) return problem(path, 'must be an object');
  const properties = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  for (const [key, field] of Object.entries(properties)) {
    const at = join(path, key);
    if (value[key] !== undefined) {
      const found = schemaProblem(field, value[key], at);
      if (found) return found;
    } else if (required.has(key)) return problem(at, 'is required');
  }
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(properties, key)) continue;
    const extra = schema.additionalProperties;
    if (extra === false) return problem(join(path, key), 'is not a known field');
    if (typeof extra === 'object') {
      const found = schemaProblem(extra, value[key], join(path, key));
      if (found) return found;
    }
  }
  return undefined;
}

function arrayProblem(schema: JsonSchema, value: unknown, path: string): InputProblem | undefined {
  if (!Array.isArray(value)) return problem(path, 'must be a list');
  const { minItems = 0, maxItems = Infinity } = schema;
  if (value.length < minItems) return problem(path, minItems === 1 ? 'must not be empty' : `at least ${minItems}`);
  if (value.length > maxItems) return problem(path, `at most ${maxItems}`);
  if (schema.items)
    for (let i = 0; i < value.length; i++) {
      const found = schemaProblem(schema.items, value[i], `${path}[${i}]`);
      if (found) return found;
    }
  return undefined;
}

/** Patterns compiled once per worker, not once per workflow start. */
const compiled = new Map<string, RegExp>();
const regexOf = (pattern: string) => compiled.get(pattern) ?? compiled.set(pattern, new RegExp(pattern)).get(pattern)!;

function stringProblem(schema: JsonSchema, value: unknown, path: string): InputProblem | undefined {
  if (typeof value !== 'string') return problem(path, 'must be a string');
  const { minLength = 0, maxLength = Infinity, pattern } = schema;
  if (value.length < minLength)
    return problem(path, minLength === 1 ? 'must not be empty' : `at least ${minLength} characters`);
  if (value.length > maxLength) return problem(path, `at most ${maxLength} characters`);
  if (pattern !== undefined && !regexOf(pattern).test(value))
    return problem(path, schema.patternMessage ?? `must match ${pattern}`);
  return undefined;
}

function rangeProblem(schema: JsonSchema, value: number, path: string): InputProblem | undefined {
  const { minimum = -Infinity, maximum = Infinity, exclusiveMinimum } = schema;
  if (exclusiveMinimum !== undefined && value <= exclusiveMinimum)
    return problem(
      path,
      schema.type === 'integer' ? `at least ${Math.floor(exclusiveMinimum) + 1}` : `more than ${exclusiveMinimum}`,
    );
  if (value < minimum) return problem(path, `at least ${minimum}`);
  if (value > maximum) return problem(path, `at most ${maximum}`);
  return undefined;
}

/**
 * One of several schemas. Objects told apart by a field whose value each fixes (`audience.type`) are checked
 * against the one they name; otherwise the value must have one of them, and the last one's problem is told.
 */
function choiceProblem(choices: readonly JsonSchema[], value: unknown, path: string): InputProblem | undefined {
  const tag = tagOf(choices);
  if (tag !== undefined) {
    if (!isPlainObject(value)) return problem(path, 'must be an object');
    const tags = choices.map((c) => c.properties![tag]!.const);
    const chosen = choices[tags.indexOf(value[tag])];
    return chosen ? schemaProblem(chosen, value, path) : problem(join(path, tag), oneOfThese(tags));
  }
  let last: InputProblem | undefined;
  for (const choice of choices) {
    last = schemaProblem(choice, value, path);
    if (!last) return undefined;
  }
  return last;
}

/** The field every choice fixes to a value of its own, if there is one. */
function tagOf(choices: readonly JsonSchema[]): string | undefined {
  const first = choices[0]?.properties ?? {};
  return Object.keys(first).find((key) =>
    choices.every((c) => c.type === 'object' && c.properties?.[key]?.const !== undefined),
  );
}

/** A problem as one line, `recipients[0]: must be …` (`input: …` for the input itself). */
export function describeProblem(found: InputProblem): string {
  return `${found.path || 'input'}: ${found.message}`;
}
