/**
 * Running a helper command (python, pip) from the app side, behind a small interface
 * so detection and setup can be tested with an injected fake: no test here may create
 * a venv or reach a package index.
 */
import { spawn, type ChildProcess } from 'node:child_process';
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

/** Output kept per stream: a probe's answer is a line; pip's whole log is streamed instead. */
const MAX_OUTPUT_CHARS = 4 * 1024 * 1024;

/**
 * Helper commands running now. Each leads its own process group, so ending it ends what
 * it started too: a login shell's `pyenv rehash` outlived a killed shell and, once
 * `exobar serve` had exited, was still in its process group.
 */
const running = new Set<ChildProcess>();

function start(command: string, args: readonly string[], env: NodeJS.ProcessEnv | undefined): ChildProcess {
  // Its own group where there are groups (POSIX); ended by stopRunningCommands or its timeout.
  const child = spawn(command, [...args], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: process.platform !== 'win32' });
  running.add(child);
  child.once('close', () => running.delete(child));
  child.once('error', () => running.delete(child));
  return child;
}

function killGroup(child: ChildProcess): void {
  try {
    if (process.platform !== 'win32' && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    else child.kill('SIGKILL');
  } catch {
    // Already gone.
  }
}

/**
 * Ends every helper command still running (an MLX probe, the login shell's PATH, pip)
 * with whatever it started: the core's stop calls it, so no helper outlives exobar.
 */
export function stopRunningCommands(): void {
  for (const child of running) killGroup(child);
  running.clear();
}

/** How many helper commands run now (for tests). */
export function runningCommandCount(): number {
  return running.size;
}

/** How a helper ended, once: its exit code, or why it has none (could not start, timed out, killed). */
function ended(child: ChildProcess, timeoutMs: number): Promise<{ code: number | null; error?: string }> {
  return new Promise((resolve) => {
    let timedOut = false;
    let settled = false;
    const finish = (result: { code: number | null; error?: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child);
    }, timeoutMs);
    child.once('error', (err: NodeJS.ErrnoException) => finish({ code: null, error: err.code ?? err.message }));
    child.once('close', (code, signal) => {
      if (timedOut) finish({ code: null, error: `timed out after ${timeoutMs} ms` });
      else finish(code !== null ? { code } : { code: null, error: `killed by ${signal}` });
    });
  });
}

/** {@link RunCommand} on node:child_process (no shell: arguments are passed as they are). */
export const runCommand: RunCommand = async (command, args, { timeoutMs, env }) => {
  let stdout = '';
  let stderr = '';
  const child = start(command, args, env);
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout = (stdout + d).slice(0, MAX_OUTPUT_CHARS)));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(0, MAX_OUTPUT_CHARS)));
  const end = await ended(child, timeoutMs);
  return { ...end, stdout, stderr };
};

/** {@link StreamCommand} on node:child_process. */
export const streamCommand: StreamCommand = (command, args, { timeoutMs, env, onLine }) => {
  const child = start(command, args, env);
  createInterface({ input: child.stdout! }).on('line', (line) => onLine('stdout', line));
  createInterface({ input: child.stderr! }).on('line', (line) => onLine('stderr', line));
  return ended(child, timeoutMs);
};
