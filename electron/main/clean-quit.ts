/**
 * Quitting stops every runner first. Electron does not wait for promises in
 * 'before-quit', so the first quit is cancelled (preventDefault), the core is stopped
 * (runners get SIGTERM, then SIGKILL, in-flight requests end with an error), and only
 * then does the app exit. If stopping hangs, the runners' process groups are killed
 * at a deadline, so the app never leaves a runner behind.
 */
import type { App } from 'electron';
import { localInstances } from '../../shared/instance-state';
import type { Snapshot } from '../../shared/snapshot';

/** How long a clean stop may take before the runners are killed (as `exobar serve`). */
export const STOP_DEADLINE_MS = 15_000;

export interface CleanQuitOptions {
  app: Pick<App, 'on' | 'exit'>;
  /** Stops the core; resolves once every runner has exited. */
  stop(): Promise<void>;
  /** Last resort when stop hangs or fails. */
  forceKill(): void;
  deadlineMs?: number;
  log?: { warn(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

export type QuitState = 'running' | 'stopping' | 'stopped';

export function installCleanQuit(options: CleanQuitOptions): { state(): QuitState } {
  const { app, log } = options;
  let state: QuitState = 'running';

  const finish = (code: number) => {
    if (state === 'stopped') return;
    state = 'stopped';
    app.exit(code);
  };

  app.on('before-quit', (event) => {
    if (state === 'stopped') return;
    // Not yet: the runners must stop first. Quitting again while stopping changes nothing.
    event.preventDefault();
    if (state === 'stopping') return;
    state = 'stopping';
    log?.info({}, 'quitting: stopping every runner');
    const deadline = setTimeout(() => {
      log?.warn({ deadlineMs: options.deadlineMs ?? STOP_DEADLINE_MS }, 'runners did not stop in time: killing them');
      options.forceKill();
      finish(1);
    }, options.deadlineMs ?? STOP_DEADLINE_MS);
    options.stop().then(
      () => {
        clearTimeout(deadline);
        finish(0);
      },
      (error: unknown) => {
        clearTimeout(deadline);
        log?.warn({ err: error }, 'stopping the core failed: killing the runners');
        options.forceKill();
        finish(1);
      },
    );
  });

  return { state: () => state };
}

/** SIGKILLs every runner's process group (runners lead their own groups); errors mean already gone. */
export function killRunnerGroups(snapshot: Snapshot | null, kill: (pid: number, signal: NodeJS.Signals) => void = process.kill): number {
  let killed = 0;
  for (const instance of snapshot ? localInstances(snapshot) : []) {
    const pid = instance.runner.pid;
    if (pid == null) continue;
    try {
      kill(-pid, 'SIGKILL');
      killed++;
    } catch {
      try {
        kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return killed;
}
