/**
 * Where exobar keeps its state: the API token, settings, runner logs and the sim GPU.
 * One directory per installation, private to the user (mode 0700), because it holds
 * the control API's bearer token.
 */
import { mkdir, chmod, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** The default data directory: `~/.exobar`. */
export function defaultDataDir(): string {
  return join(homedir(), '.exobar');
}

/**
 * Picks the data directory: an explicit value (the `--data-dir` flag), else
 * `$EXOBAR_DATA_DIR`, else `~/.exobar`. A leading `~` is expanded and relative
 * paths are resolved against the working directory.
 */
export function resolveDataDir(explicit?: string | null, env: NodeJS.ProcessEnv = process.env): string {
  const raw = explicit ?? (env.EXOBAR_DATA_DIR && env.EXOBAR_DATA_DIR !== '' ? env.EXOBAR_DATA_DIR : null);
  if (raw == null) return defaultDataDir();
  const expanded = raw === '~' ? homedir() : raw.startsWith('~/') ? join(homedir(), raw.slice(2)) : raw;
  return isAbsolute(expanded) ? expanded : resolve(expanded);
}

/**
 * Creates the data directory if needed (mode 0700) and returns its absolute path.
 * An existing directory is left as it is, except that group/other access is removed:
 * the token inside must stay private.
 */
export async function ensureDataDir(dir: string): Promise<string> {
  const absolute = resolve(dir);
  await mkdir(absolute, { recursive: true, mode: 0o700 });
  const info = await stat(absolute);
  if (!info.isDirectory()) throw new Error(`data directory ${absolute} is not a directory`);
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) await chmod(absolute, info.mode & 0o700);
  return absolute;
}
