/**
 * Checks on demand: starts a sharing check (one at a time), reports its progress,
 * cancels it, and keeps every finished report in `<dataDir>/checks/` (`<id>.json`
 * with the result, `<id>.md` with the markdown report), read back after a restart.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SharingCheckResultSchema, type CheckStatus, type SharingCheckOptions, type SharingCheckResult } from '../../../shared/sharing-check';
import type { ExobarNode } from '../node/node-types';
import { CheckCancelled } from './check-context';
import type { DecodeExperimentOptions } from './decode-experiment';
import { runSharingCheck } from './sharing-check';
import { sharingReportMarkdown } from './sharing-report';

export interface CheckManagerOptions {
  node: ExobarNode;
  dataDir: string;
  /** Experiment 2 under a sharing policy (for the fair-sharing setting). */
  decode?: Pick<DecodeExperimentOptions, 'policies' | 'applyPolicy'>;
  appleSilicon?: boolean;
}

interface Running {
  status: CheckStatus;
  abort: AbortController;
  done: Promise<void>;
}

export class CheckBusyError extends Error {
  override name = 'CheckBusyError';
}

export class CheckManager {
  private readonly checks = new Map<string, Running>();
  private current: Running | null = null;

  constructor(private readonly options: CheckManagerOptions) {}

  get dir(): string {
    return join(this.options.dataDir, 'checks');
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
      progress: (step, fraction) => {
        status.step = step;
        status.progress = Math.max(status.progress, Math.min(1, fraction));
      },
    })
      .then(
        (result) => {
          const markdown = sharingReportMarkdown(result);
          this.save(result, markdown);
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
    const kept = this.read(id);
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

  /** Kept reports, newest first: id, when, models, simulated, the headline ratio. */
  list(): Array<{ id: string; startedAt: number; models: string[]; simulated: boolean; decodeRatio: number | null }> {
    return this.ids()
      .map((id) => this.read(id)?.result)
      .filter((r): r is SharingCheckResult => !!r)
      .sort((x, y) => y.startedAt - x.startedAt)
      .map((r) => ({
        id: r.id,
        startedAt: r.startedAt,
        models: r.models.map((m) => m.id),
        simulated: r.simulated,
        decodeRatio: r.decode.ran ? r.decode.decodeRatio : null,
      }));
  }

  /** The newest `n` reports' markdown files, for the diagnostic bundle. */
  latestReports(n = 3): Array<{ name: string; data: string }> {
    return this.list()
      .slice(0, n)
      .flatMap((r) => {
        const kept = this.read(r.id);
        return kept
          ? [
              { name: `${r.id}.md`, data: kept.markdown },
              { name: `${r.id}.json`, data: JSON.stringify(kept.result, null, 2) },
            ]
          : [];
      });
  }

  private ids(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((f) => f.endsWith('.json'))
        .map((f) => f.slice(0, -5));
    } catch {
      return [];
    }
  }

  private read(id: string): { result: SharingCheckResult; markdown: string } | null {
    if (!/^sharing-[\w-]+$/.test(id)) return null;
    try {
      const result = SharingCheckResultSchema.parse(JSON.parse(readFileSync(join(this.dir, `${id}.json`), 'utf8')));
      let markdown: string;
      try {
        markdown = readFileSync(join(this.dir, `${id}.md`), 'utf8');
      } catch {
        markdown = sharingReportMarkdown(result);
      }
      return { result, markdown };
    } catch {
      return null;
    }
  }

  private save(result: SharingCheckResult, markdown: string): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(this.dir, `${result.id}.json`), `${JSON.stringify(result, null, 2)}\n`);
    writeFileSync(join(this.dir, `${result.id}.md`), markdown);
  }
}
