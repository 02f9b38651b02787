/**
 * Running a helper command (python, pip) from the app side, behind a small interface
 * so detection and setup can be tested with an injected fake: no test here may create
 * a venv or reach a package index.
 */
import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

export interface CommandResult {
  /** Exit code; null when the command could not start, timed out or was killed. */
  code: number | null;
  stdout: string;
  stderr: string;
  /** Why it did not run to an exit code (ENOENT, timeout), if so. */
  error?: string;
}

/** Runs a command to completion and captures its output. */
export type RunCommand = (command: string, args: readonly string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv }) => Promise<CommandResult>;

/** Runs a command, handing each output line to `onLine` as it comes (pip's progress). */
export type StreamCommand = (
  command: string,
  args: readonly string[],
  options: {
    timeoutMs: number;
    env?: NodeJS.ProcessEnv;
    onLine: (stream: 'stdout' | 'stderr', line: string) => void;
  },
) => Promise<{ code: number | null; error?: string }>;

/** {@link RunCommand} on node:child_process (no shell: arguments are passed as they are). */
export const runCommand: RunCommand = (command, args, { timeoutMs, env }) =>
  new Promise((resolve) => {
    execFile(command, [...args], { timeout: timeoutMs, env, encoding: 'utf8', maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (!err) return resolve({ code: 0, stdout, stderr });
      const e = err as NodeJS.ErrnoException & { code?: number | string; killed?: boolean };
      if (typeof e.code === 'number') return resolve({ code: e.code, stdout, stderr });
      const reason = e.killed ? `timed out after ${timeoutMs} ms` : (e.code ?? e.message);
      resolve({ code: null, stdout, stderr, error: String(reason) });
    });
  });

/** {@link StreamCommand} on node:child_process. */
export const streamCommand: StreamCommand = (command, args, { timeoutMs, env, onLine }) =>
  new Promise((resolve) => {
    let settled = false;
    const finish = (result: { code: number | null; error?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const child = spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      finish({ code: null, error: `timed out after ${timeoutMs} ms` });
    }, timeoutMs);
    createInterface({ input: child.stdout }).on('line', (line) => onLine('stdout', line));
    createInterface({ input: child.stderr }).on('line', (line) => onLine('stderr', line));
    child.once('error', (err: NodeJS.ErrnoException) => finish({ code: null, error: err.code ?? err.message }));
    child.once('close', (code) => finish({ code }));
  });
