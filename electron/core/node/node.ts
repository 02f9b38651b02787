/**
 * The node: one per machine. Owns the instances, routes each request to its model's
 * instance, enforces the fast-synch policy before any runner spawns, and keeps the
 * snapshot, the event log and the request timelines every view reads.
 */
import { RunnerLoadStallTracker, type RunnerLoadStall } from './load-stall/runner-load-stall';
import { runnerLoadStalledWarnings } from './load-stall/runner-load-stall-warnings';
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SIM_MODELS, type CatalogModel } from '../../../shared/catalog';
import { decideFastSynch, fastSynchEnv, sharedGpuWarnings, wouldShareGpuWithFastSynch } from '../../../shared/fast-synch-policy';
import { GenerationParamsSchema, type RunnerEngineOptions } from '../../../shared/runner-protocol';
import { defaultSettings } from '../../../shared/api';
import { DEFAULT_FIT_CONTEXT_TOKENS } from '../../../shared/fit-check';
import { estimateModelMemory } from '../fit/model-memory';
import type { FastSynchOverride, Warning } from '../../../shared/snapshot';
import { countPromptTokens } from '../../../shared/token-count';
import { createDispatcher, type DispatchMode } from './dispatcher';
import { EventLog } from './event-log';
import { Instance } from './instance';
import { beyondText, featureRefusal } from './feature-gate';
import { NodeRequest } from './node-request';
import { simSpawnSpec } from './sim-spawn-spec';
import { SnapshotHub, type SnapshotSection } from '../app-state/snapshot-hub';
import {
  NodeError,
  type CreateInstanceOptions,
  type EndedRequest,
  type ExobarNode,
  type NodeOptions,
  type RequestHandle,
  type RequestTimeline,
} from './node-types';
import type { SpawnSpec } from '../supervisor/spawn-spec';
import { ratePriorFor } from '../supervisor/runner-rates';
import { RunnerRegistry } from '../supervisor/runner-registry';
import { DEFAULT_WATCHDOG_LIMITS, type WatchdogLimits } from '../supervisor/watchdog';
import { defaultIdleTtl } from '../on-demand/on-demand-settings';
import { ResidencyState } from '../on-demand/residency-state';
import { unloadRefusal } from '../on-demand/unload-refusal';
import { mlxInstanceTypeProblem } from '../mlx/mlx-instance-type';
import type { TokenGap } from '../sharing/decode-timing';
import type { BusyNeighbour } from '../sharing/sharing-stats';
import { DEFAULT_SHARING_POLICY } from '../../../shared/sharing-policy';
import { PacingController, pacingSnapshot } from '../pacing/pacing-controller';
import { pacedRunnerOf } from '../pacing/paced-instance';

export interface NodeInternals {
  /** Only the benchmark sets 'blocking-baseline' (exo's worker before its fix). */
  dispatchMode?: DispatchMode;
  /** How to start a runner for a model; defaults to the sim runner for sim models. */
  runnerCommand?: (model: CatalogModel, instanceId: string, engine: RunnerEngineOptions) => SpawnSpec | null;
  maxInFlightPerInstance?: number;
}

const TIMELINE_HISTORY = 2000;
/** The least watchdog floor a time-scaled sim runner gets, real ms. */
const SIM_MIN_FLOOR_MS = 1000;
/** How often a snapshot with live ages is renewed when no event renews it. */
const CLOCK_REFRESH_MS = 1000;

/** Creates a node. Nothing runs until an instance is created. */
export function createNode(
  options: NodeOptions,
  internals: NodeInternals = {},
): ExobarNode & { readonly eventLog: EventLog; readonly hub: SnapshotHub } {
  const dataDir = options.dataDir;
  const gpuDir = join(dataDir, 'sim-gpu');
  mkdirSync(gpuDir, { recursive: true });
  const simTimeScale = options.simTimeScale ?? 1;
  const defaultFastSynch: FastSynchOverride = options.defaultFastSynch ?? 'auto';
  const dispatcher = createDispatcher(internals.dispatchMode ?? 'nonblocking');
  const eventLog = options.eventLog ?? new EventLog();
  // Runners an exobar that crashed left behind: stopped now, by pid and start time.
  const runnerRegistry = new RunnerRegistry(dataDir);
  void runnerRegistry.stopOrphans().then(
    (results) => {
      for (const { pid, outcome } of results) if (outcome !== 'gone') eventLog.record({ kind: 'runner_orphan', data: { pid, outcome } });
    },
    () => undefined, // Best effort: a process table that cannot be read leaves nothing to stop.
  );
  const instances = new Map<string, Instance>();
  // Fair sharing of this Mac's one GPU (docs/sharing-policy.md): decides on phase changes.
  const pacing = new PacingController({
    runners: () => [...instances.values()].map(pacedRunnerOf),
    policy: options.sharingPolicy ?? (() => DEFAULT_SHARING_POLICY),
    log: (event) => eventLog.record(event),
    ...(options.pacingTuning ? { tuning: options.pacingTuning } : {}),
  });
  /** Instances until their runner is disposed: deleted ones whose runner is still stopping included. */
  const undisposed = new Set<Instance>();
  /**
   * Deleted or unloaded instances whose runner has not exited yet: every view lists them
   * as stopping (their runner's state), and the fit check counts their memory as used,
   * until the exit; then they go.
   */
  const stoppingInstances = new Map<string, Instance>();
  const requestIndex = new Map<string, { request: NodeRequest; instance: Instance }>();
  const endedTimelines: RequestTimeline[] = [];
  const endedListeners = new Set<(ended: EndedRequest) => void>();
  const loadStalls = new RunnerLoadStallTracker();
  let localStalls: RunnerLoadStall[] = [];
  const rejectedInputs: Record<string, number> = {};
  let instanceCounter = 0;
  let shuttingDown = false;
  const idleTtlSeconds = options.idleTtlSeconds ?? defaultIdleTtl;
  /** When the clock last renewed the snapshot for an idle countdown (minutes move slowly). */
  let countdownRenewedAt = 0;

  // Every part's section and warnings, local and exo alike, through one hub and its one diff into the event log.
  const ownHub = !options.hub;
  const hub = options.hub ?? new SnapshotHub({ version: options.version, record: (event) => eventLog.record(event) });
  /** The state changed: a new version, and the warnings (with their events) follow it now, read or not. */
  const changed = (): void => hub.changed();
  // Ages, time-left estimates and the token rate move with the clock, not with events: while
  // any is shown, a new version each second keeps a read at most a second behind the clock.
  // An idle countdown ("unloads in 12 min") is said in minutes: a new version each 30 s is enough.
  const clockTimer = setInterval(() => {
    const now = performance.now();
    if ([...instances.values()].some((i) => i.showsTimeDependentState)) changed();
    // A load that stops moving makes no event of its own: the clock says when it passes its threshold, and how long since.
    else if (loadStallsNow().length > 0 || localStalls.length > 0) changed();
    else if (now - countdownRenewedAt >= 30_000 && [...instances.values()].some((i) => i.residency.unloadsAt(i.load, i.ready) !== null)) {
      countdownRenewedAt = now;
      changed();
    }
  }, CLOCK_REFRESH_MS);
  clockTimer.unref();

  const runnerCommand =
    internals.runnerCommand ??
    ((model: CatalogModel, _id: string, engine: RunnerEngineOptions) =>
      model.engine === 'sim' ? simSpawnSpec(model.id, simTimeScale, gpuDir, engine) : (options.mlxSpawnSpec?.(model, engine) ?? null));
  const runnerSettings = options.runnerSettings ?? (() => defaultSettings().runner);

  /** The engine options of a new instance's runner: its own schedule or the setting's, the cache cap the fit counted. */
  async function engineOptionsFor(model: CatalogModel, create: CreateInstanceOptions): Promise<RunnerEngineOptions> {
    const settings = runnerSettings();
    const promptCacheBytes =
      create.promptCacheBytes ?? (await estimateModelMemory(model, DEFAULT_FIT_CONTEXT_TOKENS, settings.promptCacheBytes)).promptCacheBytes ?? 0;
    return { schedule: create.schedule ?? settings.schedule, prefillChunkMs: settings.prefillChunkMs, promptCacheBytes };
  }

  /**
   * The settings' limits. A sim runner's floor shrinks with its time scale, as all its
   * durations do, but not below 1 s of real time: a busy machine's scheduling pauses do not scale.
   */
  function watchdogLimitsFor(model: CatalogModel): WatchdogLimits {
    const limits = { ...DEFAULT_WATCHDOG_LIMITS, ...options.watchdog };
    if (model.engine !== 'sim') return limits;
    return { ...limits, floorMs: Math.min(limits.floorMs, Math.max(SIM_MIN_FLOOR_MS, limits.floorMs * simTimeScale)) };
  }

  /** The node's section of the snapshot; the hub reads it at most once per version. */
  function nodeSection(): SnapshotSection {
    const now = performance.now();
    return {
      instances: [
        ...[...instances.values()].map((i) => ({
          ...i.snapshot(now),
          pacing: pacingSnapshot(pacing.pacedNow(i.id), now),
          ...(pacing.waitingForBaseline(i.id) ? { pacingWaitingForBaseline: true } : {}),
        })),
        ...[...stoppingInstances.values()].map((i) => ({ ...i.snapshot(now), pacing: null })),
      ],
      rejectedInputs: { ...rejectedInputs },
    };
  }

  /** Stops an instance taken out of service, shown as stopping until its runner has exited. */
  async function disposeShown(instance: Instance, error: NodeError): Promise<void> {
    stoppingInstances.set(instance.id, instance);
    try {
      // Its requests end now; its runner's state says stopping until the process is gone.
      const disposed = instance.dispose(error);
      changed();
      await disposed;
    } finally {
      stoppingInstances.delete(instance.id);
      undisposed.delete(instance);
      changed();
    }
  }

  /** Recomputes the warnings from the state (exo's included) and records the ones raised and cleared. */
  /** This Mac's runners that stopped moving while loading, read now (runner_load_stalled). */
  function loadStallsNow(): RunnerLoadStall[] {
    const floorMs = (runnerSettings().loadStallSeconds ?? defaultSettings().runner.loadStallSeconds) * 1000;
    return loadStalls.observe(
      performance.now(),
      [...instances.values()].map((i) => ({
        instanceId: i.id,
        state: i.supervisor.runnerState,
        status: i.supervisor.runnerStatus,
        sizeBytes: i.model.memoryBytes,
        // A sim runner's floor shrinks with its time scale, as the watchdog's does.
        floorMs: i.model.engine === 'sim' ? Math.max(SIM_MIN_FLOOR_MS, floorMs * simTimeScale) : floorMs,
      })),
    );
  }

  function nodeWarnings(): Warning[] {
    const placed = [...instances.values()].map((i) => ({
      id: i.id,
      model: i.model.id,
      instanceType: i.instanceType,
      fastSynch: i.decision.enabled,
    }));
    const next = sharedGpuWarnings(placed);
    for (const instance of instances.values()) {
      if (instance.fatalError?.code === 'fast_synch_mismatch') {
        next.push({
          code: 'fast_synch_mismatch',
          instanceIds: [instance.id],
          title: `${instance.model.id} refused: its runner sees a different fast-synch value`,
          risk: instance.fatalError.message,
          fix: 'Remove whatever overrides MLX_METAL_FAST_SYNCH or EXO_FAST_SYNCH in the runner environment, then relaunch it.',
        });
      }
    }
    localStalls = loadStallsNow();
    next.push(
      ...runnerLoadStalledWarnings(
        localStalls,
        (id) => {
          const i = instances.get(id);
          return i ? { id, modelId: i.model.id, modelName: i.model.name, sizeBytes: i.model.memoryBytes, waiting: i.live.length } : null;
        },
        performance.now(),
      ),
    );
    return next;
  }

  /** The sim catalog and the models the catalog's owner adds (the MLX models found), read now: a new scan applies to the next launch. */
  function catalog(): CatalogModel[] {
    const extra = options.extraModels?.() ?? [];
    return [...SIM_MODELS, ...extra.filter((m) => !SIM_MODELS.some((sim) => sim.id === m.id))];
  }

  function findModel(id: string): CatalogModel {
    const known = catalog();
    const model = known.find((m) => m.id === id);
    if (!model) {
      throw new NodeError('model_not_found', `unknown model "${id}"; known models: ${known.map((m) => m.id).join(', ')}`, 404);
    }
    return model;
  }

  function placedExcept(excludeId?: string) {
    return [...instances.values()]
      .filter((i) => i.id !== excludeId)
      .map((i) => ({ id: i.id, model: i.model.id, instanceType: i.instanceType, fastSynch: i.decision.enabled }));
  }

  function riskError(model: string): NodeError {
    return new NodeError(
      'fast_synch_shared_gpu',
      `${model} would share the GPU with another model while fast synch is on, which can collapse throughput ` +
        'or wedge the GPU until reboot; use fast synch off, or send "acknowledgeRisk": true to go ahead',
      409,
    );
  }

  function recordEnded(request: NodeRequest, instance: Instance): void {
    requestIndex.delete(request.id);
    const timeline = timelineOf(request, instance);
    endedTimelines.push(timeline);
    if (endedTimelines.length > TIMELINE_HISTORY) endedTimelines.shift();
    if (endedListeners.size === 0) return;
    const ended: EndedRequest = {
      timeline,
      arrivedAtEpochMs: request.arrivedAtEpochMs,
      endedAtEpochMs: Date.now(),
      client: request.client,
      api: request.api,
      cancelledBy: request.outcome === 'cancelled' ? request.cancelledBy : null,
      errorCode: request.errorCode,
      stats: request.stats,
      itlGapsMs: request.decode.gapsMs(),
    };
    for (const listener of endedListeners) listener(ended);
  }

  /** The other runners on this Mac's GPU that prefilled or decoded during `gap` (all local runners share one GPU). */
  function busyNeighbours(instance: Instance, gap: TokenGap): BusyNeighbour[] {
    const busy: BusyNeighbour[] = [];
    for (const other of instances.values()) {
      if (other === instance) continue;
      const phase = other.phases.phaseDuring(gap.at - gap.gapMs, gap.at);
      if (phase !== 'idle') busy.push({ instanceId: other.id, model: other.model.id, modelName: other.model.name, phase, node: null });
    }
    return busy;
  }

  function timelineOf(request: NodeRequest, instance: Instance): RequestTimeline {
    const until = request.firstTokenAt ?? request.endedAt ?? performance.now();
    const busy = [...instances.values()].filter((other) => other !== instance && other.wasBusyDuring(request.arrivedAt, until)).map((other) => other.id);
    return request.timeline(busy);
  }

  hub.section('node', nodeSection);
  hub.warnings('node', nodeWarnings);

  const node: ExobarNode & { readonly eventLog: EventLog; readonly hub: SnapshotHub } = {
    eventLog,

    models: () => catalog(),

    submit(input, onEvent): RequestHandle {
      if (shuttingDown) throw new NodeError('node_shutdown', 'the node is shutting down', 503);
      const parsed = GenerationParamsSchema.safeParse({
        messages: input.messages,
        maxTokens: input.maxTokens,
        temperature: input.temperature ?? null,
        seed: input.seed ?? null,
        ...(input.stop && input.stop.length > 0 ? { stop: input.stop } : {}),
        ...beyondText(input),
      });
      if (!parsed.success) throw new NodeError('invalid_request', parsed.error.issues.map((i) => i.message).join('; '), 400);
      const candidates = [...instances.values()].filter((i) => i.model.id === input.model);
      if (candidates.length === 0) {
        findModel(input.model);
        throw new NodeError('model_not_found', `model "${input.model}" is not running; launch it first`, 404);
      }
      // The least loaded instance that can take work; a failed one only if nothing else is left.
      const instance = candidates.sort((a, b) => Number(!!a.fatalError) - Number(!!b.fatalError) || a.load - b.load)[0]!;
      const refusal = featureRefusal(parsed.data, instance.features, instance.model.id);
      if (refusal) throw refusal;
      const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
      const request = new NodeRequest(
        id,
        instance.id,
        instance.model.id,
        parsed.data,
        countPromptTokens(parsed.data.messages),
        input.arrivedAt ?? performance.now(),
        onEvent,
        (gap) => {
          const busy = busyNeighbours(instance, gap);
          instance.sharing.add(gap, busy);
          request.sharing.add(gap, busy);
          // The adaptive policy decides on these same gaps: is a neighbour's prefill slowing this stream?
          pacing.observeGap(
            instance.id,
            gap.gapMs,
            busy.some((b) => b.phase === 'prefilling'),
          );
        },
      );
      request.client = input.client ?? null;
      request.api = input.api ?? null;
      instance.admit(request);
      requestIndex.set(id, { request, instance });
      return { id, model: request.model, instanceId: instance.id, promptTokens: request.promptTokens, created: request.created, done: request.done };
    },

    cancel(requestId, by = 'cancel_api') {
      const entry = requestIndex.get(requestId);
      if (!entry || entry.request.ended) return false;
      entry.instance.cancel(entry.request, by);
      return true;
    },

    onRequestEnded(listener) {
      endedListeners.add(listener);
      return () => endedListeners.delete(listener);
    },

    async createInstance(create: CreateInstanceOptions) {
      if (shuttingDown) throw new NodeError('node_shutdown', 'the node is shutting down', 503);
      const model = findModel(create.model);
      // Before any check: nothing awaits between the checks and the instance's creation.
      const engine = await engineOptionsFor(model, create);
      const typeProblem = model.engine === 'mlx' ? mlxInstanceTypeProblem(create.instanceType) : null;
      if (typeProblem) throw new NodeError('invalid_request', typeProblem, 400);
      const decision = decideFastSynch(create.instanceType, create.fastSynch, defaultFastSynch, placedExcept().length > 0);
      const candidate = { id: 'new', model: model.id, instanceType: create.instanceType, fastSynch: decision.enabled };
      if (!create.acknowledgeRisk && wouldShareGpuWithFastSynch(placedExcept(), candidate)) throw riskError(model.id);
      instanceCounter += 1;
      const id = `${model.id.split('/').pop()}-${instanceCounter}`;
      const probe = runnerCommand(model, id, engine);
      if (!probe) {
        throw new NodeError(
          'model_not_found',
          `no runner available for ${model.id} (engine ${model.engine}) on this machine` +
            (model.engine === 'mlx' ? ': the MLX runtime is missing (Set up MLX runtime, or set mlxPython in settings)' : ''),
          400,
        );
      }
      const instance: Instance = new Instance(
        {
          id,
          model,
          instanceType: create.instanceType,
          override: create.fastSynch,
          decision,
          queueCapacity: options.queueCapacity ?? 64,
          maxInFlight: internals.maxInFlightPerInstance ?? 16,
          supervisor: {
            // The policy's environment wins over anything the command brings (docs/architecture.md, invariant 4).
            spawnSpec: (): SpawnSpec => {
              const spec = runnerCommand(model, id, engine)!;
              return { ...spec, env: { ...spec.env, ...fastSynchEnv(instance.decision.enabled) } };
            },
            logDir: join(dataDir, 'logs', id),
            logGeneratedText: options.logGeneratedText ?? false,
            processes: runnerRegistry,
            watchdog: watchdogLimitsFor(model),
            rates: ratePriorFor(model, simTimeScale),
            // Every other local runner with work computes on this GPU too.
            gpuSharers: () => [...instances.values()].filter((other) => other.id !== id && other.load > 0).length,
            restart: { baseDelayMs: 500, maxDelayMs: 30_000, maxRestarts: 5, ...options.restart },
            model: model.id,
            logger: options.logger,
          },
          residency: new ResidencyState(
            {
              pinned: create.pin ?? false,
              ttlSeconds: create.ttlSeconds,
              loadedOnDemand: create.onDemand ?? false,
              memoryBytes: create.memoryBytes ?? model.memoryBytes,
            },
            idleTtlSeconds,
          ),
        },
        dispatcher,
        eventLog,
        changed,
        (request) => recordEnded(request, instance),
      );
      instances.set(id, instance);
      undisposed.add(instance);
      eventLog.record({
        kind: 'instance_created',
        instanceId: id,
        data: {
          model: model.id,
          instanceType: create.instanceType,
          fastSynch: decision.enabled,
          reason: decision.reason,
          onDemand: create.onDemand ?? false,
          pinned: create.pin ?? false,
        },
      });
      pacing.add(pacedRunnerOf(instance));
      instance.start();
      changed();
      return instance.snapshot();
    },

    waitForReady(instanceId, timeoutMs = 120_000) {
      const instance = instances.get(instanceId);
      if (!instance) return Promise.reject(new NodeError('instance_not_found', `no instance "${instanceId}"`, 404));
      return instance.waitForReady(timeoutMs);
    },

    async updateInstance(instanceId, update) {
      const instance = instances.get(instanceId);
      if (!instance) throw new NodeError('instance_not_found', `no instance "${instanceId}"`, 404);
      const decision = decideFastSynch(instance.instanceType, update.fastSynch, defaultFastSynch, placedExcept(instance.id).length > 0);
      const candidate = { id: instance.id, model: instance.model.id, instanceType: instance.instanceType, fastSynch: decision.enabled };
      // Turning fast synch off only lowers the risk: only turning it on needs the acknowledgement.
      if (decision.enabled && !update.acknowledgeRisk && wouldShareGpuWithFastSynch(placedExcept(instance.id), candidate)) {
        throw riskError(instance.model.id);
      }
      instance.override = update.fastSynch;
      instance.decision = decision;
      changed();
      await instance.relaunch(update.mode);
    },

    retryInstance(instanceId) {
      const instance = instances.get(instanceId);
      if (!instance) throw new NodeError('instance_not_found', `no instance "${instanceId}"`, 404);
      instance.retry();
    },

    async deleteInstance(instanceId) {
      const instance = instances.get(instanceId);
      if (!instance) throw new NodeError('instance_not_found', `no instance "${instanceId}"`, 404);
      instances.delete(instanceId);
      pacing.remove(instanceId);
      eventLog.record({ kind: 'instance_deleted', instanceId });
      await disposeShown(instance, new NodeError('instance_deleted', `instance ${instanceId} was stopped`, 503));
    },

    async unloadInstance(instanceId, reason) {
      const instance = instances.get(instanceId);
      if (!instance) throw new NodeError('instance_not_found', `no instance "${instanceId}"`, 404);
      const refusal = unloadRefusal(instance, reason);
      if (refusal) throw refusal;
      const now = performance.now();
      instances.delete(instanceId);
      eventLog.record({
        kind: 'instance_unloaded',
        instanceId,
        data: { model: instance.model.id, reason, idleMs: Math.round(now - instance.residency.lastUsedAt), memoryBytes: instance.residency.memoryBytes },
      });
      await disposeShown(instance, new NodeError('instance_deleted', `instance ${instanceId} was unloaded`, 503));
    },

    setResidency(instanceId, update) {
      const instance = instances.get(instanceId);
      if (!instance) throw new NodeError('instance_not_found', `no instance "${instanceId}"`, 404);
      if (update.pin !== undefined) instance.residency.pinned = update.pin;
      if (update.ttlSeconds !== undefined) instance.residency.ttlOverride = update.ttlSeconds;
      // A new time to live counts from now, as a request's keep_alive does.
      instance.residency.touch();
      changed();
    },

    recordLoadRefused(model, code, reason) {
      eventLog.record({ kind: 'model_load_refused', data: { model, code, reason: reason.slice(0, 500) } });
    },

    hub,

    snapshot: () => hub.snapshot(),

    onSnapshot: (listener, throttleMs) => hub.subscribe(listener, throttleMs),

    countRejectedInput(boundary: string) {
      rejectedInputs[boundary] = (rejectedInputs[boundary] ?? 0) + 1;
      changed();
    },

    recentEvents: () => eventLog.all(),

    requestTimelines() {
      const live = [...requestIndex.values()].map(({ request, instance }) => timelineOf(request, instance));
      return [...endedTimelines, ...live];
    },

    runnerPids: () => [...undisposed].flatMap((i) => i.livePids()),

    runnerLogs(instanceId) {
      const instance = instances.get(instanceId);
      if (!instance) return null;
      return { stdout: instance.supervisor.logs.stdout.tail(), stderr: instance.supervisor.logs.stderr.tail() };
    },

    async shutdown() {
      shuttingDown = true;
      const all = [...instances.values()];
      instances.clear();
      pacing.dispose();
      await Promise.all(all.map((i) => i.dispose(new NodeError('node_shutdown', 'exobar is shutting down', 503))));
      undisposed.clear();
      clearInterval(clockTimer);
      if (ownHub) hub.close();
    },
  };
  return node;
}
