#!/usr/bin/env node
/**
 * The `msgflow` command. From a checkout (src/ beside this folder) it runs the command compiled from the sources,
 * compiled first when they changed since the last build (./build-cli.js); from the installed package, dist/.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

if (existsSync(join(root, 'src', 'cli', 'main.ts'))) {
  const dir = await checkoutBuild();
  // Stack traces name the TypeScript sources, as when the sources ran under tsx.
  process.setSourceMapsEnabled(true);
  await import(pathToFileURL(join(dir, 'src', 'cli', 'main.js')).href);
} else {
  await import('../dist/src/cli/main.js');
}

async function checkoutBuild() {
  try {
    const { freshBuild } = await import('./build-cli.js');
    return (await freshBuild(root)).dir;
  } catch (error) {
    if (error?.code === 'MODULE_NOT_FOUND')
      console.error(
        'msgflow: from a checkout, the command is compiled with esbuild, which comes with the dev dependencies: ' +
          'run `npm ci` (without --omit=dev)',
      );
    // A compile error: esbuild has printed where.
    else if (!Array.isArray(error?.errors)) console.error(`msgflow: could not build the command: ${error}`);
    process.exit(1);
  }
}
