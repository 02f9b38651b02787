import type { RunnerStatus } from './runner-protocol';

/**
 * exo's runner statuses that need no detail, in the words every view uses (tray, menu,
 * page; local and exo runners alike). Loading and Failed carry details and are
 * worded where they are shown.
 */
export const PLAIN_RUNNER_STATUS_WORDS: Readonly<Record<string, string>> = {
  RunnerIdle: 'Idle',
  RunnerConnecting: 'Starting',
  RunnerConnected: 'Connected',
  RunnerLoaded: 'Loaded',
  RunnerWarmingUp: 'Warming up',
  RunnerReady: 'Ready',
  RunnerRunning: 'Running',
  RunnerShuttingDown: 'Stopping',
  RunnerShutdown: 'Stopped',
};

/**
 * A local runner's status in the page's words: "Ready", "Loading 10 of 16 layers",
 * "Starting", "Failed: <exo's message>". exo's own name (RunnerLoading, ...) stays in
 * a tooltip and in the bundle, where an operator matches it with exo's logs.
 */
export function plainRunnerStatus(status: RunnerStatus): string {
  if (status.kind === 'RunnerLoading') return `Loading ${status.layersLoaded} of ${status.totalLayers} layers`;
  if (status.kind === 'RunnerFailed') return `Failed: ${status.errorMessage}`;
  return PLAIN_RUNNER_STATUS_WORDS[status.kind] ?? status.kind;
}
