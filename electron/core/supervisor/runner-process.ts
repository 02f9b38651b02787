/**
 * One runner OS process: spawned in its own process group, stdout framed into JSON
 * lines and validated, stderr kept as a log. Knows nothing of tasks; the supervisor
 * above it does.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { parseRunnerOutputLine, type RunnerInput, type RunnerOutput } from '../../../shared/runner-protocol';
import { climbKillLadder, type KillRung } from '../process/kill-ladder';
import { LineSplitter } from '../process/line-splitter';
import { LogTail } from '../process/log-tail';
import type { SpawnSpec } from './spawn-spec';

/** Longest wait for the output to close once the process exited. */
const CLOSE_AFTER_EXIT_MS = 2000;

export interface RunnerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** How a terminate ended: `died` false means the process outlived SIGKILL (a wedged GPU can do that). */
export interface TerminateResult {
  exit: RunnerExit | null;
  died: boolean;
}

/** A runner's ladder, to its process group: SIGTERM, wait `graceMs`; SIGKILL, wait `killWaitMs`. */
export function runnerKillLadder(graceMs: number, killWaitMs: number): KillRung[] {
  return [
    { signal: 'SIGTERM', waitMs: graceMs },
    { signal: 'SIGKILL', waitMs: killWaitMs },
  ];
}

export interface RunnerProcessHandlers {
  onMessage(message: RunnerOutput): void;
  onMalformedLine(reason: string, line: string): void;
  onExit(exit: RunnerExit): void;
}

export interface RunnerLogs {
  stdout: LogTail;
  stderr: LogTail;
}

export class RunnerProcess {
  readonly pid: number | null;
  private readonly child: ChildProcessWithoutNullStreams;
  private exited: RunnerExit | null = null;
  private readonly exitWaiters: Array<(exit: RunnerExit) => void> = [];

  constructor(spec: SpawnSpec, logs: RunnerLogs, handlers: RunnerProcessHandlers, options: { logGeneratedText?: boolean } = {}) {
    // detached: the runner leads its own process group, so a stop reaches anything it spawned too.
    this.child = spawn(spec.command, spec.args, {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.pid = this.child.pid ?? null;

    const keepText = options.logGeneratedText ?? false;
    const splitter = new LineSplitter(
      (line) => {
        if (line.trim() === '') return;
        const parsed = parseRunnerOutputLine(line);
        if (!keepText) logs.stdout.append(`${parsed.ok ? redactedLine(parsed.value, line) : `[malformed line, ${line.length} characters]`}\n`);
        if (parsed.ok) handlers.onMessage(parsed.value);
        else handlers.onMalformedLine(parsed.reason, line);
      },
      (bytes) => handlers.onMalformedLine(`line longer than the limit (${bytes} bytes)`, ''),
    );
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      if (keepText) logs.stdout.append(chunk);
      splitter.push(chunk);
    });
    this.child.stdout.on('end', () => splitter.flush());
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (chunk: string) => logs.stderr.append(chunk));
    // A runner that died mid-write makes stdin emit EPIPE: the exit handler reports the death.
    this.child.stdin.on('error', () => undefined);
    this.child.on('error', (error) => {
      logs.stderr.append(`[exobar] failed to start runner: ${error.message}\n`);
      this.markExited({ code: null, signal: null }, handlers);
    });
    // 'close', not 'exit': stdout is fully read by then, so the runner's last lines (its
    // RunnerFailed reason, a final error chunk) arrive before the exit is handled.
    this.child.on('close', (code, signal) => this.markExited({ code, signal }, handlers));
    // Something the runner spawned may still hold its stdout open: the group goes with it,
    // and should a process outside the group hold it, the exit is handled anyway soon after.
    this.child.on('exit', (code, signal) => {
      this.killGroup();
      setTimeout(() => this.markExited({ code, signal }, handlers), CLOSE_AFTER_EXIT_MS).unref();
    });
  }

  get alive(): boolean {
    return this.exited === null;
  }

  send(message: RunnerInput): void {
    if (!this.alive || this.child.stdin.destroyed) return;
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  /** Signals the whole process group; harmless when it is already gone. */
  signalGroup(signal: NodeJS.Signals): void {
    if (this.pid === null || !this.alive) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        this.child.kill(signal);
      } catch {
        // Already gone.
      }
    }
  }

  /** Resolves with the exit, or null if it has not exited within `timeoutMs`. */
  waitForExit(timeoutMs: number): Promise<RunnerExit | null> {
    if (this.exited) return Promise.resolve(this.exited);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      this.exitWaiters.push((exit) => {
        clearTimeout(timer);
        resolve(exit);
      });
    });
  }

  /**
   * SIGTERM to the group, then SIGKILL after `graceMs`; says truthfully whether the
   * process is gone (a process stuck in the kernel on a wedged GPU may survive SIGKILL).
   */
  async terminate(graceMs = 2000, killWaitMs = 5000): Promise<TerminateResult> {
    const { exited } = await climbKillLadder(runnerKillLadder(graceMs, killWaitMs), {
      send: (signal) => this.signalGroup(signal),
      waitExit: async (ms) => (await this.waitForExit(ms)) !== null,
    });
    return exited ? { exit: this.exited, died: true } : { exit: null, died: false };
  }

  /** Reaps anything left in the runner's process group. */
  private killGroup(): void {
    if (this.pid === null) return;
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // The group is already empty.
    }
  }

  closeStdin(): void {
    if (!this.child.stdin.destroyed) this.child.stdin.end();
  }

  private markExited(exit: RunnerExit, handlers: RunnerProcessHandlers): void {
    if (this.exited) return;
    this.exited = exit;
    this.killGroup();
    handlers.onExit(exit);
    for (const waiter of this.exitWaiters.splice(0)) waiter(exit);
  }
}

/** A stdout line as the log keeps it: a token's text (and the stop sequence it met, the client's words) replaced by its length, everything else as written. */
function redactedLine(message: RunnerOutput, line: string): string {
  if (message.type !== 'ChunkGenerated' || message.chunk.kind !== 'TokenChunk') return line;
  const { stopSequence } = message.chunk;
  return JSON.stringify({
    ...message,
    chunk: { ...message.chunk, text: `[${message.chunk.text.length} characters]`, ...(stopSequence !== undefined ? { stopSequence: `[${stopSequence.length} characters]` } : {}) },
  });
}
