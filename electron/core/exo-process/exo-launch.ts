/**
 * One start of this Mac's exo, as a list of steps in order: announce the command, check
 * that the port and the pidfile are free and that exobar is not quitting, spawn exo,
 * wait until its API answers, mark it running. A step that answers `halt` ends the start;
 * it has set the state that says why. Also the wait for exo's pidfile before a restart,
 * and the reading of exo's output for what a start needs to know (the pidfile held, the
 * port taken, the fast-synch line).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import type { ExoProcessFailure } from '../../../shared/exo-process';
import { wedgedReason } from '../process/leftover-runners';
import { describeExit, type ChildExit, type ExoChild } from './exo-child';
import { buildExoCommand, type ExoCommand, type ExoProcessSettings } from './exo-command';
import type { FastSynchDecision } from './exo-fast-synch-decision';
import { exoHomeDir, exoLogPath, exoPidfilePath, pidfileHolder } from './exo-home';
import type { ExoLogs } from './exo-logs';
import { classifyExoLine, lastFastSynchLine } from './exo-output';
import type { ExoProcessStateStore } from './exo-process-state-store';
import { seconds, type ExoTiming } from './exo-timing';
import { portInUse } from './port-check';
import { waitForExoApi } from './readiness';

/** What a start needs from the manager that runs it. */
export interface ExoLaunchHost {
  apiPort: number;
  timing: ExoTiming;
  now: () => number;
  logs: ExoLogs;
  child: ExoChild;
  store: ExoProcessStateStore;
  /** The environment exo inherits before `exo.env`. */
  baseEnv: NodeJS.ProcessEnv;
  settings(): ExoProcessSettings;
  /** exo's environment as the settings make it (where its home and pidfile are). */
  exoEnv(): NodeJS.ProcessEnv;
  /** The fast-synch value this start uses. */
  decision(): FastSynchDecision;
  /** True once exobar is quitting: nothing starts any more. */
  closed(): boolean;
  /** exo failed (the state says `failure` and why). */
  fail(failure: ExoProcessFailure, reason: string): void;
  /** The start failed; an automatic start (a crash restart) schedules the next one. */
  startFailed(failure: ExoProcessFailure, reason: string, automatic: boolean): void;
  needsAttention(reason: string): void;
  stopNow(): Promise<void>;
  /** exo exited on its own after it ran. */
  crashed(exit: ChildExit): void;
}

/** One start as its steps see it: what each step found for the next. */
interface LaunchRun {
  automatic: boolean;
  exo: ExoCommand;
  child: ChildProcess | null;
  exited: Promise<ChildExit> | null;
  nodeId: string | null;
}

/** A launch step's answer: go on to the next step, or stop here (the step has said why). */
type LaunchStep = 'next' | 'halt';

export class ExoLaunch {
  /** Output signals of the current start (pidfile held, port taken) and its fast-synch line. */
  private seen = { pidfileHeld: false, portTaken: false, fastSynch: null as boolean | null };
  private readyAbort: AbortController | null = null;

  constructor(private readonly host: ExoLaunchHost) {}

  /** One start; `automatic`: a crash restart, whose failure schedules the next one. */
  async run(automatic: boolean): Promise<void> {
    const run: LaunchRun = { automatic, exo: this.announce(), child: null, exited: null, nodeId: null };
    const steps: ReadonlyArray<(run: LaunchRun) => LaunchStep | Promise<LaunchStep>> = [
      this.checkPortFree,
      this.checkPidfileFree,
      this.checkNotQuitting,
      this.spawnExo,
      this.waitUntilReady,
      this.markRunning,
    ];
    for (const step of steps) if ((await step.call(this, run)) === 'halt') return;
  }

  /** Calls off a start that waits for exo's API (a stop, a restart, quitting). */
  abort(reason: string): void {
    this.readyAbort?.abort(new Error(reason));
  }

  /** Waits until no live process holds `~/.exo/exo.pid`; false (and the state says who holds it) on timeout. */
  async waitForPidfile(): Promise<boolean> {
    const { host } = this;
    const path = exoPidfilePath(host.exoEnv());
    const deadline = host.now() + host.timing.pidfileReleaseTimeoutMs;
    for (let holder = pidfileHolder(path); holder !== null; holder = pidfileHolder(path)) {
      if (host.now() >= deadline) {
        host.fail(
          'pidfile_held',
          `Another exo (pid ${holder}) still holds ${path} after ${seconds(host.timing.pidfileReleaseTimeoutMs)}: stop it, or attach to it instead of starting one`,
        );
        return false;
      }
      host.store.update({ progress: `waiting for ${path} to be released (held by pid ${holder})` });
      await new Promise((resolve) => setTimeout(resolve, host.timing.pollIntervalMs));
    }
    return true;
  }

  /** One line of exo's output: what it says about this start, and its fast-synch line. */
  readLine(line: string): void {
    const signal = classifyExoLine(line);
    if (!signal) return;
    if (signal.kind === 'pidfile_held') this.seen.pidfileHeld = true;
    else if (signal.kind === 'port_taken') this.seen.portTaken = true;
    else {
      this.seen.fastSynch = signal.enabled;
      const fastSynch = this.host.store.current.fastSynch;
      if (fastSynch) this.host.store.update({ fastSynch: { ...fastSynch, observed: signal.enabled, mismatch: signal.enabled !== fastSynch.enabled } });
    }
  }

  /** The command exo starts with (from the settings and the fast-synch decision), and the state that says a start is under way. */
  private announce(): ExoCommand {
    const { host } = this;
    const decision = host.decision();
    const exo = buildExoCommand(host.settings(), host.apiPort, decision.enabled, host.baseEnv);
    host.logs.clearLastLines();
    this.seen = { pidfileHeld: false, portTaken: false, fastSynch: null };
    host.child.forgetRunners();
    host.store.update({
      status: 'starting',
      command: [exo.command, ...exo.args],
      pid: null,
      startedAt: null,
      readyAt: null,
      nodeId: null,
      // `exit` stays: after a crash restart the views still show how the last run ended.
      failure: null,
      reason: exo.dropped.length > 0 ? `exobar sets the API port and fast synch itself; ignored from exo.args: ${exo.dropped.join(' ')}` : null,
      progress: `checking that port ${host.apiPort} is free`,
      fastSynch: { enabled: decision.enabled, reason: decision.reason, observed: null, mismatch: false },
      restartNeeded: null,
    });
    return exo;
  }

  private async checkPortFree(run: LaunchRun): Promise<LaunchStep> {
    const port = this.host.apiPort;
    if (!(await portInUse(port))) return 'next';
    this.host.startFailed(
      'port_taken',
      `Port ${port} is already in use, so exo could not serve its API there: stop what listens on it (another exo?) or attach to it`,
      run.automatic,
    );
    return 'halt';
  }

  private checkPidfileFree(run: LaunchRun): LaunchStep {
    const pidfile = exoPidfilePath(run.exo.env);
    const holder = pidfileHolder(pidfile);
    if (holder === null) return 'next';
    this.host.startFailed(
      'pidfile_held',
      `Another exo (pid ${holder}) holds ${pidfile}: only one exo runs per user; attach to it, or stop it first`,
      run.automatic,
    );
    return 'halt';
  }

  private checkNotQuitting(): LaunchStep {
    if (!this.host.closed()) return 'next';
    this.host.store.update({ status: 'stopped', reason: 'exobar is quitting', progress: null });
    return 'halt';
  }

  /** Spawns exo in its home, its output into the logs, its exit watched. */
  private spawnExo(run: LaunchRun): LaunchStep {
    const { exo } = run;
    const { host } = this;
    const home = exoHomeDir(exo.env);
    mkdirSync(home, { recursive: true });
    host.logs.note(`starting: ${[exo.command, ...exo.args].join(' ')} (EXO_FAST_SYNCH=${exo.env.EXO_FAST_SYNCH})`);
    const startedAt = host.now();
    const { child, exited } = host.child.spawn(exo, home);
    if (child.pid !== undefined) {
      host.store.update({ pid: child.pid, startedAt, progress: 'started; waiting for its API' });
      host.child.startScanning(child.pid);
    }
    run.child = child;
    run.exited = exited;
    return 'next';
  }

  /** Waits for exo's API to answer, for exo to exit, or for the ready timeout (exo is then stopped). */
  private async waitUntilReady(run: LaunchRun): Promise<LaunchStep> {
    const { host } = this;
    const abort = new AbortController();
    this.readyAbort = abort;
    const timer = setTimeout(() => abort.abort(new Error('timeout')), host.timing.readyTimeoutMs);
    const ready = waitForExoApi({
      port: host.apiPort,
      signal: abort.signal,
      intervalMs: host.timing.pollIntervalMs,
      onProgress: (step) => host.store.update({ progress: step }),
    }).then(
      (nodeId) => ({ nodeId }),
      () => null,
    );
    const outcome = await Promise.race([ready, run.exited!.then((exit) => ({ exit }))]);
    clearTimeout(timer);
    abort.abort(new Error('settled'));
    this.readyAbort = null;

    if (outcome && 'exit' in outcome) {
      await this.exitedDuringStart(outcome.exit, run.automatic);
      return 'halt';
    }
    if (outcome === null) {
      if (host.child.exitExpected || (abort.signal.reason instanceof Error && abort.signal.reason.message !== 'timeout')) return 'halt'; // stopped by exobar
      await host.stopNow();
      if (host.store.current.status === 'needs_attention') return 'halt';
      host.startFailed(
        'not_ready',
        `exo's API did not answer on port ${host.apiPort} within ${seconds(host.timing.readyTimeoutMs)}; it was stopped`,
        run.automatic,
      );
      return 'halt';
    }
    run.nodeId = outcome.nodeId;
    return 'next';
  }

  /** exo answers: running, its fast-synch line read, and from now on an exit is a crash. */
  private markRunning(run: LaunchRun): LaunchStep {
    const { host } = this;
    const child = run.child!;
    host.store.update({ status: 'running', readyAt: host.now(), nodeId: run.nodeId, progress: null, reason: host.store.current.reason });
    this.checkFastSynchLine(run.exo.env);
    void run.exited!.then((exit) => {
      if (host.child.isCurrent(child) && !host.child.exitExpected) host.crashed(exit);
    });
    return 'next';
  }

  /** The "FAST_SYNCH forced ON|OFF" line: from exo's output, else from its own log (a quiet exo logs to the file only). */
  private checkFastSynchLine(env: NodeJS.ProcessEnv): void {
    let observed = this.seen.fastSynch;
    if (observed === null) {
      try {
        observed = lastFastSynchLine(readFileSync(exoLogPath(env), 'utf8'));
      } catch {
        observed = null;
      }
    }
    const fastSynch = this.host.store.current.fastSynch;
    if (fastSynch && observed !== null) this.host.store.update({ fastSynch: { ...fastSynch, observed, mismatch: observed !== fastSynch.enabled } });
  }

  private async exitedDuringStart(exit: ChildExit, automatic: boolean): Promise<void> {
    const { host } = this;
    const { store } = host;
    host.child.stopScanning();
    store.update({ pid: null, exit: exit.spawnError ? store.current.exit : { code: exit.code, signal: exit.signal, at: host.now() } });
    const command = store.current.command?.[0] ?? 'exo';
    if (exit.spawnError) {
      const code = exit.spawnError.code;
      const words =
        code === 'ENOENT'
          ? `The exo command "${command}" was not found: install exo, or set exo.command to its full path (for the app: EXO.app/Contents/Resources/exo/exo)`
          : code === 'EACCES'
            ? `The exo command "${command}" is not executable (permission denied)`
            : `exo could not be started: ${exit.spawnError.message}`;
      return host.startFailed('command_not_found', words, automatic);
    }
    if (host.child.exitExpected) return;
    const leftovers = await host.child.stopLeftRunners();
    const wedged = wedgedReason(leftovers);
    if (wedged) return host.needsAttention(`exo exited during start (${describeExit(exit)}) and ${wedged}`);
    if (this.seen.pidfileHeld) {
      const holder = pidfileHolder(exoPidfilePath(host.exoEnv()));
      return host.startFailed(
        'pidfile_held',
        `Another exo${holder ? ` (pid ${holder})` : ''} holds exo's pidfile, so this one exited: attach to it, or stop it first`,
        automatic,
      );
    }
    if (this.seen.portTaken)
      return host.startFailed('port_taken', `exo could not bind its API port ${host.apiPort} (address already in use) and exited`, automatic);
    return host.startFailed(
      'exited_during_start',
      `exo exited during start (${describeExit(exit)}) before its API answered; its last lines say why`,
      automatic,
    );
  }
}
