/**
 * Runs `exobar serve` as a real child process for the browser tests and the CLI's: a free
 * port (never the default one), a temporary data directory, the sim time scale; parses
 * the address it prints.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sleep } from '../eventually';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

export interface ServeProcess {
  /** `http://127.0.0.1:PORT` */
  url: string;
  token: string;
  /** The exobar process's pid (its record's, its runners.json owner's). */
  pid: number;
  /** The address to open in a browser (with `#token=`). */
  openUrl: string;
  /** Its data directory (token, settings.json). */
  dataDir: string;
  /** Everything the server wrote, for failure messages. */
  output(): string;
  /** Sends `signal` to the exobar process alone (not its runners) and waits for its exit: a crash. */
  kill(signal: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** Starts `exobar serve --port 0` and resolves once it prints the browser address. */
export async function startServe(options: {
  simTimeScale: number;
  timeoutMs?: number;
  /** More `exobar serve` flags (`--exo URL`). */ args?: string[];
  /** Use this data directory and leave it in place at stop (a restart on the same one); default: a new one, removed at stop. */
  dataDir?: string;
  /** Settings written to the data directory's settings.json before the start (e.g. `{ runner: { schedule: 'exo' } }`). */
  settings?: Record<string, unknown>;
  /** More environment for the server (`HF_HUB_CACHE` naming where its models are). */
  env?: Record<string, string>;
}): Promise<ServeProcess> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'exobar-e2e-')));
  if (options.settings) await writeFile(join(dataDir, 'settings.json'), JSON.stringify(options.settings));
  const child: ChildProcess = spawn(
    process.execPath,
    ['bin/exobar.js', 'serve', '--port', '0', '--data-dir', dataDir, '--sim-time-scale', String(options.simTimeScale), ...(options.args ?? [])],
    // Its own process group, so a failed test can end the server and every runner it spawned.
    { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, EXOBAR_LOG_LEVEL: 'warn', ...options.env } },
  );
  let log = '';
  child.stdout?.on('data', (d: Buffer) => (log += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (log += d.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));

  const killGroup = (signal: NodeJS.Signals): void => {
    try {
      if (child.pid) process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      killGroup('SIGTERM');
      const timer = setTimeout(() => killGroup('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    } else {
      // exobar was killed: whatever runner it left in its group goes too.
      killGroup('SIGKILL');
    }
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
  };

  const kill = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    await exited;
  };

  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  for (;;) {
    const match = /open (http:\/\/[^\s/]+)\/#token=(\S+)/.exec(log);
    if (match?.[1] && match[2]) {
      const url = match[1];
      const token = match[2];
      return { url, token, pid: child.pid!, openUrl: `${url}/#token=${token}`, dataDir, output: () => log, kill, stop };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`exobar serve did not print its address:\n${log}`);
    }
    await sleep(100);
  }
}
