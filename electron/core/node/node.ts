/**
 * The node: one per machine. Owns the instances and the requests: routes each request to
 * its model's instance, enforces the fast-synch policy before any runner spawns, keeps
 * the event log and the request timelines, and registers its section of the snapshot
 * (the local instances, the inputs refused) and its warnings with the snapshot hub.
 */
import { SIM_MODELS, type CatalogModel } from '../../../shared/catalog';
import type { RunnerEngineOptions } from '../../../shared/runner-protocol';
import { DEFAULT_SHARING_POLICY } from '../../../shared/sharing-policy';
import { SnapshotHub, type SnapshotSection } from '../app-state/snapshot-hub';
import { PacingController, pacingSnapshot } from '../pacing/pacing-controller';
import { pacedRunnerOf } from './paced-instance';
import { RunnerRegistry } from '../supervisor/runner-registry';
import type { SpawnSpec } from '../supervisor/spawn-spec';
import { createDispatcher, type DispatchMode } from './dispatcher';
import { EventLog } from './event-log';
import { InstanceControl } from './instance-control';
import { InstanceSet } from './instance-set';
import { LocalWarnings } from './local-warnings';
import { NodeError, type ExobarNode, type NodeOptions } from './node-types';
import { RequestBook } from './request-book';
import { RunnerOptions } from './runner-options';
import { startSnapshotClock } from './snapshot-clock';

export interface NodeInternals {
  /** Only the benchmark sets 'blocking-baseline' (exo's worker before its fix). */
  dispatchMode?: DispatchMode;
  /** How to start a runner for a model; defaults to the sim runner for sim models. */
  runnerCommand?: (model: CatalogModel, instanceId: string, engine: RunnerEngineOptions) => SpawnSpec | null;
  maxInFlightPerInstance?: number;
}

/** The sim catalog and the models the catalog's owner adds (the MLX models found), read now: a new scan applies to the next launch. */
function catalogOf(options: NodeOptions): CatalogModel[] {
  const extra = options.extraModels?.() ?? [];
  return [...SIM_MODELS, ...extra.filter((m) => !SIM_MODELS.some((sim) => sim.id === m.id))];
}

function findModelIn(catalog: CatalogModel[], id: string, whyAbsent: NodeOptions['whyModelAbsent']): CatalogModel {
  const model = catalog.find((m) => m.id === id);
  if (model) return model;
  const why = whyAbsent?.(id);
  throw new NodeError('model_not_found', `unknown model "${id}"${why ? ` (${why})` : ''}; known models: ${catalog.map((m) => m.id).join(', ')}`, 404);
}

/** Runners an exobar that crashed left behind: stopped now, by pid and start time (best effort). */
function stopOrphans(registry: RunnerRegistry, eventLog: EventLog): void {
  void registry.stopOrphans().then(
    (results) => {
      for (const { pid, outcome } of results) if (outcome !== 'gone') eventLog.record({ kind: 'runner_orphan', data: { pid, outcome } });
    },
    () => undefined, // A process table that cannot be read leaves nothing to stop.
  );
}

/** Creates a node. Nothing runs until an instance is created. */
export function createNode(options: NodeOptions, internals: NodeInternals = {}): ExobarNode & { readonly eventLog: EventLog; readonly hub: SnapshotHub } {
  const eventLog = options.eventLog ?? new EventLog();
  const processes = new RunnerRegistry(options.dataDir);
  stopOrphans(processes, eventLog);
  const runners = new RunnerOptions(options, internals.runnerCommand);
  const instances = new InstanceSet();
  // Fair sharing of this Mac's one GPU (docs/sharing-policy.md): decides on phase changes.
  const pacing = new PacingController({
    runners: () => instances.all().map(pacedRunnerOf),
    policy: options.sharingPolicy ?? (() => DEFAULT_SHARING_POLICY),
    log: (event) => eventLog.record(event),
    ...(options.pacingTuning ? { tuning: options.pacingTuning } : {}),
  });
  const rejectedInputs: Record<string, number> = {};
  let shuttingDown = false;
  // Every part's section and warnings, local and exo alike, through one hub and its one diff into the event log.
  const ownHub = !options.hub;
  const hub = options.hub ?? new SnapshotHub({ version: options.version, record: (event) => eventLog.record(event) });
  /** The state changed: a new version, and the warnings (with their events) follow it now, read or not. */
  const changed = (): void => hub.changed();
  const findModel = (id: string) => findModelIn(catalogOf(options), id, options.whyModelAbsent);
  const requests = new RequestBook({ instances, pacing, findModel });
  const control = new InstanceControl({
    options,
    maxInFlightPerInstance: internals.maxInFlightPerInstance ?? 16,
    runners,
    instances,
    requests,
    pacing,
    eventLog,
    dispatcher: createDispatcher(internals.dispatchMode ?? 'nonblocking'),
    processes,
    findModel,
    changed,
    shuttingDown: () => shuttingDown,
  });
  const warnings = new LocalWarnings(instances, runners);
  const stopClock = startSnapshotClock({ instances: () => instances.all(), stalled: () => warnings.stalled(), changed });

  /** The node's section of the snapshot; the hub reads it at most once per version. */
  const section = (): SnapshotSection => {
    const now = performance.now();
    return {
      instances: [
        ...instances.all().map((i) => ({
          ...i.snapshot(now),
          pacing: pacingSnapshot(pacing.pacedNow(i.id), now),
          ...(pacing.waitingForBaseline(i.id) ? { pacingWaitingForBaseline: true } : {}),
        })),
        ...instances.stoppingNow().map((i) => ({ ...i.snapshot(now), pacing: null })),
      ],
      rejectedInputs: { ...rejectedInputs },
    };
  };
  hub.section('node', section);
  hub.warnings('node', () => warnings.now());

  return {
    eventLog,
    hub,
    models: () => catalogOf(options),
    submit(input, onEvent) {
      if (shuttingDown) throw new NodeError('node_shutdown', 'the node is shutting down', 503);
      return requests.submit(input, onEvent);
    },
    cancel: (requestId, by = 'cancel_api') => requests.cancel(requestId, by),
    onRequestEnded: (listener) => requests.onEnded(listener),
    createInstance: (create) => control.create(create),
    waitForReady(instanceId, timeoutMs = 120_000) {
      const instance = instances.get(instanceId);
      if (!instance) return Promise.reject(new NodeError('instance_not_found', `no instance "${instanceId}"`, 404));
      return instance.waitForReady(timeoutMs);
    },
    updateInstance: (instanceId, update) => control.update(instanceId, update),
    retryInstance: (instanceId) => control.retry(instanceId),
    deleteInstance: (instanceId) => control.delete(instanceId),
    unloadInstance: (instanceId, reason) => control.unload(instanceId, reason),
    setResidency: (instanceId, update) => control.setResidency(instanceId, update),
    recordLoadRefused(model, code, reason) {
      eventLog.record({ kind: 'model_load_refused', data: { model, code, reason: reason.slice(0, 500) } });
    },
    snapshot: () => hub.snapshot(),
    onSnapshot: (listener, throttleMs) => hub.subscribe(listener, throttleMs),
    countRejectedInput(boundary) {
      rejectedInputs[boundary] = (rejectedInputs[boundary] ?? 0) + 1;
      changed();
    },
    recentEvents: () => eventLog.all(),
    requestTimelines: () => requests.timelines(),
    runnerPids: () => instances.livePids(),
    runnerLogs(instanceId) {
      const instance = instances.get(instanceId);
      if (!instance) return null;
      return { stdout: instance.supervisor.logs.stdout.tail(), stderr: instance.supervisor.logs.stderr.tail() };
    },
    async shutdown() {
      shuttingDown = true;
      const all = instances.takeOutAll();
      pacing.dispose();
      await Promise.all(all.map((i) => i.dispose(new NodeError('node_shutdown', 'exobar is shutting down', 503))));
      instances.forgetDisposed();
      stopClock();
      if (ownHub) hub.close();
    },
  };
}
