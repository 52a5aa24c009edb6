/**
 * The worker's build id: a hash of the workflow code a versioned worker bundles — every module
 * workflows/versioned imports for its value, followed from there (type-only imports are erased and left out) — and of the workflow SDK's
 * version. The same code gives the same id on every machine; any change to workflow code gives another.
 * Read with plain file reads, so `msgflow --version` prints it without bundling.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sourceExtension = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
/** An unversioned worker's bundle entry: workflows/index as source (.ts) or compiled (.js, in the package). */
export const WORKFLOWS_PATH = fileURLToPath(new URL(`../../workflows/index.${sourceExtension}`, import.meta.url));
/** A versioned worker's entry: the same workflows with their versioning behaviours (workflows/versioned). */
export const VERSIONED_WORKFLOWS_PATH = fileURLToPath(
  new URL(`../../workflows/versioned.${sourceExtension}`, import.meta.url),
);
/**
 * The run backing a `startCampaign` Nexus operation: bundled on its own, for the Nexus campaigns' worker (not a
 * workflow of the workflows' queue, so it is no part of the build id).
 */
export const NEXUS_CAMPAIGN_WORKFLOWS_PATH = fileURLToPath(
  new URL(`../../workflows/nexus-campaign.${sourceExtension}`, import.meta.url),
);
/** The failure converter the bundle carries as well (data-converter.ts's FAILURE_CONVERTER_PATH). */
const BUNDLED_FAILURE_CONVERTER = fileURLToPath(new URL(`./failure-converter.${sourceExtension}`, import.meta.url));

/** Hex digits of the hash kept in a build id: enough that two builds never collide in practice. */
const BUILD_ID_LENGTH = 12;

let cached: string | undefined;

/** This installation's build id (computed once per process). */
export function workflowBuildId(): string {
  cached ??= buildIdOf(workflowSources([VERSIONED_WORKFLOWS_PATH, BUNDLED_FAILURE_CONVERTER]), workflowSdkVersion());
  return cached;
}

/** The id of workflow sources (path relative to the package root -> text) under a workflow SDK version. */
export function buildIdOf(sources: ReadonlyMap<string, string>, sdkVersion: string): string {
  const hash = createHash('sha256').update(`@temporalio/workflow@${sdkVersion}\n`);
  for (const path of [...sources.keys()].sort())
    hash.update(`${path}\n${sources.get(path)!.length}\n${sources.get(path)}`);
  return hash.digest('hex').slice(0, BUILD_ID_LENGTH);
}

/**
 * Every module reachable from `entries` (the first in workflows/) through relative value imports, keyed by its
 * path from the package root.
 */
export function workflowSources(entries: readonly string[]): Map<string, string> {
  const root = resolve(dirname(entries[0]!), '..');
  const sources = new Map<string, string>();
  const pending = [...entries];
  while (pending.length > 0) {
    const file = pending.pop()!;
    const key = relative(root, file);
    if (sources.has(key)) continue;
    const text = readFileSync(file, 'utf8');
    sources.set(key, text);
    for (const specifier of relativeValueImports(text)) pending.push(moduleFile(resolve(dirname(file), specifier)));
  }
  return sources;
}

/**
 * The relative specifiers a module imports or re-exports for their values: `import type` and `export type`
 * are erased when compiled, so they are no part of the bundle.
 */
export function relativeValueImports(text: string): string[] {
  const specifiers: string[] = [];
  const statement = /(?:^|[\n;])\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"](\.{1,2}\/[^'"]+)['"]/g;
  for (const match of text.matchAll(statement)) if (!match[2]) specifiers.push(match[3]!);
  return specifiers;
}

/** A specifier's file: TypeScript sources import `./x.js` for `./x.ts`. */
function moduleFile(path: string): string {
  if (existsSync(path)) return path;
  const typescript = path.replace(/\.js$/, '.ts');
  if (existsSync(typescript)) return typescript;
  throw new Error(`workflow module not found: ${path}`);
}

function workflowSdkVersion(): string {
  const require = createRequire(import.meta.url);
  return (JSON.parse(readFileSync(require.resolve('@temporalio/workflow/package.json'), 'utf8')) as { version: string })
    .version;
}
