/**
 * Checks on demand: starts a sharing check (one at a time), reports its progress,
 * cancels it, and keeps every finished report in `<dataDir>/checks/` (check-store.ts),
 * read back after a restart.
 */
import { randomBytes } from 'node:crypto';
import type { CheckStatus, CheckSummary, SharingCheckOptions } from '../../../shared/sharing-check';
import type { ExobarNode } from '../node/node-types';
import { CheckCancelled } from './check-context';
import { CheckStore, checksDir } from './check-store';
import type { DecodeExperimentOptions } from './decode-experiment';
import type { ExoCheckHooks } from './exo-check-target';
import { runSharingCheck } from './sharing-check';
import { sharingReportMarkdown } from './sharing-report';

export interface CheckManagerOptions {
  node: ExobarNode;
  dataDir: string;
  /** Experiment 2 under a sharing policy (for the fair-sharing setting). */
  decode?: Pick<DecodeExperimentOptions, 'policies' | 'applyPolicy'>;
  appleSilicon?: boolean;
  /** The attached exo: a check of exo's models goes through exobar's proxy, with the hold on and off. */
  exo?: ExoCheckHooks;
}

interface Running {
  status: CheckStatus;
  abort: AbortController;
  done: Promise<void>;
}

export class CheckBusyError extends Error {
  override name = 'CheckBusyError';
  /** The API's and the page's code for it. */
  readonly code = 'check_running';
}

export class CheckManager {
  private readonly checks = new Map<string, Running>();
  private current: Running | null = null;
  private readonly store: CheckStore;

  constructor(private readonly options: CheckManagerOptions) {
    this.store = new CheckStore(checksDir(options.dataDir));
  }

  get dir(): string {
    return this.store.dir;
  }

  /** Starts a check; throws CheckBusyError while one runs. */
  start(checkOptions: SharingCheckOptions): CheckStatus {
    if (this.current) throw new CheckBusyError(`a check is already running (${this.current.status.id}); cancel it or wait`);
    const id = `sharing-${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`;
    const abort = new AbortController();
    const status: CheckStatus = {
      id,
      kind: 'sharing',
      state: 'running',
      step: 'Starting',
      progress: 0,
      startedAt: Date.now(),
      error: null,
      result: null,
      markdown: null,
    };
    const running: Running = { status, abort, done: Promise.resolve() };
    running.done = runSharingCheck({
      id,
      node: this.options.node,
      options: checkOptions,
      signal: abort.signal,
      decode: this.options.decode,
      appleSilicon: this.options.appleSilicon,
      exo: this.options.exo,
      progress: (step, fraction) => {
        status.step = step;
        status.progress = Math.max(status.progress, Math.min(1, fraction));
      },
    })
      .then(
        (result) => {
          const markdown = sharingReportMarkdown(result);
          this.store.save(result, markdown);
          Object.assign(status, { state: 'done', step: 'Done', progress: 1, result, markdown });
        },
        (error: unknown) => {
          const cancelled = error instanceof CheckCancelled || abort.signal.aborted;
          Object.assign(status, {
            state: cancelled ? 'cancelled' : 'failed',
            step: cancelled ? 'Cancelled' : 'Failed',
            error: cancelled ? null : ((error as Error).message ?? String(error)),
          });
        },
      )
      .finally(() => {
        if (this.current === running) this.current = null;
      });
    this.checks.set(id, running);
    this.current = running;
    return { ...status };
  }

  /** A check's status: live, or a kept report. */
  get(id: string): CheckStatus | null {
    const live = this.checks.get(id);
    if (live) return { ...live.status };
    const kept = this.store.read(id);
    if (!kept) return null;
    return {
      id,
      kind: 'sharing',
      state: 'done',
      step: 'Done',
      progress: 1,
      startedAt: kept.result.startedAt,
      error: null,
      result: kept.result,
      markdown: kept.markdown,
    };
  }

  /** Cancels a running check; resolves once it has put everything back. False: not running. */
  async cancel(id: string): Promise<boolean> {
    const live = this.checks.get(id);
    if (!live || live.status.state !== 'running') return false;
    live.abort.abort();
    await live.done;
    return true;
  }

  /** Waits for a check to end (CLI). */
  async wait(id: string): Promise<CheckStatus | null> {
    await this.checks.get(id)?.done;
    return this.get(id);
  }

  /** Kept reports, newest first. */
  list(): CheckSummary[] {
    return this.store.list();
  }

  /** The check running now, or null. */
  running(): CheckStatus | null {
    return this.current ? { ...this.current.status } : null;
  }
}
