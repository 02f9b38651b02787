/**
 * The popover's log view over IPC, end to end without Electron: the preload's bridge,
 * main's real handlers (sender check, payload schemas) and the real log reading on a
 * data directory. A line appended to a runner's log reaches the page's listener; the
 * page's unsubscribe stops the reading in main.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fake, FakeWebContents } from '../../test/support/electron/fake-electron';
import { instance, snapshot } from '../../test/support/electron/snapshot-fixtures';
import type { ExobarBridge } from '../../shared/bridge';
import { LOG_LINES_CHANNEL } from '../../shared/ipc-channels';
import type { LogStreamEvent } from '../../shared/logs';
import { createPreloadBridge } from '../preload';
import { registerIpcHandlers, type IpcBackend } from './ipc-handlers';
import { fakeRouteDispatch } from '../../test/support/electron/fake-ipc-backend';
import { createLogFollowBackend, type LogFollowBackend } from './log-follow-backend';
import { APP_ORIGIN } from './security';

let dataDir: string;
let logs: LogFollowBackend;
let bridge: ExobarBridge;
let refused: string[];

beforeEach(() => {
  fake.reset();
  dataDir = mkdtempSync(join(tmpdir(), 'exobar-ipc-logs-'));
  mkdirSync(join(dataDir, 'logs', 'llama-1'), { recursive: true });
  writeFileSync(join(dataDir, 'logs', 'llama-1', 'stderr.log'), 'first\nsecond\n');
  writeFileSync(join(dataDir, 'exobar.log'), '{"level":30,"msg":"core started"}\n');
  const page = new FakeWebContents(`${APP_ORIGIN}/index.html`);
  const pushListeners = new Map<string, Set<(event: unknown, payload: unknown) => void>>();
  logs = createLogFollowBackend({
    dataDir,
    ownLog: join(dataDir, 'exobar.log'),
    snapshot: () => snapshot({ instances: [instance('llama-1', { modelName: 'Llama 3.2 1B (simulated)' })] }),
    push: (payload) => {
      for (const l of pushListeners.get(LOG_LINES_CHANNEL) ?? []) l({}, payload);
    },
  });
  refused = [];
  registerIpcHandlers({
    dispatch: fakeRouteDispatch(),
    ipcMain: fake.ipcMain,
    backend: logs as unknown as IpcBackend,
    policy: { trustedWebContents: () => page as never, origin: APP_ORIGIN },
    onRefused: (_channel, reason) => refused.push(reason),
  });
  bridge = createPreloadBridge({
    invoke: (channel: string, ...args: unknown[]) => fake.ipcMain.invoke(channel, page, ...args),
    on: (channel: string, listener: (event: unknown, payload: unknown) => void) => {
      if (!pushListeners.has(channel)) pushListeners.set(channel, new Set());
      pushListeners.get(channel)!.add(listener);
    },
    removeListener: (channel: string, listener: (event: unknown, payload: unknown) => void) => pushListeners.get(channel)?.delete(listener),
  } as never);
});
afterEach(() => {
  logs.stopAll();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the log view over IPC', () => {
  it('sends the last lines, then a line appended to the file; unsubscribing stops the reading in main', async () => {
    const events: LogStreamEvent[] = [];
    const stop = bridge.followLog('llama-1', 1, (e) => events.push(e));
    await expect
      .poll(() => events)
      .toEqual([
        { kind: 'source', id: 'llama-1', title: 'Llama 3.2 1B (simulated): runner log' },
        { kind: 'lines', lines: ['second'] },
      ]);
    expect(logs.active()).toBe(1);
    appendFileSync(join(dataDir, 'logs', 'llama-1', 'stderr.log'), 'third\n');
    await expect.poll(() => events.at(-1), { timeout: 10_000 }).toEqual({ kind: 'lines', lines: ['third'] });
    stop();
    await expect.poll(() => logs.active()).toBe(0);
  });

  it('refuses a source id that is not one and says when a log does not exist', async () => {
    const events: LogStreamEvent[] = [];
    bridge.followLog('../../etc/passwd', 10, (e) => events.push(e));
    await expect.poll(() => events).toEqual([{ kind: 'ended', message: expect.stringMatching(/Invalid arguments for exobar:follow-log: argument 1/) }]);
    expect(refused).toHaveLength(1);
    const missing: LogStreamEvent[] = [];
    bridge.followLog('llama-9', 10, (e) => missing.push(e));
    await expect.poll(() => missing).toEqual([{ kind: 'ended', message: 'No log "llama-9"; there are: llama-1, exobar' }]);
  });
});
