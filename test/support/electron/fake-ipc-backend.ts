/**
 * The main process's IPC backend (its Electron-only calls) as a test double: every
 * method a `vi.fn` answering a fixed valid value, so a test of the handlers or of the
 * preload bridge sees each call and overrides only the answers it asserts on; and a
 * route dispatch double that answers every action request with a fixed status and body.
 */
import { vi, type Mock } from 'vitest';
import type { IpcBackend, RouteDispatch } from '../../../electron/main/ipc-handlers';
import type { DispatchAnswer, DispatchRequest } from '../../../electron/core/api/in-process-exchange';
import { snapshot } from './snapshot-fixtures';

/** An `IpcBackend` of `vi.fn`s with valid answers; `overrides` replaces the methods named. */
export function fakeIpcBackend(overrides: Partial<IpcBackend> = {}): IpcBackend & Record<keyof IpcBackend, Mock> {
  const backend: IpcBackend = {
    getSnapshot: () => snapshot({ seq: 7 }),
    exportDiagnostics: async () => ({ saved: true, location: '/tmp/x.zip' }),
    followLog: async () => ({ streamId: 1, title: 't', lines: [] }),
    unfollowLog: async () => undefined,
    ...overrides,
  };
  return Object.fromEntries(
    Object.entries(backend).map(([name, method]) => [name, vi.isMockFunction(method) ? method : vi.fn(method)]),
  ) as unknown as IpcBackend & Record<keyof IpcBackend, Mock>;
}

/** A route dispatch that records each request and answers `answer(request)` (default: 200 with no body). */
export function fakeRouteDispatch(answer: (request: DispatchRequest) => Partial<DispatchAnswer> = () => ({})): RouteDispatch & Mock {
  return vi.fn(async (request: DispatchRequest) => ({ status: 200, body: undefined, headers: {}, ...answer(request) }));
}
