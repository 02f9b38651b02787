/**
 * The one walk over the repo's files that the lint tests read as text (boundaries aside,
 * which asks ESLint to walk). One walk means one answer to "which files are the tree":
 * installed packages, the build and dot-folders (git, caches, the data folder) are never
 * source, so no rule can pass because its own walk looked somewhere else.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repo's root folder (absolute, with a trailing slash). */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Folders that are never source: what npm installs and what the build writes. */
const NOT_SOURCE = new Set(['node_modules', 'out']);

/**
 * Every file below `dir` (absolute) that `keep` accepts, as absolute paths; `keep` sees each
 * file's absolute path. A folder that does not exist holds no files.
 */
export function sourceFiles(dir: string, keep: (path: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return NOT_SOURCE.has(name) || name.startsWith('.') ? [] : sourceFiles(path, keep);
    return keep(path) ? [path] : [];
  });
}
