import { beforeEach, describe, expect, it } from 'vitest';
import { ipcMain } from 'electron';
import { fake, FakeWebContents, FakeWebFrame } from '../../test/support/electron/fake-electron';
import { SIM_MODELS } from '../../shared/catalog';
import { BRIDGE_ACTION_NAMES } from '../../shared/bridge-actions';
import { IpcChannel } from '../../shared/ipc-channels';
import { registerIpcHandlers } from './ipc-handlers';
import { APP_ORIGIN } from './security';
import { fakeIpcBackend, fakeRouteDispatch } from '../../test/support/electron/fake-ipc-backend';

let window: FakeWebContents;
let refused: Array<[string, string]>;
let b: ReturnType<typeof fakeIpcBackend>;
let dispatch: ReturnType<typeof fakeRouteDispatch>;

beforeEach(() => {
  fake.reset();
  window = new FakeWebContents(`${APP_ORIGIN}/index.html`);
  refused = [];
  b = fakeIpcBackend();
  dispatch = fakeRouteDispatch((request) => {
    if (request.path === '/api/instances' && request.method === 'POST') return { status: 201, body: { id: 'inst-1', model: 'sim/llama-3.2-1b' } };
    if (request.path === '/api/models') return { body: { models: SIM_MODELS } };
    if (request.path.startsWith('/api/instances/inst-9'))
      return {
        status: 409,
        body: { error: { message: '2 requests will end if this model stops', type: 'conflict_error', code: 'requests_in_flight', param: null, requests: 2 } },
      };
    return {};
  });
  registerIpcHandlers({
    ipcMain,
    backend: b,
    dispatch,
    policy: { trustedWebContents: () => window as never, origin: APP_ORIGIN },
    onRefused: (channel, reason) => refused.push([channel, reason]),
  });
});

describe('IPC handlers', () => {
  it('registers exactly one handler per renderer-to-main channel: every action, the snapshot catch-up and the log follow', () => {
    const expected = [...BRIDGE_ACTION_NAMES, 'getSnapshot', 'followLog', 'unfollowLog'].map((k) => IpcChannel[k as keyof typeof IpcChannel]);
    expect([...fake.ipcMain.handlers.keys()].sort()).toEqual(expected.sort());
    expect(fake.ipcMain.handlers.has(IpcChannel.snapshot)).toBe(false);
  });

  it("dispatches each action's method, path and body to the route table, and answers its decoded value", async () => {
    expect(await fake.ipcMain.invoke(IpcChannel.getSnapshot, window)).toMatchObject({ ok: true, value: { seq: 7 } });
    expect(await fake.ipcMain.invoke(IpcChannel.createInstance, window, { model: 'sim/llama-3.2-1b' })).toEqual({ ok: true, value: { id: 'inst-1' } });
    expect(await fake.ipcMain.invoke(IpcChannel.updateInstance, window, 'inst 1', { fastSynch: 'off' })).toEqual({ ok: true, value: null });
    await fake.ipcMain.invoke(IpcChannel.cancelRequest, window, 'chatcmpl-1');
    await fake.ipcMain.invoke(IpcChannel.stopAll, window, { confirm: true });
    const models = (await fake.ipcMain.invoke(IpcChannel.listModels, window)) as { ok: true; value: Array<{ id: string }> };
    expect(models.value.map((m) => m.id)).toEqual(SIM_MODELS.map((m) => m.id));
    expect(dispatch.mock.calls.map(([r]) => r)).toEqual([
      { method: 'POST', path: '/api/instances', body: { model: 'sim/llama-3.2-1b' }, auth: 'ipc' },
      { method: 'PATCH', path: '/api/instances/inst%201', body: { fastSynch: 'off' }, auth: 'ipc' },
      { method: 'POST', path: '/v1/cancel/chatcmpl-1', body: undefined, auth: 'ipc' },
      { method: 'DELETE', path: '/api/instances', body: { confirm: true }, auth: 'ipc' },
      { method: 'GET', path: '/api/models', body: undefined, auth: 'ipc' },
    ]);
    expect(refused).toEqual([]);
  });

  it("passes a route's error back in its one shape: code, words and the stop's count, not counted as refused here", async () => {
    expect(await fake.ipcMain.invoke(IpcChannel.stopInstance, window, 'inst-9')).toEqual({
      ok: false,
      error: { code: 'requests_in_flight', message: '2 requests will end if this model stops', requests: 2 },
    });
    expect(refused).toEqual([]);
  });

  it('refuses another webContents, counts it, and never dispatches', async () => {
    const stranger = new FakeWebContents(`${APP_ORIGIN}/index.html`);
    const answer = await fake.ipcMain.invoke(IpcChannel.stopAll, stranger);
    expect(answer).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
    expect((answer as { error: { message: string } }).error.message).toContain("is not exobar's window");
    expect(dispatch).not.toHaveBeenCalled();
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
    expect(dispatch).not.toHaveBeenCalled();
    expect(refused).toHaveLength(3);
  });

  it('refuses everything while no window exists', async () => {
    fake.reset();
    registerIpcHandlers({
      ipcMain,
      backend: b,
      dispatch,
      policy: { trustedWebContents: () => null, origin: APP_ORIGIN },
      onRefused: (c, r) => refused.push([c, r]),
    });
    expect(await fake.ipcMain.invoke(IpcChannel.getSnapshot, window)).toMatchObject({ ok: false, error: { code: 'refused_sender' } });
  });

  it.each([
    ['a malformed exo control', IpcChannel.controlExoProcess, [undefined]],
    ['an argument to the snapshot', IpcChannel.getSnapshot, ['now']],
    ['a negative line count', IpcChannel.followLog, ['exobar', -1]],
  ])('refuses an invalid payload (%s) with a clear message, counted', async (_name, channel, args) => {
    const answer = (await fake.ipcMain.invoke(channel, window, ...args)) as { ok: false; error: { code: string; message: string } };
    expect(answer).toMatchObject({ ok: false, error: { code: 'invalid_payload' } });
    expect(answer.error.message).toContain(channel);
    expect(refused).toHaveLength(1);
    expect(dispatch).not.toHaveBeenCalled();
  });
});
