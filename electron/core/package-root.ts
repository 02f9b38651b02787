/**
 * Where exobar's own files are, whichever form the code runs in: the TypeScript
 * source (electron/core/), the built command line (out/node/, one bundle), or the
 * app's main bundle (out/main/, inside app.asar when packaged). A path relative to
 * `import.meta.url` is right in only one of those, so paths are taken from the
 * package root instead: the nearest directory above with exobar's package.json.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PACKAGE_NAME = 'exobar';

function readPackage(dir: string): { name?: unknown; version?: unknown } | null {
  try {
    return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return null;
  }
}

/**
 * The nearest directory at or above `from` (a file URL or path) holding a package.json
 * named "exobar"; throws if there is none (the code was copied out of its package).
 */
export function findPackageRoot(from: string): string {
  let dir = from.startsWith('file:') ? fileURLToPath(from) : from;
  for (;;) {
    if (readPackage(dir)?.name === PACKAGE_NAME) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json named "${PACKAGE_NAME}" above ${from}`);
    dir = parent;
  }
}

let cachedRoot: string | null = null;

/** The package root of the running code (see the module comment); found once. */
export function packageRoot(): string {
  cachedRoot ??= findPackageRoot(dirname(fileURLToPath(import.meta.url)));
  return cachedRoot;
}

/** The version in exobar's package.json, or `fallback` if it cannot be read. */
export function packageVersion(fallback = '0.0.0'): string {
  try {
    const version = readPackage(packageRoot())?.version;
    return typeof version === 'string' ? version : fallback;
  } catch {
    return fallback;
  }
}
