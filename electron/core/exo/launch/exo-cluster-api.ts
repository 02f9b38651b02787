/**
 * The exo calls the safe launch makes (exo 0.3.70, src/exo/api/main.py): the cluster's
 * instances, runners, nodes and downloaded models, `GET /instance/placement`,
 * `POST /instance` and `DELETE /instance/{id}`. Answers are parsed with the tolerant
 * state parser; exo's error message is kept in words.
 */
import { z } from 'zod';
import { exoOwnActions } from '../cluster-events/exo-own-actions';
import { callExo, readAll } from '../proxy/exo-upstream';
import { parseInstances, parseNodes, parseRunners, type ExoInstance, type ExoNodeFacts, type ExoRunnerStatus } from '../attach/parse-exo-state';

export interface ExoAnswer {
  status: number;
  json: unknown;
  /** exo's error message, or the body's start when it is not exo's error shape. */
  message: string;
}

/** One call to exo; throws an Error in words when the node cannot be reached. */
export async function exoCall(url: string, method: string, path: string, body?: unknown, timeoutMs = 10_000): Promise<ExoAnswer> {
  const call = callExo(url, method, path, body === undefined ? undefined : JSON.stringify(body));
  const timer = setTimeout(() => call.req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
  try {
    const res = await call.response;
    const raw = await readAll(res, 16 * 1024 * 1024);
    let json: unknown = null;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      // not JSON: the message says what came
    }
    const error = (json as { error?: { message?: unknown }; detail?: unknown } | null)?.error?.message;
    const message = typeof error === 'string' ? error : raw.toString('utf8').slice(0, 300);
    // The cluster events tell exobar's own placements and deletions from anyone else's.
    exoOwnActions.noteCall(method, path, body, res.statusCode ?? 0);
    return { status: res.statusCode ?? 0, json, message };
  } catch (error) {
    throw new Error(`exo at ${url} could not be reached for ${method} ${path.split('?')[0]}: ${(error as Error).message}`);
  } finally {
    clearTimeout(timer);
  }
}

async function okJson(url: string, path: string): Promise<unknown> {
  const answer = await exoCall(url, 'GET', path);
  if (answer.status !== 200) throw new Error(`exo answered ${answer.status} to GET ${path}: ${answer.message}`);
  return answer.json;
}

export interface ExoModelEntry {
  id: string;
  storageBytes: number;
  isText: boolean;
}

const ModelListSchema = z.looseObject({
  data: z.array(
    z.looseObject({
      id: z.string(),
      storage_size_megabytes: z.number().nullish(),
      tasks: z.array(z.string()).nullish(),
      capabilities: z.array(z.string()).nullish(),
    }),
  ),
});

export interface ExoCluster {
  instances: Map<string, ExoInstance>;
  runners: Map<string, ExoRunnerStatus>;
  nodes: Map<string, ExoNodeFacts>;
}

/** Instances, runners and the nodes' names and memory, read now (placement reserves nothing: read before each step). */
export async function readCluster(url: string): Promise<ExoCluster> {
  const [instances, runners, nodeIdentities, nodeMemory] = await Promise.all(
    ['/state/instances', '/state/runners', '/state/nodeIdentities', '/state/nodeMemory'].map((p) => okJson(url, p)),
  );
  return {
    instances: parseInstances(instances).entries ?? new Map(),
    runners: parseRunners(runners).entries ?? new Map(),
    nodes: parseNodes({ nodeIdentities, nodeMemory }).nodes,
  };
}

/** exo's downloaded models (`GET /models?status=downloaded`), with their size. */
export async function downloadedModels(url: string): Promise<ExoModelEntry[]> {
  const parsed = ModelListSchema.safeParse(await okJson(url, '/models?status=downloaded'));
  if (!parsed.success) throw new Error(`exo's model list could not be read: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data.data.map((m) => ({
    id: m.id,
    storageBytes: (m.storage_size_megabytes ?? 0) * 1024 * 1024,
    isText: (m.tasks ?? ['TextGeneration']).includes('TextGeneration') && (m.capabilities ?? ['text']).includes('text'),
  }));
}

export type PlacementResult = { ok: true; tagged: unknown; instance: ExoInstance; storageBytes: number | null } | { ok: false; reason: string };

const CardSizeSchema = z.looseObject({ storageSize: z.union([z.number(), z.looseObject({ inBytes: z.number() })]) });

/** The model's size from the model card inside a placed instance's first shard. */
export function storageOf(tagged: unknown): number | null {
  const inner = Object.values(
    (tagged ?? {}) as Record<string, { shardAssignments?: { runnerToShard?: Record<string, Record<string, { modelCard?: unknown }>> } }>,
  )[0];
  const shard = Object.values(inner?.shardAssignments?.runnerToShard ?? {})[0];
  const card = CardSizeSchema.safeParse(Object.values(shard ?? {})[0]?.modelCard);
  if (!card.success) return null;
  return typeof card.data.storageSize === 'number' ? card.data.storageSize : card.data.storageSize.inBytes;
}

/** `GET /instance/placement` for a ring, pipeline, one-node instance (more nodes only if the model needs them). */
export async function placeRing(url: string, model: string): Promise<PlacementResult> {
  const query = new URLSearchParams({ model_id: model, sharding: 'Pipeline', instance_meta: 'MlxRing', min_nodes: '1' });
  const answer = await exoCall(url, 'GET', `/instance/placement?${query}`);
  if (answer.status !== 200) return { ok: false, reason: answer.message };
  const parsed = parseInstances({ placement: answer.json }).entries?.get('placement');
  if (!parsed) return { ok: false, reason: 'exo answered a placement exobar cannot read' };
  return { ok: true, tagged: answer.json, instance: parsed, storageBytes: storageOf(answer.json) };
}
