/**
 * exo's runner statuses and tasks in plain words for the exo views. The exo tag itself
 * (RunnerLoading, MlxRingInstance, ...) goes in a tooltip, so an operator can still
 * match what they see with exo's own logs and dashboard.
 */
import type { ExoRunnerSnapshot, ExoSection } from '../../../shared/exo-snapshot';
import { PLAIN_RUNNER_STATUS_WORDS } from '../../../shared/runner-status-words';
import type { Tone } from './runner-status';

/** "Loading 9 of 16 layers", "Ready", "Failed: <message>", "Unknown status (RunnerParked)". */
export function exoRunnerWords(runner: ExoRunnerSnapshot): string {
  if (!runner.known) return `Unknown status (${runner.status})`;
  if (runner.status === 'RunnerLoading') {
    return runner.layersLoaded !== null && runner.totalLayers !== null ? `Loading ${runner.layersLoaded} of ${runner.totalLayers} layers` : 'Loading';
  }
  if (runner.status === 'RunnerFailed') return `Failed: ${runner.errorMessage ?? 'no message from exo'}`;
  if (runner.status === 'missing') return 'Not in exo’s runner list';
  return PLAIN_RUNNER_STATUS_WORDS[runner.status] ?? runner.status;
}

/** The status dot's colour for an exo runner. */
export function exoRunnerTone(runner: ExoRunnerSnapshot): Tone {
  if (!runner.known || runner.status === 'missing') return 'warn';
  if (runner.status === 'RunnerReady') return 'ok';
  if (runner.status === 'RunnerRunning') return 'busy';
  if (runner.status === 'RunnerFailed') return 'bad';
  if (runner.status === 'RunnerShuttingDown' || runner.status === 'RunnerShutdown' || runner.status === 'RunnerIdle') return 'idle';
  return 'warn';
}

/** A clock time, 24 h, as the source header shows "not reachable since 14:03:07". */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString('en-GB', { hour12: false });
}

/** "connected" or "not reachable since HH:MM:SS" (never reached: "not reachable yet"). */
export function exoConnectionWords(exo: ExoSection): string {
  if (exo.connected) return 'connected';
  return exo.lastGoodPollAt === null ? `not reachable (trying since ${clockTime(exo.since)})` : `not reachable since ${clockTime(exo.since)}`;
}
