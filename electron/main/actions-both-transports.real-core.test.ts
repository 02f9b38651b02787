/**
 * Every page action of the action table (shared/bridge-actions.ts) over both ways the
 * page reaches one core: HTTP (the browser's bridge, `exobar serve`'s routes) and IPC
 * (the app's window: main's real handlers dispatching to the same route table in
 * process). Each action is called over both with the same arguments, against one app
 * with the real core and sim runners, and the answers must agree: the route's status and
 * body, and the value or error (code, words, count) the page gets (main's IPC answer,
 * against what the HTTP bridge makes of the HTTP answer with the same shared decoder). Ids and
 * times that legitimately differ between two calls are blanked first.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { fake } from '../../test/support/electron/fake-electron';
import { defaultSettings } from '../../shared/api';
import { BRIDGE_ACTION_NAMES, BRIDGE_ACTIONS, type BridgeActionArgs, type BridgeActionName } from '../../shared/bridge-actions';
import { bridgeAnswer, type JsonAction } from '../../shared/bridge-answers';
import { IpcChannel } from '../../shared/ipc-channels';
import { mlxPlatform } from '../core/mlx/mlx-platform';
import { stopAllInstances } from '../core/node/stop-all';
import { localInstances } from '../../shared/instance-state';
import { startExobarApp } from './exobar-app';

/** The arguments each action is called with: chosen so two calls in a row answer alike (reads, refusals, idempotent writes). */
const CALLS: { [K in Exclude<BridgeActionName, 'exportDiagnostics'>]: BridgeActionArgs<K>[] } = {
  getSafePairPlan: [[]],
  launchSafePair: [[{ acknowledgeMemory: true }]],
  createInstance: [[{ model: 'sim/no-such-model' }], [{ model: '' }]],
  updateInstance: [['no-such-instance', { fastSynch: 'off' }]],
  stopInstance: [['no-such-instance'], ['no-such-instance', { confirm: true }]],
  retryInstance: [['no-such-instance']],
  unloadInstance: [['no-such-instance']],
  setResidency: [['no-such-instance', { pin: true }]],
  stopAll: [[{ confirm: true }]],
  cancelRequest: [['chatcmpl-none']],
  // Where MLX can run (Metal on a Mac, the CPU on Linux) the setup would really install it: called only where it is refused.
  setupMlxRuntime: mlxPlatform(process.platform, process.arch).supported ? [] : [[]],
  refreshMlxRuntime: [[]],
  listModels: [[]],
  checkModelFits: [[]],
  probeExo: [['http://127.0.0.1:1']],
  attachExo: [['http://127.0.0.1:1'], ['not a url']],
  detachExo: [[]],
  controlExoProcess: [[{ action: 'restart' }]],
  placeLostModelAgain: [['exobar/never-lost']],
  dismissLostModel: [['exobar/never-lost']],
  listRequests: [[], [{ source: 'local', limit: 5 }], [{ limit: 0 }]],
  getHistory: [['1h'], ['bogus' as never]],
  startSharingCheck: [[{ promptTokens: 1 }]],
  getCheck: [['no-such-check']],
  cancelCheck: [['no-such-check']],
  listChecks: [[]],
  listLogSources: [[]],
};

/** Fields that differ between two calls for reasons of their own: ids, times, free memory read now. */
const VARYING = /(^id$|Id$|At$|Ms$|^at$|^ts$|^time$|freeBytes|availableBytes|usedBytes|^seq$|^deleted$)/;

/** The state an action that changes it starts from, set again before each of its calls (so the second call is not answered "already done"). */
const BEFORE: Partial<Record<BridgeActionName, () => Promise<void>>> = {
  launchSafePair: async () => {
    await stopAllInstances(exobar!.core.node);
    await vi.waitFor(() => expect(localInstances(exobar!.core.node.snapshot())).toEqual([]), { timeout: 20_000 });
  },
  stopAll: async () => {
    const launched = await exobar!.core.server.dispatch({ method: 'POST', path: '/api/launch/safe-pair', body: { acknowledgeMemory: true }, auth: 'ipc' });
    expect(launched.status).toBeLessThan(300);
  },
};

function blankVarying(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(blankVarying);
  // The free memory read now, in words ("21.7 GiB free", "3.1 GiB usable"): it moves between two calls.
  if (typeof value === 'string') return value.replace(/\d+(\.\d+)? (GB|GiB) (free|usable)/g, '<varies> $2 $3');
  if (value === null || typeof value !== 'object') return value;
  const varies = (v: unknown): boolean => typeof v === 'number' || typeof v === 'string' || (Array.isArray(v) && v.every((x) => typeof x === 'string'));
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, VARYING.test(k) && varies(v) ? '<varies>' : blankVarying(v)]));
}

/**
 * What the page's HTTP bridge makes of a route's answer (renderer/src/bridge/http-bridge.ts):
 * the shared decoder's value, or the error's code, words and count; in the IPC envelope's
 * shape, so it compares with what main's handler answers the window.
 */
function asPageSees(name: JsonAction, answer: { status: number; body: unknown }): unknown {
  if (answer.status < 400) return { ok: true, value: bridgeAnswer(name, answer.body) ?? null };
  const { message, code, requests } = (answer.body as { error: { message: string; code: string | null; requests?: number } }).error;
  return { ok: false, error: { code, message, ...(requests === undefined ? {} : { requests }) } };
}

const userData = mkdtempSync(join(tmpdir(), 'exobar-actions-'));
let exobar: Awaited<ReturnType<typeof startExobarApp>>;

beforeAll(async () => {
  fake.reset();
  fake.app.paths.userData = userData;
  writeFileSync(join(userData, 'settings.json'), JSON.stringify({ ...defaultSettings(), apiPort: 0 }));
  exobar = await startExobarApp({ mainDir: join(userData, 'no-build', 'main'), logger: pino({ level: 'silent' }), handleSignals: false, simTimeScale: 0.05 });
}, 60_000);

afterAll(async () => {
  fake.app.quit();
  await vi.waitFor(() => expect(fake.app.exit).toHaveBeenCalled(), { timeout: 20_000 });
  rmSync(userData, { recursive: true, force: true });
});

describe('every action of the table over HTTP and over IPC', () => {
  it('has calls for every action but the bundle (which main saves through its own sheet)', () => {
    expect(Object.keys(CALLS).sort()).toEqual(BRIDGE_ACTION_NAMES.filter((n) => n !== 'exportDiagnostics').sort());
  });

  it.each(Object.entries(CALLS).flatMap(([name, calls]) => calls.map((args) => [name, args] as [BridgeActionName, unknown[]])))(
    '%s %j: the same route answer, and the same value or error in the page',
    async (name, args) => {
      const page = fake.windows[0]!.webContents;
      const { core } = exobar!;
      const route = BRIDGE_ACTIONS[name] as { http: { method: 'GET'; path: (...a: unknown[]) => string; body?: (...a: unknown[]) => unknown } };
      const method = route.http.method;
      const path = route.http.path(...args);
      const body = route.http.body?.(...args);

      const before = BEFORE[name] ?? (async () => undefined);
      await before();
      const response = await fetch(`${core.url}${path}`, {
        method,
        headers: { Authorization: `Bearer ${core.token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      const overHttp = { status: response.status, body: text ? (JSON.parse(text) as unknown) : undefined };
      await before();
      const dispatched = await core.server.dispatch({ method, path, body, auth: 'ipc' });
      // The route's answer: the same status and body, in process as over the socket.
      expect({ status: dispatched.status, body: blankVarying(dispatched.body) }).toEqual({ status: overHttp.status, body: blankVarying(overHttp.body) });

      // What the page gets: main's handler for the window answers what the HTTP bridge makes of the same route's answer.
      await before();
      const overIpc = await fake.ipcMain.invoke(IpcChannel[name], page, ...args);
      expect(blankVarying(overIpc)).toEqual(blankVarying(asPageSees(name as JsonAction, overHttp)));
    },
    30_000,
  );
});
