/**
 * Writes docs/openapi.json, the sandbox's OpenAPI document (the one `GET /v1/openapi.json` serves), so the
 * provider API can be read without running anything. `npm run docs:openapi`; a unit test fails when the
 * file is out of date.
 */
import { writeFileSync } from 'node:fs';
import { openApiDocument } from '../src/api/openapi.js';

const OPENAPI_FILE = 'docs/openapi.json';

writeFileSync(OPENAPI_FILE, `${JSON.stringify(openApiDocument('/v1'), null, 2)}\n`);
console.log(`wrote ${OPENAPI_FILE}`);
