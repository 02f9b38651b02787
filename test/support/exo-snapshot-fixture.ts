/**
 * A snapshot with an attached two-Mac exo cluster, built from the contract in
 * shared/exo-snapshot.ts: one exo instance sharded over both Macs (one runner failed
 * with exo's Metal GPU timeout), a task waiting behind it, a pending cancel, and a
 * local sim instance beside it. The shape the exo client in the core fills in.
 */
import type { ExoInstanceDetail, ExoNodeSnapshot, ExoSection } from '../../shared/exo-snapshot';
import { emptySnapshot, type ExoInstanceSnapshot, type Snapshot } from '../../shared/snapshot';
import { instanceFixture } from './instance-fixture';
import { emptySharing } from '../../shared/sharing';

const T0 = 1_700_000_000_000;

function exoNode(nodeId: string, name: string, attached: boolean): ExoNodeSnapshot {
  return {
    nodeId,
    name,
    label: name,
    chip: 'Apple M3 Ultra',
    model: 'Mac Studio',
    memoryTotalBytes: 512 * 1024 ** 3,
    memoryAvailableBytes: 300 * 1024 ** 3,
    gpuUsage: 0.4,
    lastSeenAt: T0,
    isAttachedNode: attached,
    fastSynch: attached ? { enabled: false, source: 'exobar' } : { enabled: true, source: 'assumed' },
    downloads: [],
  };
}

export function exoSectionFixture(overrides: Partial<ExoSection> = {}): ExoSection {
  return {
    url: 'http://127.0.0.1:52415',
    connected: true,
    since: T0 - 60_000,
    nodeId: '12D3KooWA',
    nodes: [exoNode('12D3KooWA', 'studio-a', true), exoNode('12D3KooWB', 'studio-b', false)],
    lastGoodPollAt: T0,
    lastError: null,
    pollErrors: 0,
    parseErrors: 0,
    unknownTags: 0,
    restartedAt: null,
    events: [],
    ...overrides,
  };
}

export function exoInstanceFixture(detail: Partial<ExoInstanceDetail> = {}): ExoInstanceSnapshot {
  return {
    source: 'exo',
    id: 'exo-llama-70b',
    model: 'mlx-community/Llama-3.3-70B-Instruct-4bit',
    modelName: 'Llama 3.3 70B',
    instanceType: 'ring',
    queue: {
      capacity: null,
      requests: [
        {
          id: 'chatcmpl-exo-1',
          phase: 'queued',
          ageMs: 4_000,
          promptTokens: 30,
          completionTokens: 0,
          decodeTokensPerSecond: null,
          itlP50Ms: null,
          itlP95Ms: null,
        },
      ],
    },
    prefill: null,
    pendingCancels: [],
    ttft: { samples: [], p50Ms: null, p95Ms: null, latest: null },
    tokensPerSecond: null,
    sharing: emptySharing(300_000, 'proxied'),
    exo: {
      exoInstanceId: 'b7e1c0de-0000-4000-8000-000000000001',
      kind: 'MlxRingInstance',
      kindKnown: true,
      matchedByModel: false,
      sharding: 'Pipeline',
      runners: [
        {
          runnerId: 'runner-a',
          nodeId: '12D3KooWA',
          nodeName: 'studio-a',
          nodeLabel: 'studio-a',
          rank: 0,
          status: 'RunnerReady',
          known: true,
          layersLoaded: null,
          totalLayers: null,
          errorMessage: null,
          diagnostics: [],
          statusSince: T0 - 30_000,
        },
        {
          runnerId: 'runner-b',
          nodeId: '12D3KooWB',
          nodeName: 'studio-b',
          nodeLabel: 'studio-b',
          rank: 1,
          status: 'RunnerFailed',
          known: true,
          layersLoaded: null,
          totalLayers: null,
          errorMessage: 'Metal GPU timeout',
          diagnostics: [{ kind: 'RunnerMetalGpuTimeout', message: 'command buffer timed out', details: { errno: 5 } }],
          statusSince: T0 - 5_000,
        },
      ],
      tasks: [{ taskId: 'task-1', commandId: 'chatcmpl-exo-1', status: 'Pending', place: 'waiting_for_load', ageMs: 4_000, observed: true }],
      pendingCancels: [{ taskId: 'task-0', commandId: null, ageMs: 12_000 }],
      endedTasks: 3,
      ghostGeneration: null,
      ...detail,
    },
  };
}

/** The whole snapshot: a local sim instance, the exo instance, the exo section and an exo warning. */
export function exoSnapshotFixture(): Snapshot {
  return {
    ...emptySnapshot(),
    seq: 9,
    at: T0,
    version: '0.1.0',
    apiBaseUrl: 'http://127.0.0.1:52416/v1',
    instances: [instanceFixture(), exoInstanceFixture()],
    warnings: [
      {
        code: 'exo_runner_failed',
        instanceIds: ['exo-llama-70b'],
        title: 'Llama 3.3 70B: a runner failed on studio-b',
        risk: 'Requests to this instance wait until exo replaces the runner.',
        fix: 'Delete the instance in exo and place it again.',
      },
      {
        code: 'two_ring_fast_synch',
        instanceIds: ['exo-llama-70b', 'inst-1b'],
        title: 'Fast synch may be on for two ring models sharing a GPU',
        risk: 'With fast synch on and more than one MLX process on one GPU, the GPU wait can spin forever.',
        fix: 'Start exo with EXO_FAST_SYNCH=off.',
        assumed: true,
      },
    ],
    exo: exoSectionFixture(),
    exoOffer: null,
    exoProcess: null,
  };
}
