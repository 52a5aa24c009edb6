/** Generates the OpenAPI 3.1 document from the route table and its zod schemas (JSON Schema 2020-12). */
import { z } from 'zod';
import { envelope, paginated } from './common.js';
import { ErrorBody } from './errors.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, type Route, routes } from './routes.js';

type JsonSchema = Record<string, unknown>;

/** Named schemas (those with a `.meta({ id })`), collected into components.schemas as they are met. */
let components: Record<string, JsonSchema> = {};

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const {
    $schema: _,
    $defs,
    ...json
  } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
    reused: 'inline',
  }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
  // Inside an OpenAPI document `#/$defs/…` would resolve against the document root: hoist and re-point.
  const repoint = (value: JsonSchema) =>
    JSON.parse(JSON.stringify(value).replaceAll('"#/$defs/', '"#/components/schemas/')) as JsonSchema;
  for (const [id, def] of Object.entries($defs ?? {})) components[id] = repoint(def);
  return repoint(json);
}

function queryParameters(query: z.ZodType | undefined) {
  if (!query) return [];
  const json = schemaOf(query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: json.required?.includes(name) ?? false,
    schema,
  }));
}

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

function operation(name: string, r: Route) {
  const pathParams = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
    name: m[1],
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const headerParams = r.idempotent
    ? [{ name: IDEMPOTENCY_KEY_HEADER, in: 'header', required: false, schema: { type: 'string', maxLength: 255 } }]
    : [];
  const success = r.response
    ? {
        description: r.summary,
        headers: r.idempotent
          ? { [IDEMPOTENT_REPLAYED_HEADER]: { schema: { type: 'string', enum: ['true'] } } }
          : undefined,
        content: {
          'application/json': {
            schema: schemaOf(r.paginated ? paginated(r.response) : envelope(r.response), 'output'),
          },
        },
      }
    : { description: r.summary };
  return {
    operationId: name,
    summary: r.summary,
    security: [{ bearer: [r.scope] }],
    parameters: [...pathParams, ...headerParams, ...queryParameters(r.query)],
    requestBody: r.body
      ? { required: true, content: { 'application/json': { schema: schemaOf(r.body, 'input') } } }
      : undefined,
    responses: {
      [r.status]: success,
      400: errorResponse('Malformed request'),
      401: errorResponse('Missing or invalid token'),
      ...(r.charged ? { 402: errorResponse('Insufficient wallet balance') } : {}),
      403: errorResponse('Outside the token scopes, IP not allowed, or spend cap reached'),
      ...(r.path.includes('{') || r.bodyNamesRecord ? { 404: errorResponse('No such record in this account') } : {}),
      ...(r.idempotent ? { 409: errorResponse('Same Idempotency-Key still in progress') } : {}),
      ...(r.body ? { 413: errorResponse('Body too large'), 415: errorResponse('Body is not JSON') } : {}),
      422: errorResponse('Validation failed'),
      429: errorResponse('Rate limited; see Retry-After'),
    },
  };
}

export function openApiDocument(serverUrl = '/v1') {
  components = {};
  const paths: Record<string, Record<string, unknown>> = {};
  for (const [name, r] of Object.entries(routes) as [string, Route][]) {
    paths[r.path] ??= {};
    paths[r.path]![r.method.toLowerCase()] = operation(name, r);
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Messaging API', version: 'v1' },
    servers: [{ url: serverUrl }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { ...components, Error: schemaOf(ErrorBody, 'output') },
    },
    paths,
  };
}
