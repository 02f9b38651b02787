/** A stand-in for a running core (startCore's result) in the app glue's tests. */
import { vi } from 'vitest';
import type { ExoAttachment } from '../../../electron/core/exo/attach/exo-attachment';
import type { ExoProcessManager } from '../../../electron/core/exo-process';
import type { MlxRuntimeService } from '../../../electron/core/mlx/mlx-runtime-service';
import type { RequestLog } from '../../../electron/core/request-log/request-log';
import type { History } from '../../../electron/core/history/history';
import type { HistoryRange } from '../../../shared/history';
import type { RunningCore, StartCoreOptions } from '../../../electron/core/start-core';
import { FakeNode } from '../fake-node';
import { createApiServer } from '../../../electron/core/api/api-server';
import { CheckManager } from '../../../electron/core/checks/check-manager';

/** The one fake node (test/support/fake-node.ts) as a started core has it: its API URL set, `models` and `deleteInstance` spied. */
function coreFakeNode(url: string): FakeNode {
  const node = new FakeNode();
  node.publish({ apiBaseUrl: `${url}/v1` });
  vi.spyOn(node, 'models');
  vi.spyOn(node, 'deleteInstance');
  return node;
}

/** The MLX runtime service's part the app uses; `supported` is false (not Apple silicon) unless a test sets it. */
export class FakeMlx {
  supported = false;
  startSetup = vi.fn(async () => undefined);
  refresh = vi.fn(async () => ({
    available: false,
    supported: this.supported,
    python: null,
    version: null,
    reason: 'no python with mlx-lm found',
    localModels: 0,
    setup: null,
  }));
}

/** Attach mode's surface the app's actions call, recording the calls. */
export class FakeExoAttachment {
  url: string | null = null;
  probe = vi.fn(async (url: string) => ({ ok: true as const, url, nodeId: 'a'.repeat(32), nodes: 1 }));
  attach = vi.fn(async (url: string) => {
    this.url = url;
    return { ok: true as const, url, nodeId: 'a'.repeat(32), nodes: 1 };
  });
  detach = vi.fn(async () => {
    this.url = null;
  });
  bundleSource = vi.fn(() => null);
  /** Not an exo instance (answers false): the app stops it on the local node. */
  stopInstance = vi.fn(async (_id: string) => false);
}

export interface FakeCore extends RunningCore {
  fakeNode: FakeNode;
  fakeMlx: FakeMlx;
  stopCalls: number;
  /** Makes stop() wait until `release()` is called. */
  holdStop(): { release(): void };
}

/** A startCore replacement recording its options; the core's stop() is observable. */
export function fakeStartCore() {
  const started: Array<{ options: StartCoreOptions; core: FakeCore }> = [];
  let failNext: unknown[] = [];
  const startCore = vi.fn(async (options: StartCoreOptions): Promise<RunningCore> => {
    if (failNext.length > 0) throw failNext.shift();
    const port = options.port === 0 ? 61234 : (options.port ?? 52416);
    const url = `http://${options.host}:${port}`;
    const node = coreFakeNode(url);
    const mlx = new FakeMlx();
    let hold: Promise<void> | null = null;
    const core: FakeCore = {
      node,
      fakeNode: node,
      url,
      host: options.host ?? '127.0.0.1',
      port,
      token: 'test-token',
      dataDir: options.dataDir,
      settings: options.settings!,
      // The built-in control and OpenAI routes over the fake node, never listening: main's IPC handler dispatches the page's actions to it in process.
      server: createApiServer({ node, token: 'test-token', rendererDir: null }),
      mlx: mlx as unknown as MlxRuntimeService,
      exo: new FakeExoAttachment() as unknown as ExoAttachment,
      fakeMlx: mlx,
      // The app only asks whether exobar owns an exo, how long its stop takes, and kills it at a deadline: an idle stand-in.
      exoProcess: {
        ownsProcess: false,
        stopBudgetMs: 27_000,
        killNow: vi.fn(() => false),
        diagnosticLogTails: () => [],
        shutdown: async () => undefined,
      } as unknown as ExoProcessManager,
      // The app never reads the request log itself: a stand-in that records nothing.
      requestLog: {
        recordModelEvent: vi.fn(),
        record: vi.fn(),
        close: vi.fn(),
        query: vi.fn(() => ({ requests: [], events: [], total: 0, diskBytes: 0, diskCapBytes: 0, problem: null })),
      } as unknown as RequestLog,
      history: { query: vi.fn((range: HistoryRange) => ({ range, models: [], diskBytes: 0, diskCapBytes: 0, problem: null })) } as unknown as History,
      checks: new CheckManager({ node, dataDir: options.dataDir }),
      showLaunch: node.showLaunch,
      stopCalls: 0,
      async stop() {
        core.stopCalls += 1;
        if (hold) await hold;
      },
      holdStop() {
        let release!: () => void;
        hold = new Promise((resolve) => (release = resolve));
        return { release };
      },
    };
    started.push({ options, core });
    return core;
  });
  return {
    startCore,
    started,
    /** The next start attempts throw these errors, in order. */
    failWith(...errors: unknown[]) {
      failNext = errors;
    },
  };
}
