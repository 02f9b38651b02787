/**
 * A Python venv with the official `openai` client, for tests that talk to exobar the way
 * Python users do. Made once per machine in the temporary directory's cache
 * (`<tmpdir>/exobar-openai-venv`) with `python3 -m venv` and `pip install openai`, then
 * reused; made beside and renamed into place, so two test runs never see half a venv.
 * Nothing else is installed: CI needs only python3 (which it already requires).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The venv's python, made if missing. Rejects with pip's own words when it cannot be made. */
export async function pythonWithOpenAi(): Promise<string> {
  const home = join(tmpdir(), 'exobar-openai-venv');
  const python = join(home, 'bin', 'python3');
  if (existsSync(python)) return python;
  const building = await mkdtemp(join(tmpdir(), 'exobar-openai-venv-building-'));
  try {
    await run('python3', ['-m', 'venv', building], { timeout: 120_000 });
    await run(join(building, 'bin', 'pip'), ['install', '--quiet', '--disable-pip-version-check', 'openai'], { timeout: 600_000 });
    // A venv's scripts name their own directory: rename keeps the python (bin/python3 resolves by path) but not pip, which is not needed again.
    await rename(building, home).catch(async (error: NodeJS.ErrnoException) => {
      // Another run made it meanwhile: use theirs.
      if (!existsSync(python)) throw error;
      await rm(building, { recursive: true, force: true });
    });
  } catch (error) {
    await rm(building, { recursive: true, force: true });
    throw error;
  }
  return python;
}
