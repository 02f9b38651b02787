import { beforeEach, describe, expect, it, vi } from 'vitest';
import { contextBridge, ipcRenderer } from 'electron';
import { fake, FakeWebContents } from '../test/support/electron/fake-electron';
import { snapshot } from '../test/support/electron/snapshot-fixtures';
import { ALERTS_CHANNEL, IpcChannel } from '../shared/ipc-channels';
import type { Snapshot } from '../shared/snapshot';
import { registerIpcHandlers } from './main/ipc-handlers';
import { createPreloadBridge } from './preload';
import { APP_ORIGIN } from './main/security';
import { fakeIpcBackend, fakeRouteDispatch } from '../test/support/electron/fake-ipc-backend';
import { sleep } from '../test/support/eventually';

const fakeRenderer = ipcRenderer as unknown as import('node:events').EventEmitter & { invoke: ReturnType<typeof vi.fn> };

beforeEach(() => {
  fakeRenderer.removeAllListeners();
  fakeRenderer.invoke.mockReset();
});

describe('preload', () => {
  it('exposes exactly one object, window.exobar, with the bridge methods (on import)', () => {
    const calls = vi.mocked(contextBridge.exposeInMainWorld).mock.calls;
    expect(calls).toHaveLength(1);
    expect(calls[0]![0]).toBe('exobar');
    expect(Object.keys(calls[0]![1] as object).sort()).toEqual(
      [
        'attachExo',
        'cancelCheck',
        'cancelRequest',
        'checkModelFits',
        'controlExoProcess',
        'createInstance',
        'detachExo',
        'dismissLostModel',
        'exportDiagnostics',
        'followLog',
        'getCheck',
        'getHistory',
        'getSafePairPlan',
        'launchSafePair',
        'listChecks',
        'listLogSources',
        'listModels',
        'listRequests',
        'placeLostModelAgain',
        'probeExo',
        'refreshMlxRuntime',
        'retryInstance',
        'setResidency',
        'setupMlxRuntime',
        'startSharingCheck',
        'stopAll',
        'stopInstance',
        'subscribeAlerts',
        'subscribeConnection',
        'subscribeOpenLog',
        'subscribeSnapshots',
        'unloadInstance',
        'updateInstance',
      ].sort(),
    );
  });

  it('a subscriber gets the latest snapshot on subscribe, then pushes, never an older one', async () => {
    let answer!: (value: unknown) => void;
    fakeRenderer.invoke.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    const bridge = createPreloadBridge(ipcRenderer);
    const seen: number[] = [];
    const unsubscribe = bridge.subscribeSnapshots((s) => seen.push(s.seq));
    expect(fakeRenderer.invoke).toHaveBeenCalledWith(IpcChannel.getSnapshot);

    fakeRenderer.emit(IpcChannel.snapshot, {}, snapshot({ seq: 5 }));
    // The answer to getSnapshot was taken before push 5 arrived: it is older, so dropped.
    answer({ ok: true, value: snapshot({ seq: 4 }) });
    await sleep(0);
    fakeRenderer.emit(IpcChannel.snapshot, {}, snapshot({ seq: 6 }));
    expect(seen).toEqual([5, 6]);

    unsubscribe();
    fakeRenderer.emit(IpcChannel.snapshot, {}, snapshot({ seq: 7 }));
    expect(seen).toEqual([5, 6]);
    expect(fakeRenderer.listenerCount(IpcChannel.snapshot)).toBe(0);
  });

  it('snapshots pushed before the page subscribed are not lost: getSnapshot delivers the latest', async () => {
    fakeRenderer.invoke.mockResolvedValue({ ok: true, value: snapshot({ seq: 42 }) });
    const bridge = createPreloadBridge(ipcRenderer);
    const seen: Snapshot[] = [];
    bridge.subscribeSnapshots((s) => seen.push(s));
    await sleep(0);
    expect(seen.map((s) => s.seq)).toEqual([42]);
  });

  it('turns refused calls into errors with the message and code from main', async () => {
    fakeRenderer.invoke.mockResolvedValue({
      ok: false,
      error: { code: 'invalid_payload', message: 'Invalid arguments for exobar:stop-instance: argument 1: Too small' },
    });
    const bridge = createPreloadBridge(ipcRenderer);
    await expect(bridge.stopInstance('')).rejects.toMatchObject({
      message: 'Invalid arguments for exobar:stop-instance: argument 1: Too small',
      code: 'invalid_payload',
    });
  });

  it('alerts main pushed before the page subscribed are delivered on subscribe, then each new list', () => {
    const bridge = createPreloadBridge(ipcRenderer);
    const failed = { id: 1, title: 'A failed', body: 'boom', at: 1 };
    fakeRenderer.emit(ALERTS_CHANNEL, {}, [failed]);
    const seen: unknown[] = [];
    const unsubscribe = bridge.subscribeAlerts!((alerts) => seen.push(alerts.map((a) => a.id)));
    fakeRenderer.emit(ALERTS_CHANNEL, {}, [failed, { ...failed, id: 2 }]);
    unsubscribe();
    fakeRenderer.emit(ALERTS_CHANNEL, {}, []);
    expect(seen).toEqual([[1], [1, 2]]);
  });

  it('reports no connection trouble (main is in the same app)', () => {
    const listener = vi.fn();
    createPreloadBridge(ipcRenderer).subscribeConnection(listener);
    expect(listener).toHaveBeenCalledWith(null);
  });

  it("end to end with the real handlers: each bridge method reaches its route's request, and its answer or error comes back", async () => {
    fake.reset();
    const page = new FakeWebContents(`${APP_ORIGIN}/index.html`);
    const backend = fakeIpcBackend({ getSnapshot: () => snapshot({ seq: 3 }), exportDiagnostics: async () => ({ saved: false, location: null }) });
    const dispatch = fakeRouteDispatch((request) => {
      if (request.method === 'POST' && request.path === '/api/instances') return { status: 201, body: { id: 'i1' } };
      if (request.path === '/api/exo/lost-models/place-again')
        return { body: { model: 'exobar/tiny-llama', instanceId: 'i2', nodes: ['studio-a'], alreadyPlaced: false } };
      if (request.method === 'DELETE' && request.path === '/api/instances/busy')
        return {
          status: 409,
          body: { error: { message: '1 request will end if this model stops', type: 'conflict_error', code: 'requests_in_flight', param: null, requests: 1 } },
        };
      return {};
    });
    registerIpcHandlers({
      ipcMain: fake.ipcMain,
      backend,
      dispatch,
      policy: { trustedWebContents: () => page as never, origin: APP_ORIGIN },
      onRefused: () => undefined,
    });
    const bridge = createPreloadBridge({
      invoke: (channel: string, ...args: unknown[]) => fake.ipcMain.invoke(channel, page, ...args),
      on: () => undefined,
      removeListener: () => undefined,
    } as never);
    expect(await bridge.createInstance({ model: 'sim/llama-3.2-3b', fastSynch: 'off' })).toEqual({ id: 'i1' });
    await bridge.stopInstance('i1');
    await bridge.stopInstance('i1', { confirm: true });
    await bridge.controlExoProcess({ action: 'restart', consent: true });
    expect(await bridge.placeLostModelAgain('exobar/tiny-llama', { acknowledgeRisk: true })).toMatchObject({ nodes: ['studio-a'] });
    expect(dispatch.mock.calls.map(([r]) => [r.method, r.path, r.body])).toEqual([
      ['POST', '/api/instances', { model: 'sim/llama-3.2-3b', fastSynch: 'off' }],
      ['DELETE', '/api/instances/i1', undefined],
      ['DELETE', '/api/instances/i1', { confirm: true }],
      ['POST', '/api/exo/process/restart', { consent: true }],
      ['POST', '/api/exo/lost-models/place-again', { model: 'exobar/tiny-llama', acknowledgeRisk: true }],
    ]);
    await expect(bridge.stopInstance('busy')).rejects.toMatchObject({
      code: 'requests_in_flight',
      requests: 1,
      message: '1 request will end if this model stops',
    });
    expect(await bridge.exportDiagnostics()).toEqual({ saved: false, location: null });
  });

  it('a refused MLX setup rejects with the code and message from main', async () => {
    fakeRenderer.invoke.mockResolvedValue({ ok: false, error: { code: 'mlx_unsupported', message: 'MLX runs only on macOS on Apple silicon' } });
    await expect(createPreloadBridge(ipcRenderer).setupMlxRuntime()).rejects.toMatchObject({
      code: 'mlx_unsupported',
      message: 'MLX runs only on macOS on Apple silicon',
    });
    expect(fakeRenderer.invoke).toHaveBeenCalledWith(IpcChannel.setupMlxRuntime);
  });
});
