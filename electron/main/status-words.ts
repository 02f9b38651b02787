/** Runner statuses and counts in the words the tray, menu and notifications show. */
import type { RunnerStatus } from '../../shared/runner-protocol';
import type { InstanceSnapshot } from '../../shared/snapshot';

/** "Ready", "Loading 12/28 layers", "Failed: out of memory", ... (exo's runner statuses). */
export function runnerStatusWords(status: RunnerStatus): string {
  switch (status.kind) {
    case 'RunnerIdle':
      return 'Idle';
    case 'RunnerConnecting':
      return 'Starting';
    case 'RunnerConnected':
      return 'Connected';
    case 'RunnerLoading':
      return `Loading ${status.layersLoaded}/${status.totalLayers} layers`;
    case 'RunnerLoaded':
      return 'Loaded';
    case 'RunnerWarmingUp':
      return 'Warming up';
    case 'RunnerReady':
      return 'Ready';
    case 'RunnerRunning':
      return 'Running';
    case 'RunnerShuttingDown':
      return 'Stopping';
    case 'RunnerShutdown':
      return 'Stopped';
    case 'RunnerFailed':
      return `Failed: ${truncate(status.errorMessage, 60)}`;
  }
}

/**
 * An instance's status in words: its runner's for a local instance; for an exo
 * instance, a failed runner's message or how many of its runners serve.
 */
export function instanceStatusWords(instance: InstanceSnapshot): string {
  if (instance.source === 'local') return runnerStatusWords(instance.runner.status);
  const runners = instance.exo.runners;
  const failed = runners.find((r) => r.status === 'RunnerFailed');
  if (failed) return `Failed: ${truncate(failed.errorMessage ?? 'runner failed', 60)}`;
  const serving = runners.filter((r) => r.status === 'RunnerReady' || r.status === 'RunnerRunning').length;
  return `exo: ${serving}/${runners.length} runners serving`;
}

/** Requests waiting in the node's queue for this model (not yet written to the runner). */
export function queuedCount(instance: InstanceSnapshot): number {
  return instance.queue.requests.filter((r) => r.phase === 'queued').length;
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
