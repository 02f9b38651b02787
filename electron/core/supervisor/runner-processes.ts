/**
 * The runner processes one supervisor started: the current one (the runner it talks to)
 * and every one that has not exited yet, one being stopped included, so a last-resort
 * kill reaches exactly those. Records each pid where a later exobar finds orphans.
 */
import type { RunnerInput } from '../../../shared/runner-protocol';
import { RunnerProcess, type RunnerLogs, type RunnerProcessHandlers } from './runner-process';
import type { SpawnSpec } from './spawn-spec';
import type { SupervisorOptions } from './supervisor-options';

export type RunnerProcessesOptions = Pick<SupervisorOptions, 'instanceId' | 'createProcess' | 'processes' | 'logGeneratedText'>;

export class RunnerProcesses {
  private proc: RunnerProcess | null = null;
  private readonly started = new Set<RunnerProcess>();

  constructor(
    private readonly options: RunnerProcessesOptions,
    private readonly logs: RunnerLogs,
  ) {}

  /** The runner's process now; null once the supervisor let it go (it is down or stopping). */
  get current(): RunnerProcess | null {
    return this.proc;
  }

  /** Starts a runner process and makes it the current one. */
  spawn(spec: SpawnSpec, handlers: RunnerProcessHandlers): RunnerProcess {
    const create = this.options.createProcess ?? ((...args: ConstructorParameters<typeof RunnerProcess>) => new RunnerProcess(...args));
    const proc = create(
      spec,
      this.logs,
      {
        ...handlers,
        onExit: (exit) => {
          if (proc.pid !== null) this.options.processes?.ended(proc.pid);
          handlers.onExit(exit);
        },
      },
      { logGeneratedText: this.options.logGeneratedText ?? false },
    );
    this.proc = proc;
    this.started.add(proc);
    if (proc.pid !== null) void this.options.processes?.started(this.options.instanceId, proc.pid).catch(() => undefined);
    return proc;
  }

  /** The current process is no longer the runner (it went down, or was stopped): nothing more is written to it. */
  release(): void {
    this.proc = null;
  }

  /** Writes to the current runner; nothing when there is none. */
  send(message: RunnerInput): void {
    this.proc?.send(message);
  }

  /** The pids of the processes still alive, read now. */
  livePids(): number[] {
    for (const proc of this.started) if (!proc.alive) this.started.delete(proc);
    return [...this.started].flatMap((proc) => (proc.pid === null ? [] : [proc.pid]));
  }
}
