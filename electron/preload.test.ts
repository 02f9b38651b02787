import { beforeEach, describe, expect, it, vi } from 'vitest';
import { contextBridge, ipcRenderer } from 'electron';
import { fake, FakeWebContents } from '../test/support/electron/fake-electron';
import { snapshot } from '../test/support/electron/snapshot-fixtures';
import { ALERTS_CHANNEL, IpcChannel } from '../shared/ipc-channels';
import type { Snapshot } from '../shared/snapshot';
import { registerIpcHandlers } from './main/ipc-handlers';
import { createPreloadBridge } from './preload';
import { APP_ORIGIN } from './main/security';
import { fakeIpcBackend } from '../test/support/electron/fake-ipc-backend';
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

  it('end to end with the real handlers: each bridge method reaches its backend call with validated arguments', async () => {
    fake.reset();
    const page = new FakeWebContents(`${APP_ORIGIN}/index.html`);
    const backend = fakeIpcBackend({
      getSnapshot: () => snapshot({ seq: 3 }),
      getSafePairPlan: async () => ({ models: [], memory: { requiredBytes: 1, freeBytes: 2, headroomBytes: 0 }, blockers: [], canRun: true }),
      createInstance: async () => ({ id: 'i1' }),
      exportDiagnostics: async () => ({ saved: false, location: null }),
      probeExo: async (url: string) => ({ ok: true as const, url, nodeId: 'n'.repeat(32), nodes: 2 }),
      placeLostModelAgain: async (model: string) => ({ model, instanceId: 'i2', nodes: ['studio-a'], alreadyPlaced: false }),
    });

    registerIpcHandlers({
      ipcMain: fake.ipcMain,
      backend,
      policy: { trustedWebContents: () => page as never, origin: APP_ORIGIN },
      onRefused: () => undefined,
    });
    const bridge = createPreloadBridge({
      invoke: (channel: string, ...args: unknown[]) => fake.ipcMain.invoke(channel, page, ...args),
      on: () => undefined,
      removeListener: () => undefined,
    } as never);
    expect(await bridge.createInstance({ model: 'sim/llama-3.2-3b', fastSynch: 'off' })).toEqual({ id: 'i1' });
    expect(backend.createInstance).toHaveBeenCalledWith({
      model: 'sim/llama-3.2-3b',
      instanceType: 'ring',
      fastSynch: 'off',
      acknowledgeRisk: false,
      duplicate: false,
      acknowledgeMemory: false,
    });
    await bridge.updateInstance('i1', { fastSynch: 'auto', mode: 'cancel' });
    await bridge.stopInstance('i1');
    await bridge.retryInstance('i1');
    expect(backend.retryInstance).toHaveBeenCalledWith('i1');
    await bridge.stopInstance('i1', { confirm: true });
    await bridge.stopAll({ confirm: true });
    expect(vi.mocked(backend.stopInstance).mock.calls).toEqual([['i1'], ['i1', { confirm: true }]]);
    expect(backend.stopAll).toHaveBeenCalledWith({ confirm: true });
    await expect(bridge.stopAll({ confirm: 'yes' } as never)).rejects.toThrow(/argument 1 field confirm/);
    await bridge.cancelRequest('chatcmpl-9');
    await bridge.launchSafePair();
    expect((await bridge.getSafePairPlan()).canRun).toBe(true);
    expect(await bridge.exportDiagnostics()).toEqual({ saved: false, location: null });
    expect(backend.cancelRequest).toHaveBeenCalledWith('chatcmpl-9');
    await expect(bridge.createInstance({ model: '' })).rejects.toThrow(/argument 1 field model/);
    await bridge.setupMlxRuntime();
    await bridge.refreshMlxRuntime();
    expect(backend.setupMlxRuntime).toHaveBeenCalledOnce();
    expect(backend.refreshMlxRuntime).toHaveBeenCalledOnce();
    await bridge.controlExoProcess({ action: 'restart', consent: true });
    // Validated in main with the shared schema: its defaults filled in, anything else refused.
    expect(backend.controlExoProcess).toHaveBeenCalledWith({ action: 'restart', consent: true, acknowledgeRisk: false });
    await expect(bridge.controlExoProcess({ action: 'reboot' } as never)).rejects.toThrow(/argument 1/);
    await expect(bridge.controlExoProcess({ action: 'stop', consent: true } as never)).rejects.toThrow(/argument 1/);
    const models = await bridge.listModels();
    expect(models.map((m) => [m.id, m.engine, m.simulated])).toEqual([
      ['sim/llama-3.2-1b', 'sim', true],
      ['sim/llama-3.2-3b', 'sim', true],
    ]);
    expect(await bridge.probeExo('http://127.0.0.1:52415')).toEqual({ ok: true, url: 'http://127.0.0.1:52415', nodeId: 'n'.repeat(32), nodes: 2 });
    await bridge.attachExo('http://127.0.0.1:52415');
    expect(backend.attachExo).toHaveBeenCalledWith('http://127.0.0.1:52415');
    await expect(bridge.attachExo('')).rejects.toThrow(/argument 1/);
    await bridge.detachExo();
    expect(backend.detachExo).toHaveBeenCalledOnce();
    expect(await bridge.placeLostModelAgain('exobar/tiny-llama')).toMatchObject({ model: 'exobar/tiny-llama', nodes: ['studio-a'] });
    await bridge.placeLostModelAgain('exobar/tiny-llama', { acknowledgeRisk: true });
    expect(vi.mocked(backend.placeLostModelAgain).mock.calls).toEqual([['exobar/tiny-llama'], ['exobar/tiny-llama', { acknowledgeRisk: true }]]);
    await expect(bridge.placeLostModelAgain('')).rejects.toThrow(/argument 1/);
    await expect(bridge.placeLostModelAgain('m', { acknowledgeRisk: 'yes' } as never)).rejects.toThrow(/argument 2 field acknowledgeRisk/);
    await bridge.dismissLostModel('exobar/tiny-llama');
    expect(backend.dismissLostModel).toHaveBeenCalledWith('exobar/tiny-llama');
    await expect(bridge.dismissLostModel(42 as never)).rejects.toThrow(/argument 1/);
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
