/** Runner statuses and counts in the words the tray, menu, notifications and `exobar status` show. */
import type { RunnerStatus } from './runner-protocol';
import { isFailed, isServingStatus } from './instance-state';
import { plainRunnerStatus } from './runner-status-words';
import type { InstanceSnapshot } from './snapshot';

/** "Ready", "Loading 12 of 28 layers", "Failed: out of memory", ... (the page's words; a failure's message cut to 60 characters). */
export function runnerStatusWords(status: RunnerStatus): string {
  if (status.kind === 'RunnerFailed') return `Failed: ${truncate(status.errorMessage, 60)}`;
  return plainRunnerStatus(status);
}

/**
 * An instance's status in words: its runner's for a local instance; for an exo
 * instance, a failed runner's message or how many of its runners serve.
 */
export function instanceStatusWords(instance: InstanceSnapshot): string {
  if (instance.source === 'local') {
    // The supervisor's typed state first: "restarting" and "needs attention" are not runner statuses.
    const { state, lastExit, attention } = instance.runner;
    if (state === 'restarting') return lastExit?.cause === 'stuck' ? 'Restarting (was stuck)' : 'Restarting';
    if (state === 'draining') return 'Relaunching: finishing the requests in flight';
    if (state === 'needs_attention') return `Needs attention: ${truncate(attention ?? lastExit?.message ?? '', 60)}`;
    if (state === 'failed')
      return `Failed: ${truncate(lastExit?.message ?? (instance.runner.status.kind === 'RunnerFailed' ? instance.runner.status.errorMessage : ''), 60)}`;
    return runnerStatusWords(instance.runner.status);
  }
  const runners = instance.exo.runners;
  const failed = isFailed(instance) ? runners.find((r) => r.status === 'RunnerFailed') : undefined;
  if (failed) return `Failed: ${truncate(failed.errorMessage ?? 'runner failed', 60)}`;
  const serving = runners.filter((r) => isServingStatus(r.status)).length;
  return `exo: ${serving}/${runners.length} runners serving`;
}

/** Requests waiting in the node's queue for this model (not yet written to the runner; for its load included). */
export function queuedCount(instance: InstanceSnapshot): number {
  return instance.queue.requests.filter((r) => r.phase === 'queued' || r.phase === 'loading').length;
}

/** Requests written to the runner and not finished (awaiting ack, prefilling, decoding, cancelling). */
export function inFlightCount(instance: InstanceSnapshot): number {
  return instance.queue.requests.length - queuedCount(instance);
}

/** Seconds with two decimals, as exo's measurements are quoted ("0.38s"). */
export function formatSeconds(ms: number): string {
  return `${(ms / 1000).toFixed(2)}s`;
}

export function truncate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
