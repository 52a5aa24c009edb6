/**
 * Packages msgflow declares as optional peer dependencies: a service that only starts workflows or calls the
 * provider API never installs them (the worker's native bridge and SQLite's native build are heavy). The code
 * that needs one imports it through here, on first use, so a missing package is a clear error naming it.
 */

/** The optional peers, with the version range to install (kept in step with package.json's peerDependencies). */
export const OPTIONAL_PACKAGES = {
  '@temporalio/worker': '1.24.0',
  '@temporalio/testing': '1.24.0',
  'better-sqlite3': '^13.0.0',
  pg: '^8.23.1',
} as const;

export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

export class MissingPackageError extends Error {
  override name = 'MissingPackageError';
  constructor(
    readonly packageName: OptionalPackage,
    purpose: string,
  ) {
    super(
      `${purpose} needs the package ${packageName}, an optional peer dependency of msgflow that is not installed: ` +
        `npm install ${packageName}@${OPTIONAL_PACKAGES[packageName]}`,
    );
  }
}

/**
 * Runs `load` (a literal `import('pkg')`, so the module keeps its types) and turns "package not found" for
 * `packageName` into a MissingPackageError; any other failure (a broken native build, say) passes unchanged.
 */
export async function importOptional<T>(
  packageName: OptionalPackage,
  purpose: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (isNotFound(error, packageName)) throw new MissingPackageError(packageName, purpose);
    throw error;
  }
}

function isNotFound(error: unknown, packageName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${packageName}'`)
  );
}
