/**
 * The control API's bearer token: generated on first run into `<dataDir>/token`
 * (mode 0600), or taken from `EXOBAR_TOKEN`. Compared in constant time.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';

/** Printable, URL-fragment-safe characters only, so the token survives `#token=...` and headers. */
export const TokenSchema = z
  .string()
  .min(16, 'a token must be at least 16 characters')
  .max(512, 'a token must be at most 512 characters')
  .regex(/^[A-Za-z0-9._~-]+$/, 'a token may only hold letters, digits and . _ ~ -');

export const TOKEN_FILE_NAME = 'token';

export interface LoadedToken {
  token: string;
  /** Where it came from: the environment, an existing file, or freshly generated. */
  source: 'env' | 'file' | 'generated';
  /** The token file (also when the token came from the environment). */
  path: string;
}

/** A new random token: 32 bytes of entropy, base64url. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Returns the token for this data directory. `EXOBAR_TOKEN` wins when set; otherwise the
 * token file is read, or created with mode 0600 when missing (`wx`, so two processes
 * starting at once cannot overwrite each other's token). A file with a broken token is an
 * error, not silently replaced: the user may rely on it elsewhere.
 */
export async function loadOrCreateToken(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<LoadedToken> {
  const path = join(dataDir, TOKEN_FILE_NAME);
  const fromEnv = env.EXOBAR_TOKEN;
  if (fromEnv != null && fromEnv !== '') {
    const parsed = TokenSchema.safeParse(fromEnv);
    if (!parsed.success) throw new Error(`EXOBAR_TOKEN is not usable: ${parsed.error.issues.map((i) => i.message).join('; ')}`);
    return { token: parsed.data, source: 'env', path };
  }
  const generated = generateToken();
  try {
    await writeFile(path, `${generated}\n`, { mode: 0o600, flag: 'wx' });
    return { token: generated, source: 'generated', path };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const info = await stat(path);
  // Someone loosened the file's mode: tighten it back, the token grants control of the node.
  if (process.platform !== 'win32' && (info.mode & 0o077) !== 0) await chmod(path, 0o600);
  const parsed = TokenSchema.safeParse((await readFile(path, 'utf8')).trim());
  if (!parsed.success) {
    throw new Error(`the token file ${path} holds no usable token (${parsed.error.issues.map((i) => i.message).join('; ')}); delete it to get a new one`);
  }
  return { token: parsed.data, source: 'file', path };
}

/**
 * Compares a presented token with the expected one in constant time. Both are hashed
 * first so that `timingSafeEqual` gets equal lengths and the length does not leak either.
 */
export function tokensEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
