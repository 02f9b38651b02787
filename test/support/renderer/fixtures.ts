/**
 * Snapshot fixtures for component and store tests: one builder per card state, all
 * starting from a ready simulated ring instance with fast synch off.
 */
import { stateOf } from '../runner-state-of';
import type { SafePairPlan } from '../../../shared/api';
import { SIM_MODELS, type CatalogModel } from '../../../shared/catalog';
import type { RunnerStatus } from '../../../shared/runner-protocol';
import { instanceFixture } from '../instance-fixture';
import { emptySnapshot, type LocalInstanceSnapshot, type MlxRuntimeSnapshot, type Snapshot, type TtftSample, type Warning } from '../../../shared/snapshot';

const GiB = 1024 ** 3;
export const T0 = 1_700_000_000_000;

export function ttftSample(n: number, overrides: Partial<TtftSample> = {}): TtftSample {
  const waitMs = 20 + n;
  const prefillMs = 150 + 10 * n;
  const firstTokenMs = 60;
  return {
    requestId: `chatcmpl-sample-${n}`,
    at: T0 + n * 1000,
    totalMs: waitMs + prefillMs + firstTokenMs,
    waitMs,
    prefillMs,
    firstTokenMs,
    promptTokens: 200,
    ...overrides,
  };
}

export function instance(overrides: Partial<LocalInstanceSnapshot> = {}): LocalInstanceSnapshot {
  return instanceFixture(overrides);
}

export function withStatus(status: RunnerStatus, overrides: Partial<LocalInstanceSnapshot> = {}): LocalInstanceSnapshot {
  const base = instance(overrides);
  return { ...base, runner: { ...base.runner, status, state: stateOf(status) } };
}

/** The 3B instance mid-prefill of a long prompt, with one request behind it in each earlier phase. */
export function prefillingInstance(): LocalInstanceSnapshot {
  return withStatus(
    { kind: 'RunnerRunning' },
    {
      id: 'inst-3b',
      model: 'sim/llama-3.2-3b',
      modelName: 'Llama 3.2 3B (simulated)',
      queue: {
        capacity: 64,
        requests: [
          {
            id: 'chatcmpl-decoding-0001',
            phase: 'decoding',
            ageMs: 9_000,
            promptTokens: 40,
            completionTokens: 57,
            decodeTokensPerSecond: 31.4,
            itlP50Ms: 30,
            itlP95Ms: 41,
          },
          {
            id: 'chatcmpl-prefill-00002',
            phase: 'prefilling',
            ageMs: 6_400,
            promptTokens: 30_000,
            completionTokens: 0,
            decodeTokensPerSecond: null,
            itlP50Ms: null,
            itlP95Ms: null,
          },
          {
            id: 'chatcmpl-awaiting-0003',
            phase: 'awaiting_ack',
            ageMs: 3_100,
            promptTokens: 120,
            completionTokens: 0,
            decodeTokensPerSecond: null,
            itlP50Ms: null,
            itlP95Ms: null,
          },
          {
            id: 'chatcmpl-queued-000004',
            phase: 'queued',
            ageMs: 1_200,
            promptTokens: 80,
            completionTokens: 0,
            decodeTokensPerSecond: null,
            itlP50Ms: null,
            itlP95Ms: null,
          },
          {
            id: 'chatcmpl-cancel-000005',
            phase: 'cancelling',
            ageMs: 2_000,
            promptTokens: 90,
            completionTokens: 0,
            decodeTokensPerSecond: null,
            itlP50Ms: null,
            itlP95Ms: null,
          },
        ],
      },
      prefill: { requestId: 'chatcmpl-prefill-00002', processedTokens: 12_288, totalTokens: 30_000, etaMs: 11_200 },
      pendingCancels: [
        { requestId: 'chatcmpl-cancel-000005', state: 'held', ageMs: 2_000 },
        { requestId: 'chatcmpl-decoding-0001', state: 'sent', ageMs: 150 },
      ],
      tokensPerSecond: 104.2,
    },
  );
}

export function instanceWithTtft(samples = 5): LocalInstanceSnapshot {
  const list = Array.from({ length: samples }, (_, n) => ttftSample(n));
  return instance({
    ttft: { samples: list, p50Ms: 260, p95Ms: 300, latest: list[list.length - 1] ?? null },
    tokensPerSecond: 42.5,
    counters: { completed: samples, failed: 0, cancelled: 0, rejected: 0 },
  });
}

export function ringFastSynchWarning(ids = ['inst-1b', 'inst-3b']): Warning {
  return {
    code: 'two_ring_fast_synch',
    instanceIds: ids,
    title: 'Fast synch is on for sim/llama-3.2-1b, sim/llama-3.2-3b while 2 ring models share the GPU',
    risk: 'With MLX_METAL_FAST_SYNCH=1 and more than one MLX process on one GPU, the GPU wait can spin forever.',
    fix: 'Relaunch the affected runners with fast synch off (MLX_METAL_FAST_SYNCH=0), the rule for ring instances.',
  };
}

export function fastSynchOn(base: LocalInstanceSnapshot): LocalInstanceSnapshot {
  return { ...base, fastSynch: { override: 'on', enabled: true, reason: 'forced on by user', reported: true } };
}

export function snapshot(overrides: Partial<Snapshot> = {}): Snapshot {
  return {
    ...emptySnapshot(),
    seq: 1,
    at: T0,
    version: '0.1.0',
    apiBaseUrl: 'http://127.0.0.1:52416/v1',
    ...overrides,
  };
}

export function safePairPlan(overrides: Partial<SafePairPlan> = {}): SafePairPlan {
  return {
    models: [
      {
        model: 'sim/llama-3.2-1b',
        modelName: 'Llama 3.2 1B (simulated)',
        engine: 'sim',
        simulated: true,
        instanceType: 'ring',
        fastSynch: false,
        fastSynchReason: 'ring instance',
        memoryBytes: 1.4 * GiB,
        alreadyRunning: false,
        state: null,
      },
      {
        model: 'sim/llama-3.2-3b',
        modelName: 'Llama 3.2 3B (simulated)',
        engine: 'sim',
        simulated: true,
        instanceType: 'ring',
        fastSynch: false,
        fastSynchReason: 'ring instance',
        memoryBytes: 3.4 * GiB,
        alreadyRunning: false,
        state: null,
      },
    ],
    memory: { requiredBytes: 4.8 * GiB, freeBytes: 20 * GiB, headroomBytes: 2 * GiB },
    blockers: [],
    canRun: true,
    ...overrides,
  };
}

/** A local MLX model as the core's scan lists it (id `mlx/<repo id>`, memory ≈ 1.2 × size on disk). */
export function mlxModel(overrides: Partial<CatalogModel> = {}): CatalogModel {
  return {
    id: 'mlx/mlx-community/Llama-3.2-3B-Instruct-4bit',
    name: 'Llama-3.2-3B-Instruct-4bit',
    engine: 'mlx',
    simulated: false,
    memoryBytes: Math.round(2.16 * GiB),
    sizeClass: 'medium',
    path: '/Users/me/.cache/huggingface/hub/models--mlx-community--Llama-3.2-3B-Instruct-4bit/snapshots/abc',
    ...overrides,
  };
}

/** The node's catalog: the two sim models and, when given, local MLX models. */
export function catalog(mlx: CatalogModel[] = []): CatalogModel[] {
  return [...SIM_MODELS, ...mlx];
}

/** The MLX engine's state; by default a Mac with Apple silicon where no Python with mlx-lm was found. */
export function mlxRuntime(overrides: Partial<MlxRuntimeSnapshot> = {}): MlxRuntimeSnapshot {
  return {
    available: false,
    supported: true,
    python: null,
    version: null,
    reason: 'No Python with mlx-lm found (python3: No module named mlx_lm). Use "Set up MLX runtime".',
    localModels: 0,
    setup: null,
    ...overrides,
  };
}

export function mlxAvailable(localModels = 2): MlxRuntimeSnapshot {
  return mlxRuntime({
    available: true,
    python: '/Users/me/Library/Application Support/exobar/mlx-venv/bin/python',
    version: '0.26.3',
    reason: 'mlx-lm 0.26.3 found in /Users/me/Library/Application Support/exobar/mlx-venv/bin/python, chosen as the venv "Set up MLX runtime" made',
    localModels,
  });
}

export function mlxUnsupported(): MlxRuntimeSnapshot {
  return mlxRuntime({ supported: false, reason: 'MLX runs only on macOS with Apple silicon; this is linux/x64. Simulated models still work.' });
}

export function mlxSetupRunning(): MlxRuntimeSnapshot {
  return mlxRuntime({
    setup: {
      state: 'running',
      step: 'install-mlx-lm',
      message: 'Downloading mlx-0.29.1-cp312-cp312-macosx_15_0_arm64.whl (30.2 MB)',
      outputTail: ['Collecting mlx-lm>=0.26', 'Collecting mlx>=0.29', 'Downloading mlx-0.29.1-cp312-cp312-macosx_15_0_arm64.whl (30.2 MB)'],
      error: null,
    },
  });
}

export function mlxSetupFailed(): MlxRuntimeSnapshot {
  return mlxRuntime({
    setup: {
      state: 'failed',
      step: 'install-mlx-lm',
      message: 'Setup failed',
      outputTail: [
        'Collecting mlx-lm>=0.26',
        'ERROR: Could not find a version that satisfies the requirement mlx>=0.29',
        'ERROR: No matching distribution found for mlx>=0.29',
      ],
      error: '/data/mlx-venv/bin/python -m pip install mlx-lm>=0.26 failed (exit 1). Is this Python 3.10 or later on Apple silicon?',
    },
  });
}
