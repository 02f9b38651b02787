/**
 * Attach mode in one object: the exo client polling one node, the tracker learning
 * over time, this Mac's fast synch from exo's log when exo runs here, and the view
 * (section, instances, warnings) the snapshot takes in. Also the material of the
 * diagnostic bundle's exo/ folder.
 */
import { stat } from 'node:fs/promises';
import { EXO_EVENTS_IN_SNAPSHOT, type ExoClusterEvent } from '../../../../shared/exo-cluster-events';
import { ClusterEventLog } from '../cluster-events/cluster-event-log';
import { LostModels, modelLostWarnings } from '../cluster-events/lost-models';
import { ClusterSplitWatch, type ClusterSplitOptions } from '../cluster-split/cluster-split-watch';
import { ExoClient, type ExoClientOptions, type ExoPollError } from './exo-client';
import { defaultExoLogPath, readExoLogFastSynch } from './exo-log-fast-synch';
import { ExoTracker, type ExoStatusChange } from './exo-tracker';
import { ExoDownloadProgress } from '../downloads/exo-download-progress';
import { ExoGhostTracker } from '../ghost/exo-ghost-tracker';
import { ghostGenerationWarnings, withGhosts } from '../ghost/exo-ghost-warnings';
import { DEFAULT_EXO_WARNING_OPTIONS, type ExoView, type ExoWarningOptions } from './exo-view';
import { DEFAULT_LOAD_STALL_OPTIONS, ExoLoadStallTracker, type LoadStallOptions } from '../load-stall/exo-load-stall-tracker';
import { loadStalledWarnings } from '../load-stall/exo-load-stall-warnings';
import {
  instanceWithoutRunnerWarnings,
  nodeLostWarnings,
  ringFastSynchWarnings,
  runnerFailedWarnings,
  stuckLoadingWarnings,
  unreachableWarnings,
  withoutRunnerWords,
} from './exo-warnings';
import { mapInstances, mapNodes, mapSection, type MapContext } from './map-exo-view';

export interface ExoMonitorOptions extends ExoClientOptions {
  warnings?: Partial<ExoWarningOptions>;
  /** The load-stall thresholds, read at each view (the floor is the setting exo.loadStallSeconds). */
  loadStall?: () => Partial<LoadStallOptions>;
  /**
   * exo's log on this Mac, read for its fast-synch value when exo's address is this
   * Mac (loopback). Default: where exo keeps it (exoLogPath); null never reads it.
   */
  exoLogPath?: string | null;
  /** How long a runner must run with no task before it counts as generating a cancelled request (default 1 s). */
  ghostConfirmMs?: number;
  /** The watch for Macs that split off into a cluster of their own (cluster-split/). */
  clusterSplit?: ClusterSplitOptions;
}

/** What the bundle's exo/ folder holds (state.json still to be redacted by the bundle). */
export interface ExoBundleMaterial {
  /** The last raw sections as exo sent them. */
  state: Record<string, unknown>;
  history: ExoStatusChange[];
  pollErrors: ExoPollError[];
  /** Every cluster event kept (exo/events.jsonl). */
  events: ExoClusterEvent[];
}

const LOG_CHECK_MS = 5_000;

/** True for an address on this Mac. */
export function isLoopbackUrl(url: string): boolean {
  const host = new URL(url).hostname;
  return host === '127.0.0.1' || host === 'localhost' || host === '[::1]' || host === '::1';
}

export class ExoMonitor {
  readonly client: ExoClient;
  readonly tracker = new ExoTracker();
  /** Cancelled requests exo's runners keep generating. */
  readonly ghosts: ExoGhostTracker;
  /** Runners that stopped moving while loading (exo_load_stalled). */
  readonly loadStalls: ExoLoadStallTracker;
  /** Model downloads on each Mac, with speed and time left from successive reads. */
  readonly downloads = new ExoDownloadProgress();
  private downloadsSeenAt: number | null = null;
  /** What changed in the cluster from poll to poll (exo's state does not record it). */
  readonly events = new ClusterEventLog();
  /** Models exo took away, until served again or dismissed (exo_model_lost). */
  readonly lost = new LostModels();
  /** Macs that left but whose exo still answers, in a cluster of its own (exo_cluster_split). */
  readonly split: ClusterSplitWatch;
  private nodesSeen: unknown = null;
  private nodesReadAt: number | null = null;
  private nodesAt = -Infinity;
  private readonly warningOptions: ExoWarningOptions;
  private readonly now: () => number;
  private readonly logPath: string | null;
  private logFastSynch: boolean | null = null;
  private logCheckedAt = -Infinity;
  private logSize = -1;
  private lastObservedFastAt: number | null = null;
  private logCheck: Promise<void> | null = null;

  constructor(private readonly options: ExoMonitorOptions) {
    this.now = options.now ?? Date.now;
    this.ghosts = new ExoGhostTracker(options.ghostConfirmMs);
    this.loadStalls = new ExoLoadStallTracker(() => ({ ...DEFAULT_LOAD_STALL_OPTIONS, ...options.loadStall?.() }));
    this.client = new ExoClient({ ...options, onUpdate: () => this.onPoll() });
    this.warningOptions = { ...DEFAULT_EXO_WARNING_OPTIONS, ...options.warnings };
    this.split = new ClusterSplitWatch(this.client.url, options.clusterSplit ?? {}, {
      now: this.now,
      addEvent: (change) => this.events.add(change),
      onChange: () => this.options.onUpdate?.(),
    });
    this.logPath = options.exoLogPath === null || !isLoopbackUrl(this.client.url) ? null : (options.exoLogPath ?? defaultExoLogPath());
  }

  start(): void {
    this.client.start();
    this.split.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.client.stop(), this.split.stop()]);
  }

  /** One poll round now, then the log check when due (tests drive the monitor this way). */
  async tick(): Promise<void> {
    await this.client.tick();
    await this.checkLog();
  }

  /** The exo part of the snapshot as of now. */
  view(): ExoView {
    const now = this.now();
    const connection = this.client.connection;
    const ctx: MapContext = { now, connection, reading: this.client.reading, tracker: this.tracker, attachedFastSynch: this.logFastSynch };
    const nodes = mapNodes(ctx).map((node) => ({ ...node, downloads: this.downloads.forNode(node.nodeId) }));
    const stale = !connection.connected && now - (connection.lastGoodPollAt ?? -Infinity) > this.warningOptions.staleInstancesMs;
    const instances = stale ? [] : withGhosts(mapInstances(ctx), this.ghosts, now);
    const section = mapSection(ctx, nodes, this.events.events().slice(-EXO_EVENTS_IN_SNAPSHOT));
    const warnings = [
      ...unreachableWarnings(section, instances, now),
      ...ringFastSynchWarnings(instances, nodes),
      ...runnerFailedWarnings(instances),
      // While exo does not answer, lastSeen cannot move: exo_unreachable says it all.
      ...(connection.connected ? nodeLostWarnings(nodes, instances, this.tracker, now, this.warningOptions) : []),
      ...stuckLoadingWarnings(instances, this.tracker, now, this.warningOptions),
      ...instanceWithoutRunnerWarnings(instances, this.tracker, now, this.warningOptions),
      ...loadStalledWarnings(instances, nodes, this.loadStalls, now),
      ...ghostGenerationWarnings(instances, nodes),
      ...modelLostWarnings(this.lost.list()),
      ...this.split.warnings(),
    ];
    return { section, instances, warnings };
  }

  /**
   * Why a request for `model` cannot be served by exo now: every instance of it has had
   * no working runner on some Mac for longer than the grace (exo would leave the request
   * hanging), or null when one of its instances can serve.
   */
  unservable(model: string): string | null {
    const now = this.now();
    const ctx: MapContext = {
      now,
      connection: this.client.connection,
      reading: this.client.reading,
      tracker: this.tracker,
      attachedFastSynch: this.logFastSynch,
    };
    const instances = mapInstances(ctx).filter((i) => i.model === model);
    const words = instances.map((i) => withoutRunnerWords(i, this.tracker, now, this.warningOptions));
    if (instances.length === 0 || words.some((w) => w === null)) return null;
    return words.map((w) => `${w!.title}. ${w!.fix}`).join(' ');
  }

  /** The material of the diagnostic bundle's exo/ folder. */
  bundleMaterial(): ExoBundleMaterial {
    return { state: { ...this.client.raw }, history: [...this.tracker.history], pollErrors: [...this.client.errors], events: this.events.events() };
  }

  private onPoll(): void {
    const { reading } = this.client;
    if (reading.fastAt !== null && reading.fastAt !== this.lastObservedFastAt && reading.instances && reading.runners && reading.tasks) {
      this.lastObservedFastAt = reading.fastAt;
      this.tracker.observe(reading.fastAt, reading.instances, reading.runners, reading.tasks);
      this.ghosts.observe(reading.fastAt, reading.instances, reading.runners, reading.tasks);
      this.loadStalls.observe(reading.fastAt, reading.instances, reading.runners, reading.downloads);
      if (reading.downloads && reading.downloadsAt !== this.downloadsSeenAt) {
        this.downloadsSeenAt = reading.downloadsAt;
        this.downloads.observe(reading.downloadsAt ?? reading.fastAt, reading.downloads);
      }
      if (reading.nodes) {
        // The node sections are read every 5 s; the client keeps their map while they come back unchanged.
        if (reading.nodesAt !== this.nodesReadAt) this.nodesAt = reading.fastAt;
        this.nodesReadAt = reading.nodesAt;
        if (reading.nodes !== this.nodesSeen) this.tracker.observeLastSeen(reading.fastAt, new Map([...reading.nodes].map(([id, n]) => [id, n.lastSeenAt])));
        this.nodesSeen = reading.nodes;
        const { instances, runners, nodes } = reading;
        const published = this.events.observe({
          at: reading.fastAt,
          attachedNodeId: this.client.connection.nodeId,
          nodes,
          instances,
          runners,
          nodesAt: this.nodesAt,
        });
        this.lost.observe(instances, runners, published, (model) => `exo:${model}`);
        this.split.observe(nodes.keys(), this.client.connection.nodeId, published);
      }
    }
    if (!this.logPath) this.options.onUpdate?.();
    else void this.checkLog().finally(() => this.options.onUpdate?.());
  }

  /** Re-reads exo's log at most every 5 s, and only when it changed size; one read at a time. */
  private checkLog(): Promise<void> {
    if (this.logCheck) return this.logCheck;
    const path = this.logPath;
    if (!path || this.now() - this.logCheckedAt < LOG_CHECK_MS) return Promise.resolve();
    this.logCheckedAt = this.now();
    this.logCheck = (async () => {
      const size = await stat(path).then(
        (s) => s.size,
        () => -1,
      );
      if (size === this.logSize) return;
      this.logSize = size;
      this.logFastSynch = size < 0 ? null : ((await readExoLogFastSynch(path))?.enabled ?? null);
    })().finally(() => {
      this.logCheck = null;
    });
    return this.logCheck;
  }
}
