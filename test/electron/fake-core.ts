/** A stand-in for a running core (startCore's result) in the app glue's tests. */
import { vi } from 'vitest';
import { SIM_MODELS } from '../../shared/catalog';
import type { Snapshot } from '../../shared/snapshot';
import type { ExoProcessManager } from '../../electron/core/exo-process';
import type { MlxRuntimeService } from '../../electron/core/mlx/mlx-runtime-service';
import type { ExobarNode } from '../../electron/core/node-types';
import type { RunningCore, StartCoreOptions } from '../../electron/core/start-core';
import { instance, snapshot as makeSnapshot } from './snapshot-fixtures';

export class FakeNode {
  current: Snapshot;
  readonly listeners = new Set<(s: Snapshot) => void>();
  readonly rejected: string[] = [];
  constructor(url: string) {
    this.current = makeSnapshot({ apiBaseUrl: `${url}/v1` });
  }
  /** Publishes a new snapshot (seq incremented) to onSnapshot listeners. */
  publish(changes: Partial<Snapshot>): Snapshot {
    this.current = { ...this.current, ...changes, seq: this.current.seq + 1 };
    for (const listener of this.listeners) listener(this.current);
    return this.current;
  }
  models = vi.fn(() => [...SIM_MODELS]);
  snapshot = vi.fn(() => this.current);
  onSnapshot = vi.fn((listener: (s: Snapshot) => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  });
  countRejectedInput = vi.fn((boundary: string) => {
    this.rejected.push(boundary);
  });
  createInstance = vi.fn(async (options: { model: string }) => instance('inst-1', { model: options.model }));
  deleteInstance = vi.fn(async (_id: string) => undefined);
  updateInstance = vi.fn(async () => undefined);
  cancel = vi.fn((_id: string) => true);
  setLaunchProgress = vi.fn();
  setApiBaseUrl = vi.fn();
  setMlxRuntime = vi.fn();
  setExoProcess = vi.fn();
  setExtraModels = vi.fn();
  waitForReady = vi.fn(async () => undefined);
  submit = vi.fn();
  runnerLogs = vi.fn(() => null);
  recentEvents = vi.fn(() => []);
  requestTimelines = vi.fn(() => []);
  shutdown = vi.fn(async () => undefined);
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
    const node = new FakeNode(url);
    const mlx = new FakeMlx();
    let hold: Promise<void> | null = null;
    const core: FakeCore = {
      node: node as unknown as ExobarNode,
      fakeNode: node,
      url,
      host: options.host ?? '127.0.0.1',
      port,
      token: 'test-token',
      dataDir: options.dataDir,
      settings: options.settings!,
      server: {} as RunningCore['server'],
      mlx: mlx as unknown as MlxRuntimeService,
      fakeMlx: mlx,
      // The app only asks whether exobar owns an exo, how long its stop takes, and kills it at a deadline: an idle stand-in.
      exoProcess: { ownsProcess: false, stopBudgetMs: 27_000, killNow: vi.fn(() => false), diagnosticLogTails: () => [], shutdown: async () => undefined } as unknown as ExoProcessManager,
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
