/**
 * A runner process under test: spawns it in its own process group, writes RunnerInput
 * lines, parses every stdout line with the protocol schema, keeps stderr, and kills the
 * whole group on cleanup. Plain Node (no vitest import), so scripts can use it too; tests
 * call {@link useRunnerProcessCleanup} from ./runner-cleanup.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { parseRunnerOutputLine, type RunnerInput, type RunnerOutput } from '../../shared/runner-protocol';

/** How to start one runner process. `env` is the complete environment (undefined values are left out). */
export interface RunnerSpawnSpec {
  command: string;
  args: string[];
  env: Record<string, string | undefined>;
  cwd?: string;
}

/** One parsed stdout message and when it arrived (`performance.now()` ms of this process). */
export interface ReceivedMessage {
  index: number;
  at: number;
  message: RunnerOutput;
}

export interface RunnerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const live = new Set<RunnerProcess>();

/** Kills every runner spawned by this process that is still running (test cleanup). */
export async function killAllRunnerProcesses(): Promise<void> {
  await Promise.all([...live].map((runner) => runner.kill()));
  // A runner that exited on its own may have left children in its group (a grandchild
  // it started): the group outlives its leader, so it is killed too.
  for (const group of groups) killGroup(group);
  groups.clear();
}

/** Process groups of the runners spawned since the last cleanup (each runner leads its own). */
const groups = new Set<number>();

function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // Group already gone.
  }
}

// Last resort if a test run ends without cleanup: never leave runners behind.
process.once('exit', () => {
  for (const runner of live) runner.killSync();
});

export class RunnerProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Every valid stdout message, in order. */
  readonly received: ReceivedMessage[] = [];
  /** Stdout lines that were not valid RunnerOutput (a conforming runner sends none). */
  readonly badLines: { line: string; reason: string }[] = [];
  /** Performance.now() when each input was written, by position. */
  readonly sent: { at: number; line: string }[] = [];
  private stderrText = '';
  private exitInfo: RunnerExit | null = null;
  private readonly exitPromise: Promise<RunnerExit>;
  private readonly listeners = new Set<() => void>();

  constructor(readonly spec: RunnerSpawnSpec) {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(spec.env)) if (value !== undefined) env[key] = value;
    this.child = spawn(spec.command, spec.args, {
      env,
      cwd: spec.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
      // Own process group: cleanup kills the runner and anything it started.
      detached: true,
    });
    if (this.child.pid === undefined) throw new Error(`could not spawn ${spec.command}`);
    this.pid = this.child.pid;
    live.add(this);
    groups.add(this.pid);
    this.exitPromise = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        live.delete(this);
        this.notify();
        resolve(this.exitInfo);
      });
      this.child.once('error', () => {
        this.exitInfo ??= { code: null, signal: null };
        live.delete(this);
        this.notify();
        resolve(this.exitInfo);
      });
    });
    // A runner that exits while we write must not crash the test process with EPIPE.
    this.child.stdin?.on('error', () => {});
    createInterface({ input: this.child.stdout!, crlfDelay: Infinity }).on('line', (line) => {
      const parsed = parseRunnerOutputLine(line);
      if (parsed.ok) this.received.push({ index: this.received.length, at: performance.now(), message: parsed.value });
      else this.badLines.push({ line, reason: parsed.reason });
      this.notify();
    });
    this.child.stderr?.on('data', (data: Buffer) => {
      this.stderrText += data.toString('utf8');
    });
  }

  /** The valid stdout messages so far. */
  get messages(): RunnerOutput[] {
    return this.received.map((r) => r.message);
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** The exit code and signal, or null while running. */
  get exit(): RunnerExit | null {
    return this.exitInfo;
  }

  /** Writes one input (an object is JSON-encoded; a string is written as is, for malformed-line tests). */
  send(input: RunnerInput | string): void {
    this.writeLines([typeof input === 'string' ? input : JSON.stringify(input)]);
  }

  /**
   * Writes several inputs in one write, so they reach the runner together: a loaded machine
   * can otherwise deliver separate writes a step apart.
   */
  sendAll(inputs: RunnerInput[]): void {
    this.writeLines(inputs.map((input) => JSON.stringify(input)));
  }

  /** Records the lines as sent now and writes them in one write. */
  private writeLines(lines: string[]): void {
    const at = performance.now();
    for (const line of lines) this.sent.push({ at, line });
    this.child.stdin?.write(lines.map((line) => `${line}\n`).join(''));
  }

  closeStdin(): void {
    this.child.stdin?.end();
  }

  /**
   * The first message at or after position `from` that matches, waiting up to
   * `timeoutMs` for it. Rejects with the recent output and stderr on timeout or exit.
   */
  waitFor(predicate: (message: RunnerOutput) => boolean, timeoutMs: number, options: { from?: number; description?: string } = {}): Promise<ReceivedMessage> {
    const from = options.from ?? 0;
    const find = () => this.received.slice(from).find((r) => predicate(r.message));
    const found = find();
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        this.listeners.delete(check);
      };
      const check = () => {
        const match = find();
        if (match) {
          done();
          resolve(match);
        } else if (this.exitInfo) {
          done();
          reject(this.failure(`runner exited (${JSON.stringify(this.exitInfo)}) before`, options.description));
        }
      };
      const timer = setTimeout(() => {
        done();
        reject(this.failure(`timed out after ${timeoutMs} ms waiting for`, options.description));
      }, timeoutMs);
      this.listeners.add(check);
    });
  }

  /** Resolves with the exit code and signal; rejects after `timeoutMs`. */
  async waitForExit(timeoutMs: number): Promise<RunnerExit> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.failure(`did not exit within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([this.exitPromise, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Kills the process group (SIGKILL) and waits for the exit. */
  async kill(): Promise<RunnerExit> {
    if (!this.exitInfo) this.killSync();
    return this.exitPromise;
  }

  /** Sends SIGKILL to the process group without waiting. */
  killSync(): void {
    try {
      process.kill(-this.pid, 'SIGKILL');
    } catch {
      // Group already gone.
    }
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private failure(what: string, description = 'a matching message'): Error {
    const tail = this.received
      .slice(-12)
      .map((r) => `  #${r.index} ${JSON.stringify(r.message)}`)
      .join('\n');
    return new Error(
      `runner pid ${this.pid} (${[this.spec.command, ...this.spec.args].join(' ').slice(0, 160)}): ${what} ${description}\n` +
        `last stdout messages:\n${tail || '  (none)'}\n` +
        `stderr (tail):\n${this.stderrText.slice(-2000) || '  (empty)'}`,
    );
  }
}

/** Spawns a runner process (see {@link RunnerProcess}). */
export function spawnRunner(spec: RunnerSpawnSpec): RunnerProcess {
  return new RunnerProcess(spec);
}
