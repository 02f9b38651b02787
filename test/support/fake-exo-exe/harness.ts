/**
 * Test glue for the fake exo command: where it is, a private HOME and data directory
 * per test, a free port, the environment a live process really received, and a
 * cleanup that leaves no process of a fake exo's tree behind.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exoHomeDir } from '../../../electron/core/exo-process/exo-home';
import { processAlive } from '../process-alive';

/** The fake `exo` executable (a Node script with a shebang). */
export const FAKE_EXO_COMMAND = fileURLToPath(new URL('./exo', import.meta.url));

export interface FakeExoDirs {
  /** Set as HOME for exo: its files land where exo keeps them under it (fakeExoHome). */
  home: string;
  /** exobar's data directory. */
  dataDir: string;
  remove(): void;
}

export function makeFakeExoDirs(): FakeExoDirs {
  const root = mkdtempSync(join(tmpdir(), 'fake-exo-'));
  return { home: join(root, 'home'), dataDir: join(root, 'data'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * The environment a process started with, read from the process itself
 * (/proc/<pid>/environ); on systems without procfs, the copy the fake exo writes to
 * `fake-exo-env.json` in its home (fakeExoHome) at start.
 */
export function receivedEnv(pid: number, home: string): Record<string, string> {
  const proc = `/proc/${pid}/environ`;
  if (existsSync(proc)) {
    const env: Record<string, string> = {};
    for (const entry of readFileSync(proc, 'utf8').split('\0')) {
      const eq = entry.indexOf('=');
      if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
    }
    return env;
  }
  return JSON.parse(readFileSync(join(fakeExoHome(home), 'fake-exo-env.json'), 'utf8')) as Record<string, string>;
}

/** Where the fake exo started with HOME=`home` (and this process's other variables) keeps its files. */
export function fakeExoHome(home: string): string {
  return exoHomeDir({ ...process.env, HOME: home });
}

/**
 * Live processes started with HOME=`home`: a fake exo of this test and everything it
 * spawned, orphans included (Linux; the tests' own way to find them, never exobar's).
 */
export function processesWithHome(home: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc').filter((e) => /^\d+$/.test(e))) {
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`HOME=${home}`) && processAlive(Number(entry))) found.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return found;
}

/** A process that only sleeps (a stand-in for "some other process" holding a pid). */
export function spawnSleeper(): { pid: number; kill(): void } {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' });
  return { pid: child.pid!, kill: () => child.kill('SIGKILL') };
}

/**
 * How long a test waits for the fake exo to answer its API: the fake is TypeScript run
 * through tsx, which takes seconds on a loaded machine; within FAST_TIMING's deadline.
 */
export const EXO_START_MS = 30_000;

/** SIGKILLs every pid still alive (test cleanup: nothing outlives a test). */
export function killAll(pids: Iterable<number>): void {
  for (const pid of pids) {
    if (!processAlive(pid)) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone meanwhile.
    }
  }
}
