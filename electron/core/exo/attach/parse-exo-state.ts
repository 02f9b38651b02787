/**
 * The tolerant parser of exo's State: every instance, runner, task and node entry is
 * read on its own, so one bad entry never hides the others; it is skipped and counted.
 * Unknown tags are kept with `known: false`, never an error.
 */
import type { z } from 'zod';
import { EXO_RUNNER_STATUSES, type ExoRunnerDiagnostic } from '../../../../shared/exo-snapshot';
import type { InstanceType } from '../../../../shared/instance-vocabulary';
import { firstIssue, isPlainObject, untag } from './exo-schema-helpers';
import {
  DiagnosticBodySchema,
  EXO_INSTANCE_KINDS,
  EXO_SHARD_KINDS,
  EXO_TASK_KINDS,
  InstanceBodySchema,
  LastSeenSchema,
  NodeIdentitySchema,
  NodeMemorySchema,
  NodeSystemSchema,
  RunnerBodySchema,
  ShardBodySchema,
  TaskBodySchema,
  TopologyNodeSchema,
} from './exo-state-schemas';

/** One entry of exo's state that could not be read. */
export interface ExoParseProblem {
  /** The State key: "instances", "runners", "tasks", "nodeMemory", ... */
  section: string;
  /** The entry's key (an id), or null for the section itself. */
  key: string | null;
  message: string;
}

export interface ExoShard {
  runnerId: string;
  nodeId: string | null;
  /** deviceRank; null when the shard could not be read. */
  rank: number | null;
  startLayer: number | null;
  endLayer: number | null;
}

export interface ExoInstance {
  instanceId: string;
  /** exo's tag: MlxRingInstance, MlxJacclInstance, or one exobar does not know. */
  kind: string;
  known: boolean;
  instanceType: InstanceType | null;
  modelId: string;
  sharding: 'Pipeline' | 'Tensor' | null;
  /** Rank order. */
  shards: ExoShard[];
}

export interface ExoRunnerStatus {
  tag: string;
  known: boolean;
  layersLoaded: number | null;
  totalLayers: number | null;
  errorMessage: string | null;
  diagnostics: ExoRunnerDiagnostic[];
}

export interface ExoTask {
  taskId: string;
  kind: string;
  known: boolean;
  status: string;
  instanceId: string | null;
  commandId: string | null;
  cancelledTaskId: string | null;
  runnerId: string | null;
}

export interface ExoNodeFacts {
  name: string | null;
  chip: string | null;
  model: string | null;
  memoryTotalBytes: number | null;
  memoryAvailableBytes: number | null;
  gpuUsage: number | null;
  lastSeenAt: number | null;
}

/** A section parsed entry by entry. `entries` is null when the section itself was unreadable. */
export interface ParsedSection<T> {
  entries: Map<string, T> | null;
  problems: ExoParseProblem[];
  unknownTags: number;
}

type EntryResult<T> = { ok: true; value: T; unknown?: boolean; problems?: ExoParseProblem[] } | { ok: false; message: string };

function parseRecord<T>(section: string, raw: unknown, parseEntry: (key: string, value: unknown) => EntryResult<T>): ParsedSection<T> {
  const out: ParsedSection<T> = { entries: null, problems: [], unknownTags: 0 };
  if (!isPlainObject(raw)) {
    out.problems.push({ section, key: null, message: `expected an object, got ${describe(raw)}` });
    return out;
  }
  out.entries = new Map();
  for (const [key, value] of Object.entries(raw)) {
    let result: EntryResult<T>;
    try {
      result = parseEntry(key, value);
    } catch (error) {
      result = { ok: false, message: error instanceof Error ? error.message : String(error) };
    }
    if (!result.ok) {
      out.problems.push({ section, key, message: result.message });
      continue;
    }
    out.entries.set(key, result.value);
    if (result.unknown) out.unknownTags++;
    if (result.problems) out.problems.push(...result.problems);
  }
  return out;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

function read<S extends z.ZodType>(schema: S, value: unknown): { ok: true; value: z.output<S> } | { ok: false; message: string } {
  const result = schema.safeParse(value);
  return result.success ? { ok: true, value: result.data } : { ok: false, message: firstIssue(result.error) };
}

function parseShard(
  runnerId: string,
  raw: unknown,
  nodeOf: Map<string, string>,
): { shard: ExoShard; sharding: 'Pipeline' | 'Tensor' | null; problem: string | null } {
  const empty = { runnerId, nodeId: nodeOf.get(runnerId) ?? null, rank: null, startLayer: null, endLayer: null };
  const tagged = untag(raw);
  if (!tagged) return { shard: empty, sharding: null, problem: `shard of runner ${runnerId} is not a tagged value` };
  const body = read(ShardBodySchema, tagged.body);
  if (!body.ok) return { shard: empty, sharding: null, problem: `shard of runner ${runnerId}: ${body.message}` };
  return {
    shard: { ...empty, rank: body.value.deviceRank ?? null, startLayer: body.value.startLayer ?? null, endLayer: body.value.endLayer ?? null },
    sharding: EXO_SHARD_KINDS[tagged.tag] ?? null,
    problem: null,
  };
}

/** Parses `/state/instances`: each instance on its own; a bad shard leaves its runner with rank null. */
export function parseInstances(raw: unknown): ParsedSection<ExoInstance> {
  return parseRecord('instances', raw, (key, value) => {
    const tagged = untag(value);
    if (!tagged) return { ok: false, message: 'not a tagged instance' };
    const body = read(InstanceBodySchema, tagged.body);
    if (!body.ok) return { ok: false, message: `${tagged.tag}: ${body.message}` };
    const { shardAssignments } = body.value;
    const nodeOf = new Map(Object.entries(shardAssignments.nodeToRunner).map(([node, runner]) => [runner, node]));
    const problems: ExoParseProblem[] = [];
    let sharding: ExoInstance['sharding'] = null;
    const shards = Object.entries(shardAssignments.runnerToShard).map(([runnerId, shardRaw]) => {
      const parsed = parseShard(runnerId, shardRaw, nodeOf);
      if (parsed.problem) problems.push({ section: 'instances', key, message: parsed.problem });
      sharding ??= parsed.sharding;
      return parsed.shard;
    });
    // A runner named only in nodeToRunner still has a row (its shard is unknown).
    for (const [runnerId, nodeId] of nodeOf) {
      if (!shards.some((s) => s.runnerId === runnerId)) shards.push({ runnerId, nodeId, rank: null, startLayer: null, endLayer: null });
    }
    shards.sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity));
    const instanceType = EXO_INSTANCE_KINDS[tagged.tag] ?? null;
    return {
      ok: true,
      unknown: instanceType === null,
      problems,
      value: {
        instanceId: body.value.instanceId,
        kind: tagged.tag,
        known: instanceType !== null,
        instanceType,
        modelId: shardAssignments.modelId,
        sharding,
        shards,
      },
    };
  });
}

function parseDiagnostic(raw: unknown): ExoRunnerDiagnostic {
  const tagged = untag(raw);
  if (!tagged) return { kind: 'unknown', message: null, details: {} };
  const body = DiagnosticBodySchema.safeParse(tagged.body);
  const fields = isPlainObject(tagged.body) ? { ...tagged.body } : {};
  delete fields.message;
  return { kind: tagged.tag, message: body.success ? (body.data.message ?? null) : null, details: fields };
}

const KNOWN_RUNNER_STATUSES = new Set<string>(EXO_RUNNER_STATUSES);

/** Parses `/state/runners`: each status on its own; an unknown status tag is kept (known: false). */
export function parseRunners(raw: unknown): ParsedSection<ExoRunnerStatus> {
  return parseRecord('runners', raw, (_key, value) => {
    const tagged = untag(value);
    if (!tagged) return { ok: false, message: 'not a tagged runner status' };
    const body = read(RunnerBodySchema, tagged.body);
    if (!body.ok) return { ok: false, message: `${tagged.tag}: ${body.message}` };
    const known = KNOWN_RUNNER_STATUSES.has(tagged.tag);
    return {
      ok: true,
      unknown: !known,
      value: {
        tag: tagged.tag,
        known,
        layersLoaded: body.value.layersLoaded ?? null,
        totalLayers: body.value.totalLayers ?? null,
        errorMessage: body.value.errorMessage ?? null,
        diagnostics: (body.value.diagnostics ?? []).map(parseDiagnostic),
      },
    };
  });
}

const KNOWN_TASK_KINDS = new Set<string>(EXO_TASK_KINDS);

/** Parses `/state/tasks`: each task on its own; prompt text is never read. */
export function parseTasks(raw: unknown): ParsedSection<ExoTask> {
  return parseRecord('tasks', raw, (key, value) => {
    const tagged = untag(value);
    if (!tagged) return { ok: false, message: 'not a tagged task' };
    const body = read(TaskBodySchema, tagged.body);
    if (!body.ok) return { ok: false, message: `${tagged.tag}: ${body.message}` };
    const known = KNOWN_TASK_KINDS.has(tagged.tag);
    const b = body.value;
    return {
      ok: true,
      unknown: !known,
      value: {
        taskId: b.taskId ?? key,
        kind: tagged.tag,
        known,
        status: b.taskStatus,
        instanceId: b.instanceId ?? null,
        commandId: b.commandId ?? null,
        cancelledTaskId: b.cancelledTaskId ?? null,
        runnerId: b.runnerId ?? null,
      },
    };
  });
}

/** The slow-changing sections exobar reads every 5 s, as exo names them. */
export interface RawNodeSections {
  nodeIdentities?: unknown;
  nodeMemory?: unknown;
  nodeSystem?: unknown;
  topology?: unknown;
  lastSeen?: unknown;
}

export interface ParsedNodes {
  /** Node id → facts; absent sections leave their fields null. */
  nodes: Map<string, ExoNodeFacts>;
  problems: ExoParseProblem[];
}

/** Parses the node sections into one fact sheet per node id (the union of every section's ids). */
export function parseNodes(raw: RawNodeSections): ParsedNodes {
  const problems: ExoParseProblem[] = [];
  const nodes = new Map<string, ExoNodeFacts>();
  const factsOf = (id: string): ExoNodeFacts => {
    let facts = nodes.get(id);
    if (!facts) {
      facts = { name: null, chip: null, model: null, memoryTotalBytes: null, memoryAvailableBytes: null, gpuUsage: null, lastSeenAt: null };
      nodes.set(id, facts);
    }
    return facts;
  };
  const section = <S extends z.ZodType>(name: keyof RawNodeSections, value: unknown, schema: S, apply: (facts: ExoNodeFacts, v: z.output<S>) => void) => {
    if (value === undefined) return;
    const parsed = parseRecord(name, value, (_key, entry) => read(schema, entry));
    problems.push(...parsed.problems);
    for (const [id, v] of parsed.entries ?? []) apply(factsOf(id), v);
  };
  if (raw.topology !== undefined) {
    const nodesRaw = isPlainObject(raw.topology) ? raw.topology.nodes : undefined;
    if (!Array.isArray(nodesRaw)) problems.push({ section: 'topology', key: null, message: 'expected topology.nodes to be an array' });
    else {
      nodesRaw.forEach((entry, i) => {
        const id = TopologyNodeSchema.safeParse(entry);
        if (id.success) factsOf(id.data);
        else problems.push({ section: 'topology', key: String(i), message: firstIssue(id.error) });
      });
    }
  }
  section('nodeIdentities', raw.nodeIdentities, NodeIdentitySchema, (f, v) => {
    f.name = v.friendlyName ?? null;
    f.chip = v.chipId ?? null;
    f.model = v.modelId ?? null;
  });
  section('nodeMemory', raw.nodeMemory, NodeMemorySchema, (f, v) => {
    f.memoryTotalBytes = v.ramTotal ?? null;
    f.memoryAvailableBytes = v.ramAvailable ?? null;
  });
  section('nodeSystem', raw.nodeSystem, NodeSystemSchema, (f, v) => {
    f.gpuUsage = v.gpuUsage ?? null;
  });
  section('lastSeen', raw.lastSeen, LastSeenSchema, (f, v) => {
    f.lastSeenAt = v;
  });
  return { nodes, problems };
}
