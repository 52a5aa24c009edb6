/** docs/openapi.json is the document the sandbox serves; it is generated, and must not drift from the code. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../src/api/openapi.js';

describe('docs/openapi.json', () => {
  it('matches the OpenAPI document generated from src/api (regenerate with `npm run docs:openapi`)', () => {
    const written: unknown = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
    const current: unknown = JSON.parse(JSON.stringify(openApiDocument('/v1')));
    expect(written, 'docs/openapi.json is out of date: run `npm run docs:openapi` and commit the file').toEqual(
      current,
    );
  });
});
