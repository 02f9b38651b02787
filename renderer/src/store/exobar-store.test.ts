import { describe, expect, it, vi } from 'vitest';
import { FakeBridge } from '../../../test/support/renderer/fake-bridge';
import {
  catalog,
  fastSynchOn,
  instance,
  mlxModel,
  instanceWithTtft,
  prefillingInstance,
  ringFastSynchWarning,
  snapshot,
  ttftSample,
} from '../../../test/support/renderer/fixtures';
import { createExobarStore } from './exobar-store';

describe('exobar store: mirroring', () => {
  it('starts connecting with an empty snapshot, then mirrors what the bridge pushes', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    expect(store.getState()).toMatchObject({ received: false, connection: 'connecting' });
    expect(store.getState().snapshot.instances).toEqual([]);

    const s = snapshot({ seq: 7, instances: [prefillingInstance()] });
    bridge.push(s);
    expect(store.getState().snapshot).toBe(s);
    expect(store.getState()).toMatchObject({ received: true, connection: 'connected', applied: 1 });
  });

  it('reports a connection error, keeps the last snapshot, and recovers on the next one', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    bridge.push(snapshot({ seq: 1 }));
    bridge.connection('Lost connection to exobar serve');
    expect(store.getState()).toMatchObject({ connection: 'error', connectionError: 'Lost connection to exobar serve', received: true });
    expect(store.getState().snapshot.seq).toBe(1);
    bridge.push(snapshot({ seq: 2 }));
    expect(store.getState()).toMatchObject({ connection: 'connected', connectionError: null });
  });

  it('keeps a bounded window of TTFT samples per instance, merged across snapshots by request id', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge, { ttftWindow: 5 });
    for (let n = 0; n < 8; n++) {
      // The node sends its own recent samples (here: the last 3), overlapping between snapshots.
      const samples = [n - 2, n - 1, n].filter((k) => k >= 0).map((k) => ttftSample(k));
      bridge.push(snapshot({ seq: n + 1, instances: [instance({ ttft: { samples, p50Ms: 1, p95Ms: 2, latest: samples.at(-1) ?? null } })] }));
    }
    const history = store.getState().ttftHistory['inst-1b'] ?? [];
    expect(history.map((s) => s.requestId)).toEqual([3, 4, 5, 6, 7].map((k) => `chatcmpl-sample-${k}`));
  });

  it('keeps the same history array when no sample is new, so the chart does not redraw', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    bridge.push(snapshot({ seq: 1, instances: [instanceWithTtft(3)] }));
    const first = store.getState().ttftHistory['inst-1b'];
    bridge.push(snapshot({ seq: 2, instances: [instanceWithTtft(3)] }));
    expect(store.getState().ttftHistory['inst-1b']).toBe(first);
  });

  it('drops instances that are gone from the history', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    bridge.push(snapshot({ seq: 1, instances: [instanceWithTtft(3)] }));
    bridge.push(snapshot({ seq: 2, instances: [] }));
    expect(store.getState().ttftHistory).toEqual({});
  });

  it('unsubscribes from the bridge on dispose', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    expect(bridge.listenerCount).toBe(2);
    store.dispose();
    expect(bridge.listenerCount).toBe(0);
  });
});

describe('exobar store: applying', () => {
  it('applies every snapshot the bridge delivers at once (the node throttles at the source)', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    for (let seq = 1; seq <= 3; seq++) bridge.push(snapshot({ seq }));
    expect(store.getState().snapshot.seq).toBe(3);
    expect(store.getState().applied).toBe(3);
  });

  it('says disconnected on a connection error, and only a new snapshot makes it connected again', () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    bridge.push(snapshot({ seq: 1 }));
    bridge.connection('server gone');
    expect(store.getState()).toMatchObject({ connection: 'error', connectionError: 'server gone' });
    expect(store.getState().snapshot.seq).toBe(1);
    bridge.push(snapshot({ seq: 2 }));
    expect(store.getState()).toMatchObject({ connection: 'connected', connectionError: null });
  });
});

describe('exobar store: actions call the bridge', () => {
  it('stops an instance, stops all, cancels a request, launches the safe pair and loads the plan', async () => {
    const bridge = new FakeBridge();
    const { actions } = createExobarStore(bridge).getState();
    await actions.stopInstance('inst-3b');
    await actions.stopAll();
    await actions.cancelRequest('chatcmpl-x');
    await actions.launchSafePair();
    // Nothing in flight in the (empty) snapshot: sent at once, unconfirmed.
    expect(bridge.stopInstance).toHaveBeenCalledWith('inst-3b', undefined);
    expect(bridge.stopAll).toHaveBeenCalledExactlyOnceWith(undefined);
    expect(bridge.cancelRequest).toHaveBeenCalledWith('chatcmpl-x');
    expect(bridge.launchSafePair).toHaveBeenCalledOnce();
    // The launch refreshes the plan ("already running" changes).
    await vi.waitFor(() => expect(bridge.getSafePairPlan).toHaveBeenCalled());
  });

  it('loads the plan into the store, and keeps the error in words', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    await store.getState().actions.loadPlan();
    expect(store.getState().plan).toMatchObject({ status: 'ready', error: null });
    expect(store.getState().plan.plan?.models).toHaveLength(2);
    bridge.getSafePairPlan.mockRejectedValueOnce(new Error('Not enough free memory'));
    await store.getState().actions.loadPlan();
    expect(store.getState().plan).toMatchObject({ status: 'error', error: 'Not enough free memory' });
  });

  it('fixes the two-ring warning by relaunching only the runners with fast synch on, draining them', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    const warning = ringFastSynchWarning(['inst-1b', 'inst-3b']);
    bridge.push(snapshot({ instances: [fastSynchOn(instance()), prefillingInstance()], warnings: [warning] }));
    await store.getState().actions.fixWarning(warning);
    expect(bridge.updateInstance).toHaveBeenCalledTimes(1);
    expect(bridge.updateInstance).toHaveBeenCalledWith('inst-1b', { fastSynch: 'off', mode: 'drain' });
    expect(store.getState().notice).toMatchObject({ kind: 'info' });
    expect(store.getState().notice?.message).toContain('Llama 3.2 1B');
  });

  it('turns a failed action into an error notice and re-enables its button', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    bridge.stopInstance.mockRejectedValueOnce(new Error("Error invoking remote method 'exobar:stop-instance': Error: No instance inst-9"));
    const pending = store.getState().actions.stopInstance('inst-9');
    expect(store.getState().busy['stop:inst-9']).toBe(true);
    await pending;
    expect(store.getState().busy['stop:inst-9']).toBeUndefined();
    expect(store.getState().notice).toMatchObject({ kind: 'error', message: 'No instance inst-9' });
  });

  it('ignores a second click while the same action is in flight', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    const a = store.getState().actions.cancelRequest('r1');
    const b = store.getState().actions.cancelRequest('r1');
    await Promise.all([a, b]);
    expect(bridge.cancelRequest).toHaveBeenCalledTimes(1);
  });

  it('copies the API base URL, and says so when there is none', async () => {
    const bridge = new FakeBridge();
    const copy = vi.fn(async () => {});
    const store = createExobarStore(bridge, { copy });
    await store.getState().actions.copyApiBaseUrl();
    expect(copy).not.toHaveBeenCalled();
    expect(store.getState().notice?.kind).toBe('error');
    bridge.push(snapshot({ apiBaseUrl: 'http://127.0.0.1:52416/v1' }));
    await store.getState().actions.copyApiBaseUrl();
    expect(copy).toHaveBeenCalledWith('http://127.0.0.1:52416/v1');
    expect(store.getState().notice).toMatchObject({ kind: 'info', message: 'Copied http://127.0.0.1:52416/v1' });
  });

  it('exports diagnostics through the bridge and reports where the bundle went', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    await store.getState().actions.exportDiagnostics();
    expect(bridge.exportDiagnostics).toHaveBeenCalledOnce();
    expect(store.getState().notice?.message).toBe('Diagnostic bundle saved: exobar-diagnostics.zip');
  });

  it('loads the catalog into the store, and keeps the last list with the error in words when a reload fails', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    expect(store.getState().models).toEqual({ status: 'idle', models: [], error: null, fits: {} });
    const pending = store.getState().actions.loadModels();
    expect(store.getState().models.status).toBe('loading');
    await pending;
    expect(store.getState().models.status).toBe('ready');
    expect(store.getState().models.models.map((m) => m.id)).toEqual(['sim/llama-3.2-1b', 'sim/llama-3.2-3b']);
    bridge.listModels.mockRejectedValueOnce(new Error('The server answered 500'));
    await store.getState().actions.loadModels();
    expect(store.getState().models).toMatchObject({ status: 'error', error: 'The server answered 500' });
    expect(store.getState().models.models).toHaveLength(2);
    // The fit words are an extra: their failure leaves the list as it is, without fits.
    bridge.checkModelFits.mockRejectedValueOnce(new Error('The server answered 404'));
    await store.getState().actions.loadModels();
    expect(store.getState().models).toMatchObject({ status: 'ready', error: null, fits: {} });
    expect(store.getState().models.models).toHaveLength(2);
  });

  it('starts the MLX setup once while it is being started, and a refusal becomes an error notice', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    const a = store.getState().actions.setupMlxRuntime();
    expect(store.getState().busy['mlx-setup']).toBe(true);
    const b = store.getState().actions.setupMlxRuntime();
    await Promise.all([a, b]);
    expect(bridge.setupMlxRuntime).toHaveBeenCalledTimes(1);
    expect(store.getState().busy['mlx-setup']).toBeUndefined();
    expect(store.getState().notice).toBeNull();

    bridge.setupMlxRuntime.mockRejectedValueOnce(new Error('MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here'));
    await store.getState().actions.setupMlxRuntime();
    expect(store.getState().notice).toMatchObject({ kind: 'error', message: expect.stringContaining('Apple silicon') });
  });

  it('refreshes the MLX runtime, then reloads the catalog with the local models it found', async () => {
    const bridge = new FakeBridge();
    const store = createExobarStore(bridge);
    bridge.listModels.mockResolvedValueOnce(catalog([mlxModel()]));
    await store.getState().actions.refreshMlxRuntime();
    expect(bridge.refreshMlxRuntime).toHaveBeenCalledOnce();
    expect(bridge.refreshMlxRuntime.mock.invocationCallOrder[0]!).toBeLessThan(bridge.listModels.mock.invocationCallOrder[0]!);
    expect(store.getState().models.models.map((m) => m.engine)).toEqual(['sim', 'sim', 'mlx']);
  });
});
