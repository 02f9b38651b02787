/**
 * The venv the official-SDK tests drive exobar with: the clients pinned in
 * requirements.txt, installed once per set of pins into a cache directory named by
 * their hash (the same directory for every SDK test). Under CI=true a venv that cannot
 * be made fails the test; elsewhere the test says why and skips.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

export const run = promisify(execFile);
const requirementsFile = join(__dirname, 'requirements.txt');
export const requirements = readFileSync(requirementsFile, 'utf8');
const venv = join(tmpdir(), `exobar-sdk-venv-${createHash('sha256').update(requirements).digest('hex').slice(0, 12)}`);
/** The venv's python. */
export const sdkPython = join(venv, 'bin', 'python');

/** Makes the venv once per set of pins; the reason it could not, or null. Throws under CI=true. */
export async function makeSdkVenv(): Promise<string | null> {
  if (existsSync(join(venv, '.complete'))) return null;
  let reason: string | null = null;
  try {
    await run('python3', ['-m', 'venv', '--clear', venv]);
    await run(sdkPython, ['-m', 'pip', 'install', '--quiet', '-r', requirementsFile], { timeout: 600_000 });
    await run(sdkPython, ['-c', `open(${JSON.stringify(join(venv, '.complete'))}, "w").close()`]);
  } catch (error) {
    reason = (error as { stderr?: string }).stderr?.slice(-800) || (error as Error).message;
  }
  if (reason && process.env.CI === 'true') throw new Error(`the SDK venv could not be made under CI: ${reason}`);
  if (reason) console.warn(`SKIPPED: official SDK test: pip could not install the pinned clients: ${reason}`);
  return reason;
}
