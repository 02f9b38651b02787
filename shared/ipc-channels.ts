/**
 * Every IPC channel, named once (as electron/fiddle does). Main validates each
 * payload with the schemas in shared/api.ts and checks the sender is its own window.
 */
export const IpcChannel = {
  /** main -> renderer: a new snapshot. */
  snapshot: 'exobar:snapshot',
  /** renderer -> main: ask for the latest snapshot (pushes sent before load are not lost). */
  getSnapshot: 'exobar:get-snapshot',
  getSafePairPlan: 'exobar:get-safe-pair-plan',
  launchSafePair: 'exobar:launch-safe-pair',
  createInstance: 'exobar:create-instance',
  updateInstance: 'exobar:update-instance',
  stopInstance: 'exobar:stop-instance',
  retryInstance: 'exobar:retry-instance',
  stopAll: 'exobar:stop-all',
  cancelRequest: 'exobar:cancel-request',
  exportDiagnostics: 'exobar:export-diagnostics',
  setupMlxRuntime: 'exobar:setup-mlx-runtime',
  refreshMlxRuntime: 'exobar:refresh-mlx-runtime',
  listModels: 'exobar:list-models',
} as const;

/**
 * main -> renderer, push only: the alerts macOS did not show as notifications
 * (AppAlert[], all of them), sent on every change and when the page has loaded.
 */
export const ALERTS_CHANNEL = 'exobar:alerts';

export type IpcChannelName = (typeof IpcChannel)[keyof typeof IpcChannel];
