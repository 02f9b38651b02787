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
