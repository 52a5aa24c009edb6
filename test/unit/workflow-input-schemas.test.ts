/**
 * The JSON Schemas of workflow inputs are generated from their zod schemas (`npm run schemas`) and committed:
 * schemas/workflow-inputs/*.json for other languages, src/definitions/workflow-input-schemas.ts for the
 * workflows' own check. Neither may drift from the zod schemas.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { WorkflowInputType } from '../../src/api/input-rules.js';
import { WORKFLOW_INPUTS, workflowInputJsonSchema } from '../../src/api/workflow-inputs.js';
import { WORKFLOW_INPUT_SCHEMAS } from '../../src/definitions/workflow-input-schemas.js';

const FOLDER = 'schemas/workflow-inputs';
const STALE = 'is out of date: run `npm run schemas` and commit the files it writes';
const types = Object.keys(WORKFLOW_INPUTS) as WorkflowInputType[];

describe('generated workflow input schemas', () => {
  it.each(types)('%s: the published JSON Schema and the workflow check match its zod schema', (type) => {
    const current = workflowInputJsonSchema(type);
    const published: unknown = JSON.parse(readFileSync(`${FOLDER}/${type}.json`, 'utf8'));
    expect(published, `${FOLDER}/${type}.json ${STALE}`).toEqual(current);
    expect(WORKFLOW_INPUT_SCHEMAS[type], `src/definitions/workflow-input-schemas.ts ${STALE}`).toEqual(current);
  });

  it('publishes one file per workflow input, and no other', () => {
    expect(readdirSync(FOLDER).sort()).toEqual(types.map((type) => `${type}.json`).sort());
  });
});
