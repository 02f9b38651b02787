/**
 * exo's State document for the fake cluster, built whole on every call as exo's API
 * does (`model_dump()` of the entire State even for `/state/{path}`), with every
 * top-level key in exo's order (exo 0.3.70, src/exo/shared/types/state.py).
 */
import type { FakeExoCluster, FakeInstance, FakeNode } from './fake-cluster';
import { fakeDownloadEntries } from './fake-downloads';
import { modelCard, wholeModelShard, type Json } from './fixture-data';

export interface RenderOptions {
  /**
   * `/state` goes through FastAPI's jsonable_encoder (`…Z`); `/state/{path}` hands
   * Python datetimes to FastAPI, which encodes them with isoformat() (`…+00:00`).
   */
  isoStyle: 'z' | 'python';
}

function isoTime(ms: number, style: RenderOptions['isoStyle']): string {
  const iso = new Date(ms).toISOString(); // 2026-06-22T14:05:31.482Z
  const micro = `${iso.slice(0, 23)}${String(Math.floor((ms % 1) * 1000)).padStart(3, '0')}`;
  return style === 'z' ? `${micro}Z` : `${micro}+00:00`;
}

function byNode<T>(nodes: FakeNode[], value: (node: FakeNode) => T): Record<string, T> {
  return Object.fromEntries(nodes.map((n) => [n.id, value(n)]));
}

function busy(cluster: FakeExoCluster, node: FakeNode): boolean {
  for (const instance of cluster.instances.values()) {
    for (const shard of instance.shards) {
      if (shard.nodeId === node.id && 'RunnerRunning' in (cluster.runners.get(shard.runnerId) ?? {})) return true;
    }
  }
  return false;
}

function downloadsOf(cluster: FakeExoCluster, node: FakeNode): Json[] {
  const placed: FakeInstance[] = [...cluster.instances.values()].filter((i) => i.shards.some((s) => s.nodeId === node.id));
  const entries: Json[] = placed.map((instance) => {
    const shard = instance.shards.find((s) => s.nodeId === node.id)!;
    const bytes = (instance.card.storageSize as { inBytes: number }).inBytes;
    return {
      DownloadCompleted: {
        nodeId: node.id,
        shardMetadata: cluster.shardJson(instance, shard),
        modelDirectory: `/Users/ops/.exo/models/${instance.modelId.replace('/', '--')}`,
        total: { inBytes: bytes },
        readOnly: false,
      },
    };
  });
  entries.push(...fakeDownloadEntries(cluster, node.id));
  // Every 60 s exo's download coordinator lists every known card (~123 per node).
  for (let i = 0; i < node.downloadCards; i++) {
    const card = modelCard(`mlx-community/fake-catalog-model-${String(i).padStart(3, '0')}-4bit`, 24 + (i % 40));
    entries.push({
      DownloadPending: {
        nodeId: node.id,
        shardMetadata: wholeModelShard(card),
        modelDirectory: `/Users/ops/.exo/models/${String(card.modelId).replace('/', '--')}`,
        downloaded: { inBytes: 0 },
        total: card.storageSize,
      },
    });
  }
  return entries;
}

function connections(nodes: FakeNode[]): Json {
  const out: Json = {};
  nodes.forEach((from, i) => {
    const edges: Json = {};
    nodes.forEach((to, j) => {
      if (i === j) return;
      const ip = `192.168.1.${20 + j}`;
      edges[to.id] = [{ sinkMultiaddr: { address: `/ip4/${ip}/tcp/52415`, address_type: 'ip4', ip_address: ip, port: 52415 } }];
    });
    out[from.id] = edges;
  });
  return out;
}

/** The whole State of the fake cluster, as exo would serialize it. */
export function renderState(cluster: FakeExoCluster, options: RenderOptions): Json {
  const nodes = cluster.nodes;
  const now = cluster.now();
  const bytes = (inBytes: number) => ({ inBytes: Math.round(inBytes) });
  return {
    instances: Object.fromEntries([...cluster.instances.values()].map((i) => [i.id, cluster.instanceJson(i)])),
    runners: Object.fromEntries(cluster.runners),
    downloads: byNode(nodes, (n) => downloadsOf(cluster, n)),
    tasks: Object.fromEntries([...cluster.tasks].map(([id, t]) => [id, { [t.tag]: t.body }])),
    lastSeen: byNode(nodes, (n) => isoTime(n.alive ? now : n.lastSeenAt, options.isoStyle)),
    topology: { nodes: nodes.map((n) => n.id), connections: connections(nodes) },
    lastEventAppliedIdx: cluster.lastEventAppliedIdx,
    nodeIdentities: byNode(nodes, (n) => ({ modelId: n.model, chipId: n.chip, friendlyName: n.name, osVersion: '26.3', osBuildVersion: '25D125' })),
    nodeMemory: byNode(nodes, (n) => ({ ramTotal: bytes(n.ramTotal), ramAvailable: bytes(n.ramAvailable), swapTotal: bytes(0), swapAvailable: bytes(0) })),
    nodeDisk: byNode(nodes, () => ({ total: bytes(1995218165760), available: bytes(1412883070976) })),
    nodeSystem: byNode(nodes, (n) => ({ gpuUsage: busy(cluster, n) ? 0.97 : 0.02, temp: 48.5, sysPower: 40.2, pcpuUsage: 0.12, ecpuUsage: 0.08 })),
    nodeNetwork: byNode(nodes, (n) => ({ interfaces: (n.addresses ?? ['127.0.0.1']).map((ipAddress) => ({ name: 'lo', ipAddress, interfaceType: 'unknown' })) })),
    nodeThunderbolt: byNode(nodes, () => ({ interfaces: [] })),
    nodeThunderboltBridge: byNode(nodes, () => ({ enabled: false, exists: true, serviceName: 'Thunderbolt Bridge' })),
    nodeRdmaCtl: byNode(nodes, () => ({ enabled: false })),
    nodeBackends: byNode(nodes, () => ['MlxCpu', 'MlxMetal']),
    thunderboltBridgeCycles: [],
    instanceLinks: {},
    prefillServerPorts: {},
    customModelCards: {},
  };
}

/** camelCase → snake_case for every field name below the top level (tags and ids keep theirs). */
export function snakeCaseKeys(value: unknown, depth = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => snakeCaseKeys(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => {
      const snake = depth > 0 && /^[a-z]/.test(key) ? key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`) : key;
      return [snake, snakeCaseKeys(v, depth + 1)];
    }),
  );
}
