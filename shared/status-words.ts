/**
 * The words and tones every view gives a runner's state: the tray, the menu, the
 * notifications, `exobar status` and the page, for local and exo runners alike. A local
 * runner's words come from its supervisor's one state first (shared/instance-state.ts
 * `runnerLifecycle`), then from the status it reported, so no view calls a runner ready
 * while it is stopping or being killed. exo's own status name (RunnerLoading, ...) stays
 * in a tooltip and in the bundle, where an operator matches it with exo's logs.
 */
import type { RunnerStatus } from './runner-protocol';
import { isFailed, isServingStatus, runnerLifecycle } from './instance-state';
import type { ExoRunnerSnapshot } from './exo-snapshot';
import type { InstanceSnapshot, RunnerState } from './snapshot';

/**
 * exo's runner statuses that need no detail, in the words every view uses. Loading and
 * Failed carry details and are worded by {@link loadingWords} and the callers.
 */
export const PLAIN_RUNNER_STATUS_WORDS: Readonly<Record<string, string>> = {
  RunnerIdle: 'Idle',
  // On the way up, each said as a step of starting, never as an end state: a bare
  // "Connected" or "Loaded" read as done while the launch was still going.
  RunnerConnecting: 'Starting',
  RunnerConnected: 'Starting: connected, loading next',
  RunnerLoaded: 'Starting: loaded, warming up next',
  RunnerWarmingUp: 'Warming up',
  RunnerReady: 'Ready',
  RunnerRunning: 'Running',
  RunnerShuttingDown: 'Stopping',
  RunnerShutdown: 'Stopped',
};

/** "Loading 10 of 16 layers", or "Loading" while the counts are unknown. */
export function loadingWords(layersLoaded: number | null, totalLayers: number | null): string {
  return layersLoaded !== null && totalLayers !== null ? `Loading ${layersLoaded} of ${totalLayers} layers` : 'Loading';
}

/**
 * A runner status in the page's words: "Ready", "Loading 10 of 16 layers", "Starting",
 * "Failed: <exo's message>".
 */
export function plainRunnerStatus(status: RunnerStatus): string {
  if (status.kind === 'RunnerLoading') return loadingWords(status.layersLoaded, status.totalLayers);
  if (status.kind === 'RunnerFailed') return `Failed: ${status.errorMessage}`;
  return PLAIN_RUNNER_STATUS_WORDS[status.kind] ?? status.kind;
}

/**
 * A local runner's status line, from its one state first: "Stopping" from the moment a
 * stop begins (Shutdown sent, then the kill), "Failed" while a runner that went down is
 * killed, "Restarting", "Relaunching", "Needs attention"; only a runner on its way up or
 * serving is worded by the status it reported.
 */
export function localRunnerWords(state: RunnerState, status: RunnerStatus): string {
  switch (state) {
    case 'stopping':
      return 'Stopping';
    case 'stopped':
      return 'Stopped';
    case 'down':
    case 'failed':
    case 'needs_attention':
      // The runner's own failure message when it sent one; the card says below why it is down.
      if (status.kind === 'RunnerFailed') return plainRunnerStatus(status);
      return state === 'needs_attention' ? 'Needs attention' : 'Failed';
    case 'restarting':
      return 'Restarting';
    case 'draining':
      return 'Relaunching';
    case 'starting':
    case 'loading':
    case 'warming_up':
      // On its way up: a status left from before (Ready, Failed, ...) does not speak for it.
      return ON_THE_WAY.has(status.kind) ? plainRunnerStatus(status) : STATE_WORDS[state];
    case 'ready':
    case 'running':
      return plainRunnerStatus(status);
  }
}

/** Statuses a runner reports on its way up. */
const ON_THE_WAY: ReadonlySet<string> = new Set(['RunnerIdle', 'RunnerConnecting', 'RunnerConnected', 'RunnerLoading', 'RunnerLoaded', 'RunnerWarmingUp']);
const STATE_WORDS = { starting: 'Starting', loading: 'Loading', warming_up: 'Warming up' } as const;

/**
 * The status dot's colour: serving (ok, busy when running), on its way up (starting: the
 * header's pulsing "loading" colour, not the warning orange), stopped or idle, a status
 * exobar cannot read (warn), failed (bad).
 */
export type Tone = 'ok' | 'busy' | 'idle' | 'starting' | 'warn' | 'bad';

/** The tone of a runner status (exo's tag): the one map for local and exo runners. */
export function statusTone(status: string): Tone {
  switch (status) {
    case 'RunnerReady':
      return 'ok';
    case 'RunnerRunning':
      return 'busy';
    case 'RunnerFailed':
      return 'bad';
    case 'RunnerShuttingDown':
    case 'RunnerShutdown':
    case 'RunnerIdle':
      return 'idle';
    default:
      // Connecting, loading, warming up: on the way to ready.
      return 'starting';
  }
}

/** A local runner's tone, from its lifecycle first (failed is bad, stopping idle, restarting on its way), then its status. */
export function localRunnerTone(state: RunnerState, status: RunnerStatus): Tone {
  switch (runnerLifecycle(state, status)) {
    case 'failed':
      return 'bad';
    case 'stopping':
      return 'idle';
    case 'restarting':
    case 'loading':
      return 'starting';
    case 'serving':
      return statusTone(status.kind);
  }
}

/** "Loading 9 of 16 layers", "Ready", "Failed: <message>", "Unknown status (RunnerParked)". */
export function exoRunnerWords(runner: ExoRunnerSnapshot): string {
  if (!runner.known) return `Unknown status (${runner.status})`;
  if (runner.status === 'RunnerLoading') return loadingWords(runner.layersLoaded, runner.totalLayers);
  if (runner.status === 'RunnerFailed') return `Failed: ${runner.errorMessage ?? 'no message from exo'}`;
  if (runner.status === 'missing') return 'Not in exo’s runner list';
  return PLAIN_RUNNER_STATUS_WORDS[runner.status] ?? runner.status;
}

/** The status dot's colour for an exo runner. */
export function exoRunnerTone(runner: ExoRunnerSnapshot): Tone {
  if (!runner.known || runner.status === 'missing') return 'warn';
  return statusTone(runner.status);
}

/** "Ready", "Loading 12 of 28 layers", "Failed: out of memory", ... (a failure's message cut to 60 characters). */
export function runnerStatusWords(status: RunnerStatus): string {
  if (status.kind === 'RunnerFailed') return `Failed: ${truncate(status.errorMessage, 60)}`;
  return plainRunnerStatus(status);
}

/**
 * An instance's status in words: a local runner's from its one state first (with why it
 * restarts, needs attention or failed), then its reported status; for an exo instance, a
 * failed runner's message or how many of its runners serve.
 */
export function instanceStatusWords(instance: InstanceSnapshot): string {
  if (instance.source === 'local') {
    const { state, status, lastExit, attention } = instance.runner;
    if (state === 'restarting') return lastExit?.cause === 'stuck' ? 'Restarting (was stuck)' : 'Restarting';
    if (state === 'draining') return 'Relaunching: finishing the requests in flight';
    if (state === 'needs_attention') return `Needs attention: ${truncate(attention ?? lastExit?.message ?? '', 60)}`;
    if (state === 'failed' || state === 'down') {
      const message = status.kind === 'RunnerFailed' ? status.errorMessage : (lastExit?.message ?? '');
      return message ? `Failed: ${truncate(message, 60)}` : 'Failed';
    }
    return state === 'ready' || state === 'running' ? runnerStatusWords(status) : localRunnerWords(state, status);
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

/** One line of `text`, cut to `max` characters with an ellipsis. */
export function truncate(text: string, max: number): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length <= max ? oneLine : `${oneLine.slice(0, max - 1)}…`;
}

/** "1 model", "2 models". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}
