/**
 * The bridge inside the Electron app: the preload exposes an object implementing
 * ExobarBridge as `window.exobar`. This wrapper only cleans up error messages, which
 * Electron prefixes with "Error invoking remote method ...".
 */
import type { ExobarBridge } from '../../../shared/bridge';
import { errorMessage } from '../lib/error-message';

/** True when the page runs in the Electron popover. */
export function hasIpcBridge(target: { exobar?: ExobarBridge } = window): boolean {
  return typeof target.exobar === 'object' && target.exobar !== null;
}

async function clean<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw new Error(errorMessage(error), { cause: error });
  }
}

/** Wraps the preload's object; throws when the page is not in Electron. */
export function createIpcBridge(api: ExobarBridge | undefined = window.exobar): ExobarBridge {
  if (!api) throw new Error('window.exobar is missing: the page is not running inside the exobar app');
  return {
    subscribeSnapshots: (listener) => api.subscribeSnapshots(listener),
    subscribeConnection: (listener) => api.subscribeConnection(listener),
    subscribeAlerts: (listener) => api.subscribeAlerts?.(listener) ?? (() => undefined),
    getSafePairPlan: () => clean(() => api.getSafePairPlan()),
    launchSafePair: () => clean(() => api.launchSafePair()),
    createInstance: (request) => clean(() => api.createInstance(request)),
    updateInstance: (id, request) => clean(() => api.updateInstance(id, request)),
    stopInstance: (id) => clean(() => api.stopInstance(id)),
    stopAll: () => clean(() => api.stopAll()),
    cancelRequest: (requestId) => clean(() => api.cancelRequest(requestId)),
    exportDiagnostics: () => clean(() => api.exportDiagnostics()),
    setupMlxRuntime: () => clean(() => api.setupMlxRuntime()),
    refreshMlxRuntime: () => clean(() => api.refreshMlxRuntime()),
    listModels: () => clean(() => api.listModels()),
  };
}
