/**
 * The fake exo's placement and instance creation, as exo 0.3.70 answers them
 * (src/exo/api/main.py, master/placement.py; docs/exo.md "exo source this code follows"):
 *
 * - `GET /instance/placement?model_id&sharding&instance_meta&min_nodes`: a tagged
 *   Instance on the one Mac with the most available memory that holds the model, or
 *   400 with the placement reason ("No cycles found with sufficient memory"; JACCL
 *   on a single Mac: "Requested RDMA (MlxJaccl) but no RDMA-connected cycles available");
 * - `GET /instance/previews?model_id[&node_ids...]`: one preview per sharding × instance
 *   kind × Mac count (1 … the Macs in the topology), deduplicated as exo does: a kind
 *   that cannot be placed gives one preview with its error and no instance; a placed
 *   one gives the instance and `memory_delta_by_node` (the size split evenly);
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
      if (method === 'GET' && url.pathname === '/instance/previews') {
        previews(res, url.searchParams);
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

  /**
   * exo's placement of `model`: a cycle of at least `minNodes` Macs (each holding its
   * share of the layers, every `required` one among them), or the reason it cannot.
   */
  function place(model: string, meta: string, sharding: 'Pipeline' | 'Tensor', minNodes: number, required: string[] = []): FakeInstance | string {
    if (meta === 'MlxJaccl') return 'Requested RDMA (MlxJaccl) but no RDMA-connected cycles available';
    const card = modelCard(model);
    const share = sizeOf(card) / minNodes;
    const fits = cluster.nodes.filter((n) => n.alive && n.ramAvailable >= share).sort((a, b) => b.ramAvailable - a.ramAvailable);
    const chosen = [...fits.filter((n) => required.includes(n.id)), ...fits.filter((n) => !required.includes(n.id))].slice(0, minNodes);
    if (chosen.length < minNodes || required.some((id) => !chosen.some((n) => n.id === id))) return 'No cycles found with sufficient memory';
    const nLayers = Number(card.nLayers);
    const per = Math.ceil(nLayers / minNodes);
    return {
      id: randomUUID(),
      kind: 'MlxRingInstance',
      modelId: model,
      card,
      sharding,
      shards: chosen.map((node, rank) => ({
        runnerId: randomUUID(),
        nodeId: node.id,
        rank,
        startLayer: Math.min(rank * per, nLayers),
        endLayer: Math.min((rank + 1) * per, nLayers),
      })),
      port: 49_153 + Math.floor(Math.random() * 16_000),
    };
  }

  function placement(res: ServerResponse, query: URLSearchParams): void {
    const model = query.get('model_id');
    if (!model) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['query', 'model_id'], msg: 'Field required', input: null }] });
    const meta = query.get('instance_meta') ?? 'MlxRing';
    const sharding = query.get('sharding') === 'Tensor' ? 'Tensor' : 'Pipeline';
    // min_nodes: a cycle of at least that many Macs, each holding its share of the layers.
    const minNodes = Math.max(1, Math.floor(Number(query.get('min_nodes') ?? '1')) || 1);
    const placed = place(model, meta, sharding, minNodes);
    if (typeof placed === 'string') return sendJson(res, 400, exoError(400, 'Bad Request', placed));
    sendJson(res, 200, cluster.instanceJson(placed));
  }

  /** exo 0.3.70's previews (src/exo/api/main.py get_placement_previews): every combination, deduplicated by kind and Mac count. */
  function previews(res: ServerResponse, query: URLSearchParams): void {
    const model = query.get('model_id');
    if (!model) return sendJson(res, 422, { detail: [{ type: 'missing', loc: ['query', 'model_id'], msg: 'Field required', input: null }] });
    const topology = cluster.nodes.filter((n) => n.alive);
    if (topology.length === 0) return sendJson(res, 200, { previews: [] });
    const required = query.getAll('node_ids');
    const size = sizeOf(modelCard(model));
    const seen = new Set<string>();
    const out: Json[] = [];
    for (const sharding of ['Pipeline', 'Tensor'] as const) {
      for (const meta of ['MlxRing', 'MlxJaccl']) {
        for (let minNodes = 1; minNodes <= topology.length; minNodes++) {
          const placed = place(model, meta, sharding, minNodes, required);
          if (typeof placed === 'string') {
            if (!seen.has(`${sharding}/${meta}/0`))
              out.push({ model_id: model, sharding, instance_meta: meta, instance: null, memory_delta_by_node: null, error: placed });
            seen.add(`${sharding}/${meta}/0`);
            continue;
          }
          const key = `${sharding}/${meta}/${placed.shards.length}`;
          if (seen.has(key)) continue;
          seen.add(key);
          const ids = placed.shards.map((s) => s.nodeId).sort();
          const delta = Object.fromEntries(ids.map((id, i) => [id, Math.floor(size / ids.length) + (i < size % ids.length ? 1 : 0)]));
          out.push({ model_id: model, sharding, instance_meta: meta, instance: cluster.instanceJson(placed), memory_delta_by_node: delta, error: null });
        }
      }
    }
    sendJson(res, 200, { previews: out });
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
