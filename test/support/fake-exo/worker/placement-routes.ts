/**
 * The fake exo's placement and instance creation, as exo 0.3.70 answers them
 * (src/exo/api/main.py, master/placement.py; docs/exo.md "exo source this code follows"):
 *
 * - `GET /instance/placement?model_id&sharding&instance_meta&min_nodes`: a tagged
 *   Instance on the one Mac with the most available memory that holds the model, or
 *   400 with the placement reason ("No cycles found with sufficient memory"; JACCL
 *   on a single Mac: "Requested RDMA (MlxJaccl) but no RDMA-connected cycles available");
 * - `POST /instance {"instance": <tagged Instance>}`: 200 "Command received.", 400 only
 *   when the cluster-total available memory is below the model's size, a no-op for an
 *   instance id already placed; the runners then load step by step to RunnerReady;
 * - a loaded instance takes its size from its Macs' available memory, a deleted one
 *   gives it back (placement reserves nothing: re-read memory between two launches).
 */
import { randomUUID } from 'node:crypto';
import type { FakeExoCluster, FakeInstance } from '../fake-cluster';
import type { FakeExoHandler } from '../fake-exo-server';
import { exoError, sendJson } from './exo-answers';
import { modelCard, type Json } from '../fixture-data';
import type { ServerResponse } from 'node:http';

export interface PlacementRoutes {
  handler: FakeExoHandler;
  /** The next instance created fails while loading, with this error message. */
  failNextLoad(message: string): void;
  /** Instances created by POST /instance stay loading (never ready) while true. */
  holdLoading: boolean;
  /** Stops the loading timer. */
  stop(): void;
}

const GB = 1e9;

const sizeOf = (card: Json) => Number((card.storageSize as { inBytes: number }).inBytes);

/** The placement and instance routes over `cluster`; a timer loads newly created instances. */
export function fakePlacementRoutes(cluster: FakeExoCluster, options: { loadStepMs: number }): PlacementRoutes {
  const charged = new Map<string, Array<{ nodeId: string; bytes: number }>>();
  const loading = new Set<string>();
  let failNext: string | null = null;
  let timer: NodeJS.Timeout | null = null;

  const routes: PlacementRoutes = {
    holdLoading: false,
    failNextLoad: (message) => {
      failNext = message;
    },
    stop: () => {
      if (timer) clearInterval(timer);
      timer = null;
    },
    handler(req, res, url, body) {
      const method = req.method ?? 'GET';
      if (method === 'GET' && url.pathname === '/instance/placement') {
        placement(res, url.searchParams);
        return true;
      }
      if (method === 'POST' && url.pathname === '/instance') {
        create(res, body);
        return true;
      }
      const deleted = /^\/instance\/([^/]+)$/.exec(url.pathname);
      if (method === 'DELETE' && deleted) refund(decodeURIComponent(deleted[1]!));
      // The built-in route answers the DELETE itself.
      return false;
    },
  };

  function placement(res: ServerResponse, query: URLSearchParams): void {
    const model = query.get('model_id');
    if (!model) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['query', 'model_id'], msg: 'Field required', input: null }] });
    const meta = query.get('instance_meta') ?? 'MlxRing';
    const sharding = query.get('sharding') === 'Tensor' ? 'Tensor' : 'Pipeline';
    if (meta === 'MlxJaccl') return sendJson(res, 400, exoError(400, 'Bad Request', 'Requested RDMA (MlxJaccl) but no RDMA-connected cycles available'));
    const card = modelCard(model);
    // min_nodes: a cycle of at least that many Macs, each holding its share of the layers.
    const minNodes = Math.max(1, Math.floor(Number(query.get('min_nodes') ?? '1')) || 1);
    const share = sizeOf(card) / minNodes;
    const fits = cluster.nodes.filter((n) => n.alive && n.ramAvailable >= share).sort((a, b) => b.ramAvailable - a.ramAvailable);
    if (fits.length < minNodes) return sendJson(res, 400, exoError(400, 'Bad Request', 'No cycles found with sufficient memory'));
    const nLayers = Number(card.nLayers);
    const per = Math.ceil(nLayers / minNodes);
    const instance: FakeInstance = {
      id: randomUUID(),
      kind: 'MlxRingInstance',
      modelId: model,
      card,
      sharding,
      shards: fits.slice(0, minNodes).map((node, rank) => ({
        runnerId: randomUUID(),
        nodeId: node.id,
        rank,
        startLayer: Math.min(rank * per, nLayers),
        endLayer: Math.min((rank + 1) * per, nLayers),
      })),
      port: 49_153 + Math.floor(Math.random() * 16_000),
    };
    sendJson(res, 200, cluster.instanceJson(instance));
  }

  function create(res: ServerResponse, body: Buffer): void {
    const parsed = parseInstance(body);
    if (!parsed) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['body', 'instance'], msg: 'Field required', input: {} }] });
    const card = modelCard(parsed.modelId);
    const answer = () => sendJson(res, 200, { message: 'Command received.', command_id: randomUUID(), model_card: card });
    if (cluster.instances.has(parsed.instanceId)) return answer();
    const available = cluster.nodes.reduce((sum, n) => sum + n.ramAvailable, 0);
    if (available < sizeOf(card)) {
      return sendJson(
        res,
        400,
        exoError(
          400,
          'Bad Request',
          `Insufficient memory to create instance. Required: ${(sizeOf(card) / GB).toFixed(1)}GB, Available: ${(available / GB).toFixed(1)}GB`,
        ),
      );
    }
    const names = parsed.shards.map((s) => cluster.nodes.find((n) => n.id === s.nodeId)?.name);
    if (names.some((n) => n === undefined)) return answer(); // exo does no topology validation; the master drops it
    const made = cluster.addInstance({ model: parsed.modelId, nodes: names as string[], kind: parsed.kind, sharding: parsed.sharding });
    rekey(made, parsed);
    loading.add(made.id);
    timer ??= setInterval(tick, options.loadStepMs);
    answer();
  }

  /** Gives the created instance the ids the client posted (placement's ids). */
  function rekey(made: FakeInstance, parsed: ParsedInstance): void {
    const oldId = made.id;
    cluster.instances.delete(oldId);
    made.id = parsed.instanceId;
    cluster.instances.set(made.id, made);
    made.shards.forEach((shard, i) => {
      const runnerId = parsed.shards[i]?.runnerId ?? shard.runnerId;
      const status = cluster.runners.get(shard.runnerId)!;
      cluster.runners.delete(shard.runnerId);
      shard.runnerId = runnerId;
      cluster.runners.set(runnerId, status);
    });
    for (const task of cluster.tasks.values()) if (task.body.instanceId === oldId) task.body.instanceId = made.id;
  }

  function tick(): void {
    if (routes.holdLoading) return;
    for (const id of [...loading]) {
      const instance = cluster.instances.get(id);
      if (!instance) {
        loading.delete(id);
        continue;
      }
      const tags = instance.shards.map((s) => Object.keys(cluster.runners.get(s.runnerId) ?? {})[0]);
      if (failNext && tags.includes('RunnerLoading')) {
        const node = cluster.nodes.find((n) => n.id === instance.shards[0]!.nodeId)!;
        cluster.failRunner(instance.modelId, node.name, { errorMessage: failNext });
        failNext = null;
        loading.delete(id);
        continue;
      }
      if (tags.every((t) => t === 'RunnerReady')) {
        loading.delete(id);
        const bytes = sizeOf(instance.card) / instance.shards.length;
        const entries = instance.shards.map((s) => ({ nodeId: s.nodeId, bytes }));
        for (const e of entries) {
          const node = cluster.nodes.find((n) => n.id === e.nodeId);
          if (node) node.ramAvailable -= e.bytes;
        }
        charged.set(id, entries);
      }
    }
    if (loading.size > 0) cluster.step();
    else routes.stop();
  }

  function refund(instanceId: string): void {
    for (const e of charged.get(instanceId) ?? []) {
      const node = cluster.nodes.find((n) => n.id === e.nodeId);
      if (node) node.ramAvailable += e.bytes;
    }
    charged.delete(instanceId);
  }

  return routes;
}

interface ParsedInstance {
  instanceId: string;
  kind: string;
  modelId: string;
  sharding: 'Pipeline' | 'Tensor';
  shards: Array<{ runnerId: string; nodeId: string; rank: number }>;
}

/** The posted tagged Instance (camelCase, as placement answers it). */
function parseInstance(body: Buffer): ParsedInstance | null {
  try {
    const tagged = (JSON.parse(body.toString('utf8')) as { instance?: Json }).instance;
    if (!tagged) return null;
    const kind = Object.keys(tagged)[0]!;
    const inner = tagged[kind] as Json;
    const assignments = inner.shardAssignments as { modelId: string; runnerToShard: Record<string, Json>; nodeToRunner: Record<string, string> };
    const shards = Object.entries(assignments.nodeToRunner).map(([nodeId, runnerId]) => {
      const shard = assignments.runnerToShard[runnerId] ?? {};
      const meta = (shard[Object.keys(shard)[0] ?? ''] ?? {}) as { deviceRank?: number };
      return { nodeId, runnerId, rank: meta.deviceRank ?? 0 };
    });
    const shardTag = Object.keys(Object.values(assignments.runnerToShard)[0] ?? {})[0] ?? '';
    return {
      instanceId: String(inner.instanceId),
      kind,
      modelId: assignments.modelId,
      sharding: shardTag.startsWith('Tensor') ? 'Tensor' : 'Pipeline',
      shards: shards.sort((a, b) => a.rank - b.rank),
    };
  } catch {
    return null;
  }
}
