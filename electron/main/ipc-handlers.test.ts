import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ipcMain } from 'electron';
import { fake, FakeWebContents, FakeWebFrame } from '../../test/support/electron/fake-electron';
import { SIM_MODELS } from '../../shared/catalog';
import { IpcChannel } from '../../shared/ipc-channels';
import { NodeError } from '../core/node/node-types';
import { registerIpcHandlers } from './ipc-handlers';
import { IPC_PAYLOADS } from './ipc-payloads';
import { APP_ORIGIN } from './security';
import { fakeIpcBackend } from '../../test/support/electron/fake-ipc-backend';

const backend = () => fakeIpcBackend();

let window: FakeWebContents;
let refused: Array<[string, string]>;
let b: ReturnType<typeof backend>;

beforeEach(() => {
  fake.reset();
  window = new FakeWebContents(`${APP_ORIGIN}/index.html`);
  refused = [];
  b = backend();
  registerIpcHandlers({
    ipcMain,
    backend: b,
    policy: { trustedWebContents: () => window as never, origin: APP_ORIGIN },
    onRefused: (channel, reason) => refused.push([channel, reason]),
  });
});

describe('IPC handlers', () => {
  it('registers exactly one handler per renderer-to-main channel', () => {
    const expected = Object.keys(IPC_PAYLOADS).map((k) => IpcChannel[k as keyof typeof IPC_PAYLOADS]);
    expect([...fake.ipcMain.handlers.keys()].sort()).toEqual(expected.sort());
    expect(fake.ipcMain.handlers.has(IpcChannel.snapshot)).toBe(false);
    expect(Object.keys(IpcChannel).length).toBe(expected.length + 1);
  });

  it('answers valid calls from its own window with the backend value', async () => {
    expect(await fake.ipcMain.invoke(IpcChannel.getSnapshot, window)).toMatchObject({ ok: true, value: { seq: 7 } });
    expect(await fake.ipcMain.invoke(IpcChannel.createInstance, window, { model: 'sim/llama-3.2-1b' })).toEqual({ ok: true, value: { id: 'inst-1' } });
    // Defaults from the shared schema are filled in before the backend sees the request.
    expect(b.createInstance).toHaveBeenCalledWith({
      model: 'sim/llama-3.2-1b',
      instanceType: 'ring',
      fastSynch: 'auto',
      acknowledgeRisk: false,
      duplicate: false,
      acknowledgeMemory: false,
    });
    expect(await fake.ipcMain.invoke(IpcChannel.updateInstance, window, 'inst-1', { fastSynch: 'off' })).toEqual({ ok: true, value: null });
    expect(b.updateInstance).toHaveBeenCalledWith('inst-1', { fastSynch: 'off', mode: 'drain', acknowledgeRisk: false });
    await fake.ipcMain.invoke(IpcChannel.cancelRequest, window, 'chatcmpl-1');
    expect(b.cancelRequest).toHaveBeenCalledWith('chatcmpl-1');
    expect(refused).toEqual([]);
  });

  it('refuses another webContents, counts it, and never calls the backend', async () => {
    const stranger = new FakeWebContents(`${APP_ORIGIN}/index.html`);
    const answer = await fake.ipcMain.invoke(IpcChannel.stopAll, stranger);
    expect(answer).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    expect((answer as { error: { message: string } }).error.message).toContain("is not exobar's window");
    expect(b.stopAll).not.toHaveBeenCalled();
    expect(refused).toHaveLength(1);
  });

  it('refuses its own window once it shows another origin, and subframes', async () => {
    window.mainFrame.url = 'https://evil.example/';
    expect(await fake.ipcMain.invoke(IpcChannel.stopAll, window)).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    window.mainFrame.url = `${APP_ORIGIN}/index.html`;
    const sub = new FakeWebFrame(`${APP_ORIGIN}/index.html`);
    sub.parent = window.mainFrame;
    const handler = fake.ipcMain.handlers.get(IpcChannel.stopAll)!;
    expect(await handler({ sender: window, senderFrame: sub })).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    expect(await handler({ sender: window, senderFrame: null })).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    expect(b.stopAll).not.toHaveBeenCalled();
    expect(refused).toHaveLength(3);
  });

  it('refuses everything while no window exists', async () => {
    fake.reset();
    registerIpcHandlers({ ipcMain, backend: b, policy: { trustedWebContents: () => null, origin: APP_ORIGIN }, onRefused: (c, r) => refused.push([c, r]) });
    expect(await fake.ipcMain.invoke(IpcChannel.getSnapshot, window)).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
  });

  it.each([
    ['unknown field', IpcChannel.createInstance, [{ model: 'x', evil: true }], /argument 1: Unrecognized key: "evil"/],
    ['wrong type', IpcChannel.createInstance, [{ model: 42 }], /argument 1 field model/],
    ['bad enum', IpcChannel.updateInstance, ['i', { fastSynch: 'maybe' }], /argument 2 field fastSynch/],
    ['missing argument', IpcChannel.stopInstance, [], /Too small/],
    ['extra argument', IpcChannel.stopAll, [{ confirm: true }, 'now'], /Too big/],
    ['confirmation not a boolean', IpcChannel.stopAll, [{ confirm: 'yes' }], /argument 1 field confirm/],
    ['empty id', IpcChannel.cancelRequest, [''], /argument 1/],
    ['oversized id', IpcChannel.stopInstance, ['x'.repeat(500)], /argument 1/],
    ['argument to the MLX setup', IpcChannel.setupMlxRuntime, [{ python: '/tmp/evil' }], /Too big/],
    ['argument to the MLX refresh', IpcChannel.refreshMlxRuntime, ['now'], /Too big/],
    ['argument to the model list', IpcChannel.listModels, [1], /Too big/],
  ])('refuses an invalid payload (%s) with a clear message, counted', async (_name, channel, args, message) => {
    const answer = (await fake.ipcMain.invoke(channel, window, ...args)) as { ok: false; error: { code: string; message: string } };
    expect(answer.ok).toBe(false);
    expect(answer.error.code).toBe('invalid_payload');
    expect(answer.error.message).toMatch(message);
    expect(answer.error.message).toContain(channel);
    expect(refused).toHaveLength(1);
    for (const fn of Object.values(b)) expect(fn).not.toHaveBeenCalled();
  });

  it("the MLX channels: setup, refresh and the catalog reach the backend from the app's window only", async () => {
    expect(await fake.ipcMain.invoke(IpcChannel.setupMlxRuntime, window)).toEqual({ ok: true, value: null });
    expect(b.setupMlxRuntime).toHaveBeenCalledOnce();
    expect(await fake.ipcMain.invoke(IpcChannel.refreshMlxRuntime, window)).toEqual({ ok: true, value: null });
    expect(b.refreshMlxRuntime).toHaveBeenCalledOnce();
    const models = (await fake.ipcMain.invoke(IpcChannel.listModels, window)) as { ok: true; value: Array<{ id: string }> };
    expect(models.value.map((m) => m.id)).toEqual(SIM_MODELS.map((m) => m.id));

    const stranger = new FakeWebContents(`${APP_ORIGIN}/index.html`);
    for (const channel of [IpcChannel.setupMlxRuntime, IpcChannel.refreshMlxRuntime, IpcChannel.listModels]) {
      expect(await fake.ipcMain.invoke(channel, stranger)).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    }
    expect(b.setupMlxRuntime).toHaveBeenCalledOnce();
    expect(refused.map(([channel]) => channel)).toEqual([IpcChannel.setupMlxRuntime, IpcChannel.refreshMlxRuntime, IpcChannel.listModels]);
  });

  it('a setup refused off Apple silicon comes back with its code', async () => {
    vi.mocked(b.setupMlxRuntime).mockRejectedValueOnce(
      Object.assign(new Error('MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here'), { code: 'mlx_unsupported' }),
    );
    expect(await fake.ipcMain.invoke(IpcChannel.setupMlxRuntime, window)).toEqual({
      ok: false,
      error: { code: 'mlx_unsupported', message: 'MLX runs only on macOS on Apple silicon; the sim engine serves the sim models here' },
    });
    expect(refused).toEqual([]);
  });

  it("passes the node's errors back with their code, not counted as refused", async () => {
    vi.mocked(b.stopInstance).mockRejectedValueOnce(new NodeError('instance_not_found', 'No instance inst-9', 404));
    expect(await fake.ipcMain.invoke(IpcChannel.stopInstance, window, 'inst-9')).toEqual({
      ok: false,
      error: { code: 'instance_not_found', message: 'No instance inst-9' },
    });
    expect(refused).toEqual([]);
  });
});
