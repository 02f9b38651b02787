/**
 * The exo process exobar spawned, apart from what its state means: the spawn, its exit,
 * its signals, and the runners it starts, recorded (pid and start time) while it runs so
 * that what it leaves behind can be stopped, and only that.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { climbKillLadder, type KillRung } from '../process/kill-ladder';
import { stopLeftovers, type LeftoverResult } from '../process/leftover-runners';
import { descendants, groupMembers, sendSignal } from '../process/process-identity';
import type { ExoCommand } from './exo-command';
import type { ExoLogs } from './exo-logs';
import type { ExoTiming } from './exo-timing';

export interface ChildExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The spawn itself failed (ENOENT, EACCES): exo never ran. */
  spawnError: NodeJS.ErrnoException | null;
}

export function describeExit(exit: { code: number | null; signal: string | null }): string {
  if (exit.signal) return `killed by ${exit.signal}`;
  return `exit code ${exit.code ?? 'unknown'}`;
}

type ChildTiming = Pick<ExoTiming, 'childScanIntervalMs' | 'runnerTermGraceMs' | 'runnerKillWaitMs'>;

export class ExoChild {
  private child: ChildProcess | null = null;
  private exit: Promise<ChildExit> | null = null;
  private alive = false;
  /** The exit of the child is exobar's doing (a stop), not a crash. */
  private expecting = false;
  /** exo's descendants seen while it ran: pid → start time. */
  private records = new Map<number, string>();
  private scanTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly logs: ExoLogs,
    private readonly timing: ChildTiming,
    /** Told what the child is doing while it stops runners (null when done): the state's `progress`. */
    private readonly progress: (words: string | null) => void,
  ) {}

  /** True while the exo exobar spawned is alive. */
  get running(): boolean {
    return this.alive;
  }

  /** The pid of the last exo spawned (alive or not). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True when the coming exit is exobar's doing (a stop), not a crash. */
  get exitExpected(): boolean {
    return this.expecting;
  }

  /** Whether `child` is still the exo spawned last. */
  isCurrent(child: ChildProcess): boolean {
    return this.child === child;
  }

  /** The exit of the last exo spawned, once it has exited; null while it runs. */
  async lastExit(): Promise<ChildExit | null> {
    return this.alive ? null : await this.exit;
  }

  /** Spawns exo in `cwd`, its output into the logs; the promise resolves at its exit, its last lines in. */
  spawn(exo: ExoCommand, cwd: string): { child: ChildProcess; exited: Promise<ChildExit> } {
    // detached: exo leads its own process group, so a Ctrl-C meant for exobar's terminal
    // does not reach it; exobar alone decides how exo stops.
    const child = spawn(exo.command, exo.args, { cwd, env: exo.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.expecting = false;
    this.alive = child.pid !== undefined;
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => this.logs.append('stdout', chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => this.logs.append('stderr', chunk));
    const exited = new Promise<ChildExit>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, spawnError: error }));
      // 'close': the streams are drained too, so the last lines are in before the exit is handled.
      child.once('close', (code, signal) => resolve({ code, signal, spawnError: null }));
    }).then((exit) => {
      if (this.child === child) this.alive = false;
      this.logs.flush('stdout');
      this.logs.flush('stderr');
      return exit;
    });
    this.exit = exited;
    return { child, exited };
  }

  /** The last resort: SIGKILL to the process group of a live exo (its runners are in it unless they left it). */
  killNow(): boolean {
    const pid = this.child?.pid;
    if (!this.alive || pid === undefined) return false;
    this.expecting = true;
    return sendSignal(-pid, 'SIGKILL') || sendSignal(pid, 'SIGKILL');
  }

  /**
   * Stops the live exo by `ladder`, its exit expected from now on; `escalating` is told
   * before each rung after the first. Returns the last signal sent.
   */
  async stop(ladder: KillRung[], escalating: (rung: KillRung, previous: KillRung) => void): Promise<NodeJS.Signals | null> {
    const pid = this.child?.pid;
    if (pid === undefined) return null;
    this.expecting = true;
    await this.recordDescendants(pid);
    const climbed = await climbKillLadder(ladder, {
      send: (signal) => sendSignal(pid, signal),
      waitExit: (ms) => this.waitExit(ms),
      beforeRung: async (rung, previous) => {
        if (previous) {
          escalating(rung, previous);
          await this.recordDescendants(pid);
        }
      },
    });
    return climbed.signal;
  }

  /** Records exo's descendants now and every `childScanIntervalMs` while it runs. */
  startScanning(pid: number): void {
    this.stopScanning();
    const scan = (): void => void this.recordDescendants(pid);
    scan();
    this.scanTimer = setInterval(scan, this.timing.childScanIntervalMs);
    this.scanTimer.unref();
  }

  stopScanning(): void {
    if (this.scanTimer) clearInterval(this.scanTimer);
    this.scanTimer = null;
  }

  /** A new start: the runners recorded for the last one are forgotten. */
  forgetRunners(): void {
    this.records = new Map();
  }

  /**
   * Stops what exo left behind: its descendants recorded while it ran, plus the members
   * of its process group now (a runner spawned after the last recording).
   */
  async stopLeftRunners(): Promise<LeftoverResult[]> {
    const exoPid = this.child?.pid;
    if (exoPid !== undefined) for (const member of await groupMembers(exoPid)) this.records.set(member.pid, member.startTime);
    const records = [...this.records].map(([pid, startTime]) => ({ pid, startTime }));
    if (records.length === 0) return [];
    this.progress(`stopping runners exo left behind (${records.length} recorded)`);
    const results = await stopLeftovers(records, { termGraceMs: this.timing.runnerTermGraceMs, killWaitMs: this.timing.runnerKillWaitMs, pollMs: 100 });
    this.records = new Map();
    this.progress(null);
    return results;
  }

  private async recordDescendants(pid: number): Promise<void> {
    for (const child of await descendants(pid)) this.records.set(child.pid, child.startTime);
  }

  private async waitExit(ms: number): Promise<boolean> {
    if (!this.alive || !this.exit) return true;
    let timer: NodeJS.Timeout | undefined;
    const done = await Promise.race([this.exit.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)))]);
    clearTimeout(timer);
    return done;
  }
}
