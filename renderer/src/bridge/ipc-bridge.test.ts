import { describe, expect, it } from 'vitest';
import { FakeBridge } from '../../../test/support/renderer/fake-bridge';
import { snapshot } from '../../../test/support/renderer/fixtures';
import type { Snapshot } from '../../../shared/snapshot';
import { createIpcBridge, hasIpcBridge } from './ipc-bridge';

describe('ipc bridge', () => {
  it('is picked only when the preload exposed window.exobar', () => {
    expect(hasIpcBridge({})).toBe(false);
    expect(hasIpcBridge({ exobar: new FakeBridge() })).toBe(true);
  });

  it('passes calls through and strips Electron\'s "Error invoking remote method" prefix', async () => {
    const api = new FakeBridge();
    api.updateInstance.mockRejectedValueOnce(new Error("Error invoking remote method 'exobar:update-instance': Error: acknowledgeRisk is required"));
    const bridge = createIpcBridge(api);
    await bridge.cancelRequest('r1');
    expect(api.cancelRequest).toHaveBeenCalledWith('r1');
    await expect(bridge.updateInstance('i', { fastSynch: 'on' })).rejects.toThrow(/^acknowledgeRisk is required$/);
  });

  it('passes the MLX calls and the catalog through, with clean error messages', async () => {
    const api = new FakeBridge();
    const bridge = createIpcBridge(api);
    await bridge.refreshMlxRuntime();
    expect(api.refreshMlxRuntime).toHaveBeenCalledOnce();
    expect((await bridge.listModels()).map((m) => m.id)).toEqual(['sim/llama-3.2-1b', 'sim/llama-3.2-3b']);
    api.setupMlxRuntime.mockRejectedValueOnce(
      new Error("Error invoking remote method 'exobar:setup-mlx-runtime': Error: MLX runs only on macOS on Apple silicon"),
    );
    await expect(bridge.setupMlxRuntime()).rejects.toThrow(/^MLX runs only on macOS on Apple silicon$/);
  });

  it('validates every snapshot with the shared schema: a bad one becomes a connection error, not a render', () => {
    const api = new FakeBridge();
    const bridge = createIpcBridge(api);
    const seen: Snapshot[] = [];
    const errors: Array<string | null> = [];
    bridge.subscribeSnapshots((s) => seen.push(s));
    bridge.subscribeConnection((e) => errors.push(e));
    api.push({ ...snapshot({ seq: 1 }), instances: [{ id: 'x' }] } as unknown as Snapshot);
    expect(seen).toEqual([]);
    expect(errors.at(-1)).toMatch(/does not understand \(instances\.0\.source:/);
    api.push(snapshot({ seq: 2 }));
    expect(seen.map((s) => s.seq)).toEqual([2]);
    expect(errors.at(-1)).toBeNull();
  });

  it('says clearly when there is no preload object', () => {
    expect(() => createIpcBridge(undefined)).toThrow(/not running inside the exobar app/);
  });
});
