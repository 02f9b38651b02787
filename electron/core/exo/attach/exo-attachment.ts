/**
 * Attach mode as the core runs it: at most one exo node attached (an ExoMonitor
 * polling it), its view (section, offer, instances, warnings) the hub's `exo` section after every poll round, the
 * offer to attach to an exo found on this Mac, and attach / detach / probe for the
 * control API and the app. Attaching tests the address first and never happens by
 * itself: an exo found on 127.0.0.1:52415 is only offered.
 */
import { join } from 'node:path';
import { exoLogDir } from '../../exo-process/exo-home';
import type { ExoProbeAnswer } from '../../../../shared/api';
import type { ExoOffer, ExoSection } from '../../../../shared/exo-snapshot';
import type { Registration, SnapshotSections } from '../../app-state/snapshot-hub';
import type { ExoInstanceSnapshot, Warning } from '../../../../shared/snapshot';
import type { LostModels } from '../cluster-events/lost-models';
import type { StalledLoad } from '../load-stall/place-stalled-again';
import { ExoMonitor, isLoopbackUrl, type ExoBundleMaterial, type ExoMonitorOptions } from './exo-monitor';
import { findLocalExo, normalizeExoUrl, probeExo, type ExoProbeResult } from './exo-probe';
import { withTraffic } from './exo-traffic-view';
import { stopExoModel, type FastSynchOf } from '../launch/exo-safe-pair';
import { ExoPlacer, type ExoPlacementEvent, type ExoPlacerOptions, type OwnedPlacement } from '../launch/exo-place-on-demand';
import { createExoServing, type ExoServing } from '../proxy/exo-serving';
import type { ApiRoute } from '../../api/route-types';
import type { ProxiedRequest } from '../proxy/exo-traffic';
import type { StallThresholds } from '../stall/exo-stall-warnings';
import { defaultIdleTtl } from '../../on-demand/on-demand-settings';

/** exo's log folder on this machine, by exo's rules for its environment (exo-home.ts): exo.log and runner_log/. */
export function defaultExoLogDir(env: NodeJS.ProcessEnv = process.env): string {
  return exoLogDir(env);
}

/** What an attached exo adds to the snapshot; all empty when nothing is attached or offered. */
export interface ExoSnapshotPart {
  exo: ExoSection | null;
  exoOffer: ExoOffer | null;
  instances: ExoInstanceSnapshot[];
  warnings: Warning[];
}

/** Nothing attached, nothing offered. */
export const NO_EXO: ExoSnapshotPart = { exo: null, exoOffer: null, instances: [], warnings: [] };

export interface ExoAttachmentOptions {
  /** Where the attachment's part of the snapshot (its section `exo` and its warnings) is registered. */
  hub: SnapshotSections;
  /** Persists the attached address (`exo.url` in settings); null on detach. */
  saveUrl(url: string | null): Promise<void>;
  /** exo's log folder when exo runs on this Mac (default: where exo keeps it for `exoEnv`, exoLogDir); null never reads it. */
  exoLogDir?: string | null;
  /**
   * The environment exo runs with on this Mac: exobar's own plus `exo.env` from the
   * settings (an EXO_HOME there moves exo's log). Read at each attach. Default: exobar's own.
   */
  exoEnv?: () => NodeJS.ProcessEnv;
  /** Where to look for an exo to offer at start (default 127.0.0.1:52415); null never looks. */
  offerUrl?: string | null;
  /** The setting exo.loadStallSeconds, in ms: the least time without progress that is a stalled load. */
  loadStallFloorMs?: () => number;
  /** Polling options for the monitor (intervals, timeouts, clock). */
  monitor?: Partial<Omit<ExoMonitorOptions, 'url' | 'onUpdate' | 'exoLogPath'>>;
  now?: () => number;
  /** The hold setting (`exo.hold`, read per use so a change applies at once); on when absent. */
  holdEnabled?: () => boolean;
  /** The setting `exo.placeOnDemand` (off: a downloaded, unplaced model's request is answered 404 with how to place it). */
  placeOnDemand?: () => boolean;
  /** The default idle time to live of an instance exobar placed on demand, seconds (`onDemand.idleTtlSeconds`); null never. Default: that setting's default. */
  idleTtlSeconds?: () => number | null;
  /** Hears each placement on demand, its deletion when idle, and a refusal (the request log, the event log). */
  onPlacement?: (event: ExoPlacementEvent) => void;
  /** Placing on demand: how long to wait for runners, how often to poll and to look for idle placements (tests shorten them). */
  placer?: Partial<Pick<ExoPlacerOptions, 'readyTimeoutMs' | 'pollMs' | 'reapIntervalMs' | 'headroomBytes'>>;
  /** Longest silence from exo on a proxied request before it counts as hung (default 30 s). */
  proxyIdleTimeoutMs?: number;
  /** Stall warning thresholds (tests shorten them). */
  stallThresholds?: Partial<StallThresholds>;
  /** The routes a request for a model exo does not serve falls through to (default: exobar's OpenAI routes without a loader). */
  localRoutes?: ApiRoute[];
}

/** Proxied traffic moves with every token: the snapshot takes it in at most this often. */
const TRAFFIC_PUBLISH_MS = 100;

/** Attaching failed: nothing exo-like answers at the address, or the address is malformed. */
export class ExoAttachError extends Error {
  override name = 'ExoAttachError';
  constructor(
    readonly code: 'invalid_exo_url' | 'exo_not_found',
    message: string,
  ) {
    super(message);
  }
}

/** What the bundle's exo/ folder is made of. */
export interface ExoBundleSource extends ExoBundleMaterial {
  url: string;
  /** The requests exobar proxied to exo (in flight and the last ended ones); no prompt text. */
  requests: ProxiedRequest[];
  /** Changes the proxied requests' state machines refused (the latest 20) and how many in all: a proxy bug whenever not empty. */
  proxyRefusals: { count: number; latest: ReadonlyArray<{ id: string; from: string; to: string; reason: string; at: number }> };
  /** exo's log folder when exo runs on this Mac; null when exo is elsewhere (its logs cannot be read). */
  logDir: string | null;
}

export class ExoAttachment {
  private monitor: ExoMonitor | null = null;
  private offer: ExoOffer | null = null;
  private readonly now: () => number;
  /** Attach and detach run one after another: two at once must not leave a second monitor polling. */
  private queue: Promise<unknown> = Promise.resolve();
  /** Serving through exobar: the proxy routes, the traffic records and the hold, over whichever exo is attached. */
  readonly serving: ExoServing;
  private readonly holdEnabled: () => boolean;
  private holdWas: boolean;
  private publishTimer: NodeJS.Timeout | null = null;
  /** The part last published: what the hub reads between two publications. */
  private shown: ExoSnapshotPart = NO_EXO;
  private readonly shownSection: Registration;
  /** Places a downloaded model for a request (`exo.placeOnDemand`) and deletes what it placed once idle. */
  readonly placer: ExoPlacer;

  constructor(private readonly options: ExoAttachmentOptions) {
    this.shownSection = options.hub.section('exo', () => {
      const { warnings: _warnings, ...section } = this.shown;
      return section;
    });
    // Any registration's change re-reads every provider: publishing the section renews these too.
    options.hub.warnings('exo', () => this.shown.warnings);
    this.now = options.now ?? Date.now;
    this.holdEnabled = options.holdEnabled ?? (() => true);
    this.holdWas = this.holdEnabled();
    this.placer = new ExoPlacer({
      ...options.placer,
      url: () => this.url,
      fastSynchOf: (nodeId) => this.fastSynchOf(nodeId),
      idleTtlSeconds: options.idleTtlSeconds ?? defaultIdleTtl,
      busy: (model) => this.serving.traffic.active().some((r) => r.model === model),
      onEvent: (event) => {
        options.onPlacement?.(event);
        // The snapshot shows the new instance (or its absence) without waiting for the next poll.
        void this.monitor?.client.tick().catch(() => undefined);
      },
      now: this.now,
    });
    this.placer.start();
    this.serving = createExoServing({
      source: () => this.monitor?.client ?? null,
      holdEnabled: this.holdEnabled,
      ...(options.placeOnDemand ? { placeOnDemand: options.placeOnDemand } : {}),
      placer: this.placer,
      idleTimeoutMs: options.proxyIdleTimeoutMs,
      ...(options.localRoutes ? { localRoutes: options.localRoutes } : {}),
      unservable: (model) => this.monitor?.unservable(model) ?? null,
      modelBusyAtExo: (model) => {
        const monitor = this.monitor;
        return monitor ? monitor.ghosts.modelBusy(model, monitor.client.reading.instances?.values() ?? []) : false;
      },
    });
    this.serving.traffic.onChange(() => this.schedulePublish());
  }

  /** The proxy's routes (`/v1/...` for exo's models); register them before exobar's own. */
  get routes(): ExoServing['routes'] {
    return this.serving.routes;
  }

  /** The attached address, or null. */
  get url(): string | null {
    return this.monitor?.client.url ?? null;
  }

  /**
   * At start: attaches to the configured address without testing it (the operator
   * chose it; an exo not up yet shows as not reachable and is picked up when it
   * answers), else looks once for an exo on this Mac to offer.
   */
  async start(url: string | null): Promise<void> {
    if (url) {
      const normalized = normalizeExoUrl(url);
      if (!normalized.ok) throw new ExoAttachError('invalid_exo_url', normalized.error);
      this.begin(normalized.url);
      return;
    }
    if (this.options.offerUrl === null) return;
    const offer = await findLocalExo(this.now, this.options.offerUrl);
    // Attached meanwhile (an attach call raced the look-up): no offer.
    if (offer && !this.monitor) {
      this.offer = offer;
      this.publish();
    }
  }

  /** Tests an address: does something exo-like answer `GET /node_id` there? */
  async probe(url: string): Promise<ExoProbeAnswer> {
    return answerOf(await probeExo(url));
  }

  /** Tests the address, then attaches (replacing any attachment) and saves it. Throws ExoAttachError when nothing exo-like answers. */
  attach(url: string): Promise<ExoProbeAnswer & { ok: true }> {
    return this.serial(async () => {
      const normalized = normalizeExoUrl(url);
      if (!normalized.ok) throw new ExoAttachError('invalid_exo_url', normalized.error);
      const answer = await this.probe(normalized.url);
      if (!answer.ok) throw new ExoAttachError('exo_not_found', `nothing exo-like answers at ${answer.url}: ${answer.error}`);
      await this.stopMonitor();
      this.begin(answer.url);
      await this.options.saveUrl(answer.url);
      return answer;
    });
  }

  /**
   * The exo exobar runs on this Mac answers at `url` (its readiness check passed):
   * attaches to it unless an exo is attached already (an address the operator chose
   * wins). Not saved as `exo.url`: this exo lives only as long as exobar runs it, and
   * the monitor follows it through restarts on the same port.
   */
  attachStarted(url: string): Promise<void> {
    return this.serial(async () => {
      if (this.monitor) return;
      this.begin(url);
    });
  }

  /** Stops reading exo and forgets the address. */
  detach(): Promise<void> {
    return this.serial(async () => {
      await this.stopMonitor();
      this.publish();
      await this.options.saveUrl(null);
    });
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** exo's log folder on this Mac as of now (the settings' exo.env may have moved it), or null when never read. */
  private get logDir(): string | null {
    if (this.options.exoLogDir !== undefined) return this.options.exoLogDir;
    return defaultExoLogDir(this.options.exoEnv?.() ?? process.env);
  }

  /** exo's own log on this Mac (`<log folder>/exo.log`), for the log view; null when exobar never reads exo's log folder. */
  localLogFile(): string | null {
    const dir = this.logDir;
    return dir ? join(dir, 'exo.log') : null;
  }

  /** The material of the bundle's exo/ folder; null when nothing is attached. */
  bundleSource(): ExoBundleSource | null {
    if (!this.monitor) return null;
    const url = this.monitor.client.url;
    return {
      url,
      logDir: this.logDir !== null && isLoopbackUrl(url) ? this.logDir : null,
      requests: this.serving.traffic.records(),
      proxyRefusals: { count: this.serving.traffic.refusedTransitions, latest: this.serving.traffic.refusals },
      ...this.monitor.bundleMaterial(),
    };
  }

  /** A Mac's fast synch as attach mode knows it (exo's log on this Mac, else exo's default, assumed), for the safe launch on exo. */
  readonly fastSynchOf: FastSynchOf = (nodeId) => {
    const fast = this.monitor?.view().section.nodes.find((n) => n.nodeId === nodeId)?.fastSynch;
    // Unknown (null) counts as on: exo's default.
    return fast ? { enabled: fast.enabled ?? true, assumed: fast.source === 'assumed' || fast.enabled === null } : { enabled: true, assumed: true };
  };

  /**
   * "Stop" on an exo instance of the snapshot (`exo:<model>`): deletes that model's
   * instances on exo. False when the id is not one of the attached exo's instances
   * (a local instance: the node stops it).
   */
  async stopInstance(id: string): Promise<boolean> {
    const monitor = this.monitor;
    if (!monitor) return false;
    const instance = monitor.view().instances.find((i) => i.id === id);
    if (!instance) return false;
    await stopExoModel(monitor.client.url, instance.model);
    await monitor.client.tick().catch(() => undefined);
    return true;
  }

  /**
   * The models exo took away, with the attached address (for Place again) and a poll
   * round now (the snapshot then says what changed); null when nothing is attached.
   */
  lostModels(): { url: string; lost: LostModels; refresh: () => Promise<void> } | null {
    const monitor = this.monitor;
    if (!monitor) return null;
    return { url: monitor.client.url, lost: monitor.lost, refresh: () => monitor.client.tick().catch(() => undefined) };
  }

  /**
   * The model's load that stalled (its exo_load_stalled warning), as Place again needs it
   * (load-stall/place-stalled-again.ts); null when its load did not stall or nothing is attached.
   */
  stalledLoad(model: string): StalledLoad | null {
    const monitor = this.monitor;
    if (!monitor) return null;
    const view = monitor.view();
    const warning = view.warnings.find((w) => w.code === 'exo_load_stalled' && w.model === model);
    const shown = warning && view.instances.find((i) => warning.instanceIds.includes(i.id));
    const instance = shown && monitor.client.reading.instances?.get(shown.exo.exoInstanceId);
    if (!shown || !instance) return null;
    return { url: monitor.client.url, exobarId: shown.id, instance, nodes: monitor.client.reading.nodes ?? new Map() };
  }

  /** Stops polling (at shutdown). */
  async stop(): Promise<void> {
    this.placer.stop();
    if (this.publishTimer) clearTimeout(this.publishTimer);
    this.publishTimer = null;
    await this.stopMonitor();
  }

  private begin(url: string): void {
    this.offer = null;
    const floorMs = this.options.loadStallFloorMs;
    const monitor = new ExoMonitor({
      ...this.options.monitor,
      loadStall: () => ({ ...(floorMs ? { floorMs: floorMs() } : {}), ...this.options.monitor?.loadStall?.() }),
      url,
      now: this.options.monitor?.now ?? this.now,
      exoLogPath: this.logDir === null ? null : join(this.logDir, 'exo.log'),
      onUpdate: () => {
        if (this.monitor !== monitor) return;
        // exo's task list names the command ids of requests still prefilling.
        this.serving.traffic.reconcile();
        // A runner ready again after a cancelled request it kept generating frees its model's held requests.
        this.serving.hold.recheck();
        this.checkHoldSetting();
        this.publish();
      },
    });
    this.monitor = monitor;
    monitor.start();
    this.publish();
  }

  private async stopMonitor(): Promise<void> {
    const monitor = this.monitor;
    this.monitor = null;
    await monitor?.stop();
  }

  private publish(): void {
    if (this.publishTimer) clearTimeout(this.publishTimer);
    this.publishTimer = null;
    this.checkHoldSetting();
    this.shown = this.part();
    this.shownSection.changed();
  }

  private schedulePublish(): void {
    if (this.publishTimer) return;
    this.publishTimer = setTimeout(() => this.publish(), TRAFFIC_PUBLISH_MS);
    this.publishTimer.unref();
  }

  /** The hold was turned off (or on): held requests go to exo now rather than at the next prefill's end. */
  private checkHoldSetting(): void {
    const now = this.holdEnabled();
    if (now === this.holdWas) return;
    this.holdWas = now;
    this.serving.hold.settingChanged();
  }

  private part(): ExoSnapshotPart {
    if (!this.monitor) return { exo: null, exoOffer: this.offer, instances: [], warnings: [] };
    const view = withTraffic(this.monitor.view(), {
      traffic: this.serving.traffic,
      sharing: this.serving.sharing,
      reading: this.monitor.client.reading,
      holdEnabled: this.holdEnabled(),
      stallThresholds: this.options.stallThresholds,
    });
    return { exo: view.section, exoOffer: null, instances: withPlacedOnDemand(view.instances, this.placer.placements()), warnings: view.warnings };
  }
}

/** Marks the exo instances exobar placed on demand with their time to live and when exobar deletes them. */
function withPlacedOnDemand(instances: ExoSnapshotPart['instances'], placed: OwnedPlacement[]): ExoSnapshotPart['instances'] {
  if (placed.length === 0) return instances;
  return instances.map((instance) => {
    if (instance.source !== 'exo') return instance;
    const mine = placed.find((p) => p.instanceId === instance.exo.exoInstanceId);
    return mine ? { ...instance, exo: { ...instance.exo, placedOnDemand: { ttlSeconds: mine.ttlSeconds, unloadsAt: mine.unloadsAt } } } : instance;
  });
}

function answerOf(result: ExoProbeResult): ExoProbeAnswer {
  if (result.ok) return { ok: true, url: result.url, nodeId: result.nodeId, nodes: result.nodes };
  return { ok: false, url: result.url, error: result.error.message };
}
