/**
 * The exo client: polls one exo node's HTTP API and keeps the last good picture and
 * the connection's health. `/state/runners` and `/state/tasks` twice a second, with
 * `/state/instances` in the same round whenever they changed (and every 5 s);
 * `/node_id`, the node sections (identities, memory, system, topology, last seen) and
 * `downloads` every 5 s, one after another. Never `downloads` at the fast rate (~123
 * model cards per node) and never `/events` (the whole history). At most one request
 * in flight per path, a timeout per request, a body cap, and backoff while the node is
 * unreachable.
 */
import { backoffDelayMs } from '../../../../shared/backoff';
import type { Agent } from 'node:http';
import { DEFAULT_EXO_HTTP, exoAgent, getExoJsonIfChanged, type ExoFetchError, type ExoFetchIfChangedResult, type ExoHttpOptions } from './exo-http';
import { NodeIdSchema, normalizeExoUrl } from './exo-probe';
import {
  parseInstances,
  parseNodes,
  parseRunners,
  parseTasks,
  type ExoInstance,
  type ExoNodeFacts,
  type ExoParseProblem,
  type ExoRunnerStatus,
  type ExoTask,
  type RawNodeSections,
} from './parse-exo-state';
import { parseDownloads, type ExoDownload } from '../downloads/parse-exo-downloads';

export const FAST_PATHS = ['/state/instances', '/state/runners', '/state/tasks'] as const;
export const SLOW_SECTIONS = ['nodeIdentities', 'nodeMemory', 'nodeSystem', 'topology', 'lastSeen'] as const;

export interface ExoClientOptions {
  url: string;
  fastIntervalMs?: number;
  slowIntervalMs?: number;
  /** Longest wait between attempts while the node does not answer. */
  maxBackoffMs?: number;
  http?: Partial<ExoHttpOptions>;
  now?: () => number;
  /**
   * Parse every section on every poll even when exo sent the same bytes as last time
   * (default false: an unchanged section keeps what was read from it). For the poll
   * benchmark's contrast.
   */
  reparseUnchanged?: boolean;
  /** Called after every poll round that changed something. */
  onUpdate?: () => void;
}

export interface ExoConnectionState {
  url: string;
  connected: boolean;
  /** Epoch ms since when `connected` has had its value. */
  since: number;
  nodeId: string | null;
  lastGoodPollAt: number | null;
  lastError: { kind: ExoFetchError['kind'] | 'parse'; message: string; at: number } | null;
  pollErrors: number;
  parseErrors: number;
  /** Entries carrying a tag exo 0.3.70 does not have (kept, shown as unknown). */
  unknownTags: number;
  /** Set when the node id changed while attached (exo restarted). */
  restartedAt: number | null;
  /** Failed rounds in a row; drives the backoff. */
  failuresInRow: number;
}

/** The last good reading of each part of exo's state (null before the first). */
export interface ExoReading {
  instances: Map<string, ExoInstance> | null;
  runners: Map<string, ExoRunnerStatus> | null;
  tasks: Map<string, ExoTask> | null;
  nodes: Map<string, ExoNodeFacts> | null;
  /** The model downloads exo reports (pending entries skipped), read with the node sections; null before the first read. */
  downloads: ExoDownload[] | null;
  /** Epoch ms of the last good read of /state/downloads. */
  downloadsAt: number | null;
  /** Epoch ms of the last good read of the node sections (changed or not). */
  nodesAt: number | null;
  /** Epoch ms of the last good fast round. */
  fastAt: number | null;
}

/** One failed poll, for the diagnostic bundle's exo/poll-errors.jsonl. */
export interface ExoPollError {
  at: number;
  path: string;
  kind: ExoFetchError['kind'] | 'parse';
  message: string;
}

const KEPT_ERRORS = 200;

export class ExoClient {
  readonly url: string;
  readonly connection: ExoConnectionState;
  readonly reading: ExoReading = {
    instances: null,
    runners: null,
    tasks: null,
    nodes: null,
    nodesAt: null,
    downloads: null,
    downloadsAt: null,
    fastAt: null,
  };
  /** The last raw sections as exo sent them (for the bundle's exo/state.json, redacted there). */
  readonly raw: Record<string, unknown> = {};
  /** Recent failed polls and parse problems, newest last, bounded. */
  readonly errors: ExoPollError[] = [];
  /** The parse problems of the latest reading of each section. */
  readonly problems = new Map<string, ExoParseProblem[]>();

  private readonly base: URL;
  private readonly agent: Agent;
  private readonly http: ExoHttpOptions;
  private readonly now: () => number;
  private readonly inFlight = new Set<string>();
  private readonly unknownByPath = new Map<string, number>();
  /** The last body of each path that was read and taken in: the same bytes again are not parsed again. */
  private readonly lastBody = new Map<string, Buffer>();
  private timer: NodeJS.Timeout | null = null;
  private lastSlowAt = -Infinity;
  private nextAttemptAt = 0;
  private round: Promise<void> | null = null;

  constructor(private readonly options: ExoClientOptions) {
    const normalized = normalizeExoUrl(options.url);
    if (!normalized.ok) throw new Error(normalized.error);
    this.url = normalized.url;
    this.base = new URL(normalized.url);
    this.agent = exoAgent(this.base);
    this.http = { ...DEFAULT_EXO_HTTP, ...options.http };
    this.now = options.now ?? Date.now;
    this.connection = {
      url: this.url,
      connected: false,
      since: this.now(),
      nodeId: null,
      lastGoodPollAt: null,
      lastError: null,
      pollErrors: 0,
      parseErrors: 0,
      unknownTags: 0,
      restartedAt: null,
      failuresInRow: 0,
    };
  }

  /** Starts polling (the first round at once). */
  start(): void {
    if (this.timer) return;
    void this.tick();
    this.timer = setInterval(() => void this.tick(), this.options.fastIntervalMs ?? 500);
  }

  /** Stops polling and closes the keep-alive sockets; waits for a round in progress. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.round;
    this.agent.destroy();
  }

  /** One poll round now (the timer calls it; tests may too). Skipped while a round runs or during backoff. */
  tick(): Promise<void> {
    if (this.round || this.now() < this.nextAttemptAt) return this.round ?? Promise.resolve();
    this.round = this.pollRound().finally(() => {
      this.round = null;
    });
    return this.round;
  }

  private async pollRound(): Promise<void> {
    const slowDue = this.now() - this.lastSlowAt >= (this.options.slowIntervalMs ?? 5_000);
    // After a failure, /node_id first: it is small and tells a restart from an outage.
    if (slowDue || !this.connection.connected) {
      const ok = await this.pollNodeId();
      if (!ok) return this.roundFailed();
    }
    const [fastOk, slowOk] = await Promise.all([this.pollFast(slowDue), slowDue ? this.pollSlow() : Promise.resolve(true)]);
    if (slowDue && slowOk) this.lastSlowAt = this.now();
    if (!fastOk || !slowOk) return this.roundFailed();
    const now = this.now();
    if (!this.connection.connected) {
      this.connection.connected = true;
      this.connection.since = now;
    }
    this.connection.lastGoodPollAt = now;
    this.connection.failuresInRow = 0;
    this.reading.fastAt = now;
    this.options.onUpdate?.();
  }

  private roundFailed(): void {
    const now = this.now();
    if (this.connection.connected || this.connection.failuresInRow === 0) {
      this.connection.connected = false;
      this.connection.since = now;
    }
    this.connection.failuresInRow++;
    const wait = backoffDelayMs(this.connection.failuresInRow, {
      baseDelayMs: this.options.fastIntervalMs ?? 500,
      maxDelayMs: this.options.maxBackoffMs ?? 10_000,
    });
    this.nextAttemptAt = now + wait;
    this.options.onUpdate?.();
  }

  /**
   * GETs one path. `unchanged` when exo sent the bytes it sent last time for it: what
   * was read from them then still holds, so nothing is parsed or replaced.
   */
  private async fetch(path: string): Promise<ExoFetchIfChangedResult | null> {
    if (this.inFlight.has(path)) return null;
    this.inFlight.add(path);
    try {
      const result = await getExoJsonIfChanged(
        this.base,
        path,
        this.agent,
        this.http,
        this.options.reparseUnchanged ? null : (this.lastBody.get(path) ?? null),
      );
      if (!result.ok) this.recordError(path, result.error.kind, result.error.message);
      else if (!result.unchanged) this.lastBody.set(path, result.body);
      return result;
    } finally {
      this.inFlight.delete(path);
    }
  }

  private recordError(path: string, kind: ExoPollError['kind'], message: string): void {
    const at = this.now();
    if (kind === 'parse') this.connection.parseErrors++;
    else this.connection.pollErrors++;
    this.connection.lastError = { kind, message, at };
    this.errors.push({ at, path, kind, message });
    if (this.errors.length > KEPT_ERRORS) this.errors.splice(0, this.errors.length - KEPT_ERRORS);
  }

  private async pollNodeId(): Promise<boolean> {
    const result = await this.fetch('/node_id');
    if (!result?.ok) return false;
    if (result.unchanged) return true;
    const id = NodeIdSchema.safeParse(result.value);
    if (!id.success) {
      this.recordError('/node_id', 'not_json', 'GET /node_id: the answer is not an exo node id');
      return false;
    }
    const previous = this.connection.nodeId;
    if (previous !== null && previous !== id.data) this.connection.restartedAt = this.now();
    this.connection.nodeId = id.data;
    return true;
  }

  /**
   * The fast sections. `/state/runners` and `/state/tasks` every round; `/state/instances`
   * right after them, in the same round, when either changed (exo never places or deletes
   * an instance without touching them: a placement adds runners and worker tasks, a
   * delete cancels tasks and shuts runners down), on every slow round, and until it was
   * first read. At rest a round is then two requests instead of three: each request
   * costs the poller far more than reading an unchanged body.
   */
  private async pollFast(instancesDue: boolean): Promise<boolean> {
    const [runners, tasks] = await Promise.all([this.fetch('/state/runners'), this.fetch('/state/tasks')]);
    if (!runners?.ok || !tasks?.ok) return false;
    const readInstances = instancesDue || this.reading.instances === null || !runners.unchanged || !tasks.unchanged;
    const instances = readInstances ? await this.fetch('/state/instances') : null;
    if (readInstances && !instances?.ok) return false;
    // An unchanged section keeps its map (the same object): the monitor skips what did not change.
    if (instances?.ok && !instances.unchanged) {
      this.raw.instances = instances.value;
      this.reading.instances = this.accept('/state/instances', parseInstances(instances.value)) ?? this.reading.instances;
    }
    if (!runners.unchanged) {
      this.raw.runners = runners.value;
      this.reading.runners = this.accept('/state/runners', parseRunners(runners.value)) ?? this.reading.runners;
    }
    if (!tasks.unchanged) {
      this.raw.tasks = tasks.value;
      this.reading.tasks = this.accept('/state/tasks', parseTasks(tasks.value)) ?? this.reading.tasks;
    }
    return true;
  }

  /**
   * The node sections, then `downloads`, one request after another on one socket: every
   * answer costs exo a dump of its whole State, so asking for six at once only piles them
   * up there, and each extra socket is one more kept open (and probed) between slow rounds.
   * The first failure ends the round.
   */
  private async pollSlow(): Promise<boolean> {
    const results: ExoFetchIfChangedResult[] = [];
    for (const section of SLOW_SECTIONS) {
      const result = await this.fetch(`/state/${section}`);
      if (!result?.ok) return false;
      results.push(result);
    }
    await this.pollDownloads();
    // lastSeen moves on every exo tick, so the node sections rarely come back unchanged; when they all do, the node map stays.
    if (results.every((r) => r.ok && r.unchanged) && this.reading.nodes) {
      this.reading.nodesAt = this.now();
      return true;
    }
    const raw: RawNodeSections = {};
    SLOW_SECTIONS.forEach((section, i) => {
      const result = results[i]!;
      const value = result.ok && !result.unchanged ? result.value : this.raw[section];
      raw[section] = value;
      this.raw[section] = value;
    });
    const parsed = parseNodes(raw);
    this.countProblems('/state/nodes', parsed.problems);
    this.reading.nodes = parsed.nodes;
    this.reading.nodesAt = this.now();
    return true;
  }

  /**
   * `/state/downloads`, the largest section (about 130 KB a node, nearly all pending
   * entries): read with the node sections, every 5 s. Its failure does not fail the
   * round; the last downloads stay shown.
   */
  private async pollDownloads(): Promise<void> {
    const result = await this.fetch('/state/downloads');
    if (!result?.ok) return;
    if (result.unchanged) {
      // Still a read: speed and time left are worked out from when exo's figures were read.
      this.reading.downloadsAt = this.now();
      return;
    }
    const parsed = parseDownloads(result.value);
    this.countProblems('/state/downloads', parsed.problems);
    this.unknownByPath.set('/state/downloads', parsed.unknownTags);
    this.reading.downloads = parsed.downloads;
    this.reading.downloadsAt = this.now();
  }

  private accept<T>(path: string, parsed: { entries: Map<string, T> | null; problems: ExoParseProblem[]; unknownTags: number }): Map<string, T> | null {
    this.countProblems(path, parsed.problems);
    this.unknownByPath.set(path, parsed.unknownTags);
    this.connection.unknownTags = [...this.unknownByPath.values()].reduce((a, b) => a + b, 0);
    return parsed.entries;
  }

  /** Counts each bad entry once while it stays bad (not again on every poll). */
  private countProblems(path: string, problems: ExoParseProblem[]): void {
    const line = (p: ExoParseProblem) => `${p.section}${p.key === null ? '' : `[${p.key}]`}: ${p.message}`;
    const before = new Set((this.problems.get(path) ?? []).map(line));
    this.problems.set(path, problems);
    for (const problem of problems) if (!before.has(line(problem))) this.recordError(path, 'parse', line(problem));
  }
}
