/**
 * The main process's IPC backend as a test double: every method a `vi.fn` answering a
 * fixed value that passes the IPC schemas, so a test of the handlers or of the preload
 * bridge sees each call and overrides only the answers it asserts on. One double, so a
 * method added to `IpcBackend` is added here once.
 */
import { vi, type Mock } from 'vitest';
import { SIM_MODELS } from '../../../shared/catalog';
import type { IpcBackend } from '../../../electron/main/ipc-handlers';
import { runningCheck } from '../checks/check-status';
import { snapshot } from './snapshot-fixtures';

/** An `IpcBackend` of `vi.fn`s with valid answers; `overrides` replaces the methods named. */
export function fakeIpcBackend(overrides: Partial<IpcBackend> = {}): IpcBackend & Record<keyof IpcBackend, Mock> {
  const backend: IpcBackend = {
    getSnapshot: () => snapshot({ seq: 7 }),
    getSafePairPlan: async () => ({ models: [], memory: { requiredBytes: 0, freeBytes: 0, headroomBytes: 0 }, blockers: [], canRun: true }),
    launchSafePair: async () => undefined,
    createInstance: async () => ({ id: 'inst-1' }),
    updateInstance: async () => undefined,
    stopInstance: async () => undefined,
    retryInstance: async () => undefined,
    unloadInstance: async () => undefined,
    setResidency: async () => undefined,
    stopAll: async () => undefined,
    cancelRequest: async () => undefined,
    exportDiagnostics: async () => ({ saved: true, location: '/tmp/x.zip' }),
    setupMlxRuntime: async () => undefined,
    refreshMlxRuntime: async () => undefined,
    listModels: async () => [...SIM_MODELS],
    checkModelFits: async () => [],
    probeExo: async (url: string) => ({ ok: false as const, url, error: 'refused' }),
    attachExo: async () => undefined,
    detachExo: async () => undefined,
    placeLostModelAgain: async (model: string) => ({ model, instanceId: 'i', nodes: ['studio-a'], alreadyPlaced: false }),
    dismissLostModel: async () => undefined,
    controlExoProcess: async () => undefined,
    listRequests: async () => ({ requests: [], events: [], total: 0, diskBytes: 0, diskCapBytes: 0, problem: null }),
    getHistory: async (range: '1h' | '24h' | '7d' | '30d') => ({ range, models: [], diskBytes: 0, diskCapBytes: 0, problem: null }),
    startSharingCheck: async () => runningCheck(),
    getCheck: async () => runningCheck(),
    cancelCheck: async () => undefined,
    listChecks: async () => ({ checks: [], running: null }),
    listLogSources: async () => ({ sources: [] }),
    followLog: async () => ({ streamId: 1, title: 't', lines: [] }),
    unfollowLog: async () => undefined,
    ...overrides,
  };
  return Object.fromEntries(Object.entries(backend).map(([name, method]) => [name, vi.isMockFunction(method) ? method : vi.fn(method)])) as IpcBackend &
    Record<keyof IpcBackend, Mock>;
}
