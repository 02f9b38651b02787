/**
 * The fake exo's cluster: Macs, instances, runners and tasks that move through time
 * the way exo's master and workers move them, one `step()` at a time, under the
 * test's control. Rules it keeps (never kinder than exo; sources in docs/exo.md):
 *
 * - runners go Idle → Connecting → Connected → Loading (layer by layer) → Loaded →
 *   WarmingUp → Ready; the first task a Ready runner picks up becomes Running and the
 *   runner RunnerRunning; tasks admitted while it runs stay Pending while they decode;
 * - a finished TextGeneration is Complete, then deleted; worker tasks are never deleted;
 * - a cancel leaves the task Cancelled and adds a CancelTask that completes a step later;
 * - InstanceDeleted does not touch `runners`: a failed runner outlives its instance;
 * - a node that stops reporting keeps its old lastSeen; after 30 s the master drops it
 *   and deletes every instance that spans it; a restarted node has a new random id;
 * - a node whose exo stopped is gone about 12 s later (the two-node capture), and with
 *   it every instance that used it, their runners (on every Mac) and their tasks.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { modelCard, type Json } from './fixture-data';

export type FakeInstanceKind = 'MlxRingInstance' | 'MlxJacclInstance' | (string & {});

export interface FakeNodeSpec {
  name: string;
  chip?: string;
  model?: string;
  ramGb?: number;
}

export interface FakeNode {
  id: string;
  name: string;
  chip: string;
  model: string;
  ramTotal: number;
  ramAvailable: number;
  /** False once the node stopped reporting: its lastSeen stays where it was. */
  alive: boolean;
  /** Epoch ms when its exo stopped (stopNode), else absent or null. */
  stoppedAt?: number | null;
  lastSeenAt: number;
  /** Extra model cards this node lists in `downloads` (real exo lists ~123). */
  downloadCards: number;
  /**
   * The addresses its `nodeNetwork` publishes (default loopback, as the real Linux
   * capture had: exobar probes a departed Mac there, and a test must never reach past
   * this machine).
   */
  addresses?: string[];
}

export interface FakeShard {
  runnerId: string;
  nodeId: string;
  rank: number;
  startLayer: number;
  endLayer: number;
}

export interface FakeInstance {
  id: string;
  kind: FakeInstanceKind;
  modelId: string;
  card: Json;
  sharding: 'Pipeline' | 'Tensor';
  shards: FakeShard[];
  port: number;
}

export interface FakeTask {
  tag: string;
  body: Json;
}

export interface AddInstanceOptions {
  model: string;
  /** Node names, rank order. */
  nodes: string[];
  kind?: FakeInstanceKind;
  sharding?: 'Pipeline' | 'Tensor';
  /** Start with runners Ready (true) or Idle (false, the default: they load step by step). */
  ready?: boolean;
}

export interface FailRunnerOptions {
  errorMessage?: string;
  diagnostics?: unknown[];
}

const MASTER_NODE_TIMEOUT_MS = 30_000;
/** The two-node capture: studio-b and both instances that used it were gone from studio-a's state about 12 s after its exo stopped. */
export const STOPPED_NODE_REMOVAL_MS = 12_000;
const LOADING_STEPS = ['RunnerIdle', 'RunnerConnecting', 'RunnerConnected'] as const;
const GIB = 1024 ** 3;

const newNodeId = () => randomBytes(16).toString('hex');

export class FakeExoCluster {
  readonly nodes: FakeNode[] = [];
  readonly instances = new Map<string, FakeInstance>();
  /** Runner statuses, tagged exactly as exo sends them. */
  readonly runners = new Map<string, Json>();
  readonly tasks = new Map<string, FakeTask>();
  /** Index of the node whose API answers (the node exobar attaches to). */
  attachedIndex = 0;
  /** Layers a loading runner gains per step. */
  layersPerStep = 4;
  lastEventAppliedIdx = 1000;
  private readonly stuckCancels = new Set<string>();
  /** Instances whose load stopped moving where it was (exo has no load timeout: exo PR #1889). */
  private readonly stalledLoads = new Set<string>();
  private readonly toDelete = new Set<string>();
  private nextPort = 50_000;

  constructor(readonly now: () => number = Date.now) {}

  /** The node id `/node_id` answers with. */
  get nodeId(): string {
    return this.attached.id;
  }

  get attached(): FakeNode {
    const node = this.nodes[this.attachedIndex];
    if (!node) throw new Error('fake exo: no node to attach to');
    return node;
  }

  /** Adds a Mac to the cluster and returns its node id. */
  addNode(spec: FakeNodeSpec): string {
    const ramTotal = (spec.ramGb ?? 128) * GIB;
    this.nodes.push({
      id: newNodeId(),
      name: spec.name,
      chip: spec.chip ?? 'Apple M3 Ultra',
      model: spec.model ?? 'Mac Studio',
      ramTotal,
      ramAvailable: ramTotal * 0.8,
      alive: true,
      lastSeenAt: this.now(),
      downloadCards: 0,
    });
    this.event();
    return this.nodes.at(-1)!.id;
  }

  node(name: string): FakeNode {
    const node = this.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`fake exo: no node named ${name}`);
    return node;
  }

  /** Places an instance like POST /instance does, with exo's worker tasks for each runner. */
  addInstance(options: AddInstanceOptions): FakeInstance {
    const card = modelCard(options.model);
    const nLayers = Number(card.nLayers);
    const nodes = options.nodes.map((name) => this.node(name));
    const per = Math.ceil(nLayers / nodes.length);
    const shards = nodes.map((node, rank) => ({
      runnerId: randomUUID(),
      nodeId: node.id,
      rank,
      startLayer: Math.min(rank * per, nLayers),
      endLayer: Math.min((rank + 1) * per, nLayers),
    }));
    const instance: FakeInstance = {
      id: randomUUID(),
      kind: options.kind ?? 'MlxRingInstance',
      modelId: options.model,
      card,
      sharding: options.sharding ?? 'Pipeline',
      shards,
      port: this.nextPort++,
    };
    this.instances.set(instance.id, instance);
    for (const shard of shards) {
      this.runners.set(shard.runnerId, options.ready ? { RunnerReady: { prefillServerPort: null } } : { RunnerIdle: {} });
      const common = { taskStatus: 'Complete', instanceId: instance.id };
      this.addTask('CreateRunner', {
        ...common,
        boundInstance: { instance: this.instanceJson(instance), boundRunnerId: shard.runnerId, boundNodeId: shard.nodeId },
      });
      this.addTask('DownloadModel', { ...common, shardMetadata: this.shardJson(instance, shard) });
    }
    if (options.ready) for (const tag of ['ConnectToGroup', 'LoadModel', 'StartWarmup']) this.addTask(tag, { taskStatus: 'Complete', instanceId: instance.id });
    this.event();
    return instance;
  }

  /** Instances of a model, oldest first. */
  instancesOf(model: string): FakeInstance[] {
    return [...this.instances.values()].filter((i) => i.modelId === model);
  }

  /** A new TextGeneration request, Pending on the model's instance with the fewest Pending/Running tasks (exo's rule). */
  submit(model: string, prompt = 'Hello from the fake exo.'): string {
    const candidates = this.instancesOf(model);
    if (candidates.length === 0) throw new Error(`fake exo: no instance of ${model}`);
    const load = (i: FakeInstance) => this.generationTasks(i.id).filter((t) => t.body.taskStatus === 'Pending' || t.body.taskStatus === 'Running').length;
    const target = candidates.reduce((best, i) => (load(i) < load(best) ? i : best));
    return this.addTask('TextGeneration', {
      taskStatus: 'Pending',
      instanceId: target.id,
      commandId: randomUUID(),
      taskParams: textParams(model, prompt),
      errorType: null,
      errorMessage: null,
    });
  }

  /** The request's stream ended: Complete now, deleted at the next step (TaskFinished → TaskDeleted). */
  finish(taskId: string): void {
    this.setTaskStatus(taskId, 'Complete');
    this.toDelete.add(taskId);
  }

  /**
   * The request was cancelled: Cancelled, plus the worker's CancelTask. Both clear at the
   * next step, unless `stuck` (the symptom of a held cancel: it never completes).
   */
  cancel(taskId: string, options: { stuck?: boolean } = {}): string {
    const task = this.task(taskId);
    this.setTaskStatus(taskId, 'Cancelled');
    const instance = this.instances.get(String(task.body.instanceId));
    const cancelId = this.addTask('CancelTask', {
      taskStatus: 'Pending',
      instanceId: task.body.instanceId,
      cancelledTaskId: taskId,
      runnerId: instance?.shards[0]?.runnerId ?? null,
    });
    if (options.stuck) this.stuckCancels.add(cancelId);
    return cancelId;
  }

  /** One runner of the model's instance on `node` fails; its peers shut down. */
  failRunner(model: string, nodeName: string, options: FailRunnerOptions = {}): string {
    const node = this.node(nodeName);
    const instance = this.instancesOf(model).find((i) => i.shards.some((s) => s.nodeId === node.id));
    if (!instance) throw new Error(`fake exo: no instance of ${model} on ${nodeName}`);
    const dead = instance.shards.find((s) => s.nodeId === node.id)!;
    this.runners.set(dead.runnerId, {
      RunnerFailed: { errorMessage: options.errorMessage ?? 'Terminated (signal=6 (Abort trap: 6))', diagnostics: options.diagnostics ?? [] },
    });
    // The dead rank's Shutdown goes to a closed pipe and stays Pending; its peers shut down.
    this.addTask('Shutdown', { taskStatus: 'Pending', instanceId: instance.id, runnerId: dead.runnerId });
    for (const peer of instance.shards.filter((s) => s !== dead)) {
      this.runners.set(peer.runnerId, { RunnerShuttingDown: {} });
      this.addTask('Shutdown', { taskStatus: 'Running', instanceId: instance.id, runnerId: peer.runnerId });
    }
    this.event();
    return dead.runnerId;
  }

  /**
   * The runner of the model's instance on `node` vanishes from exo's runner list while the
   * instance stays registered, as exo sometimes leaves it (exo #2120, #1458): requests
   * for it are accepted and hang with no error (the worker waits for a runner that never
   * comes back).
   */
  vanishRunner(model: string, nodeName: string): string {
    const node = this.node(nodeName);
    const instance = this.instancesOf(model).find((i) => i.shards.some((s) => s.nodeId === node.id));
    if (!instance) throw new Error(`fake exo: no instance of ${model} on ${nodeName}`);
    const shard = instance.shards.find((s) => s.nodeId === node.id)!;
    this.runners.delete(shard.runnerId);
    this.event();
    return shard.runnerId;
  }

  /** DELETE /instance/{id}: Pending/Running tasks become Cancelled, then InstanceDeleted (runners left as they are). */
  deleteInstance(instanceId: string): void {
    const instance = this.instances.get(instanceId);
    if (!instance) return;
    for (const task of this.generationTasks(instanceId)) {
      if (task.body.taskStatus === 'Pending' || task.body.taskStatus === 'Running') task.body.taskStatus = 'Cancelled';
    }
    this.instances.delete(instanceId);
    for (const shard of instance.shards) {
      const status = this.runners.get(shard.runnerId);
      if (status && !('RunnerFailed' in status)) this.runners.set(shard.runnerId, { RunnerShuttingDown: {} });
    }
    this.event();
  }

  /** The node stops reporting (network gone, Mac asleep): its lastSeen stops advancing. */
  dropNode(name: string): void {
    const node = this.node(name);
    node.lastSeenAt = this.now();
    node.alive = false;
    this.event();
  }

  /**
   * The cluster splits in two: the master drops the node at once with every instance
   * that spanned it (as after its 30 s timeout), while the node's exo keeps running,
   * alone. Returns the node, for `rejoin` and for the node's own cluster.
   */
  splitOff(name: string): FakeNode {
    const node = this.node(name);
    this.removeNow(node);
    this.event();
    return node;
  }

  /** A node that split off sees this cluster again: back under the same node id. */
  rejoin(node: FakeNode): void {
    node.alive = true;
    node.stoppedAt = null;
    node.lastSeenAt = this.now();
    if (!this.nodes.includes(node)) this.nodes.push(node);
    this.event();
  }

  /** exo stops on the node: it stops reporting at once; about 12 s later the master removes it and what used it. */
  stopNode(name: string): void {
    this.dropNode(name);
    this.node(name).stoppedAt = this.now();
  }

  /**
   * exo restarts on the node: a new random node id; the master deletes every instance
   * that spanned it and the node's runners are gone. On the attached node the API's
   * replica starts over, so lastEventAppliedIdx goes back.
   */
  restartNode(name: string): string {
    const node = this.node(name);
    const oldId = node.id;
    for (const instance of [...this.instances.values()]) {
      if (instance.shards.some((s) => s.nodeId === oldId)) {
        this.deleteInstance(instance.id);
        for (const shard of instance.shards) if (shard.nodeId === oldId) this.runners.delete(shard.runnerId);
      }
    }
    node.id = newNodeId();
    node.alive = true;
    node.lastSeenAt = this.now();
    if (node === this.attached) this.lastEventAppliedIdx = 10;
    this.event();
    return node.id;
  }

  /**
   * The load of the model's instance stops where it is (connecting, at its current layer,
   * or warming up) and never moves again, as exo's runners sometimes do (exo #1731,
   * #1735, #1591) now that exo has no load timeout (exo PR #1889).
   */
  stallLoading(model: string): void {
    const instance = this.instancesOf(model)[0];
    if (!instance) throw new Error(`fake exo: no instance of ${model}`);
    this.stalledLoads.add(instance.id);
  }

  /** The stalled load moves again from where it stopped. */
  resumeLoading(model: string): void {
    for (const instance of this.instancesOf(model)) this.stalledLoads.delete(instance.id);
  }

  /** Advances the cluster `count` steps (a step is what exo does in a moment). */
  step(count = 1): void {
    for (let i = 0; i < count; i++) this.stepOnce();
  }

  /** Steps until every runner of every instance is Ready (or Running), at most `limit` steps. */
  loadAll(limit = 200): void {
    for (let i = 0; i < limit && !this.allReady(); i++) this.stepOnce();
  }

  task(taskId: string): FakeTask {
    const task = this.tasks.get(taskId);
    if (!task) throw new Error(`fake exo: no task ${taskId}`);
    return task;
  }

  /** TextGeneration tasks of an instance, oldest first. */
  generationTasks(instanceId: string): FakeTask[] {
    return [...this.tasks.values()].filter((t) => t.tag === 'TextGeneration' && t.body.instanceId === instanceId);
  }

  /** Every mutation is an event: lastEventAppliedIdx moves like exo's. */
  event(): void {
    this.lastEventAppliedIdx++;
  }

  private stepOnce(): void {
    const now = this.now();
    for (const node of this.nodes) if (node.alive) node.lastSeenAt = now;
    this.timeoutNodes(now);
    for (const id of this.toDelete) this.tasks.delete(id);
    this.toDelete.clear();
    this.settleCancels();
    for (const [runnerId, status] of this.runners) {
      if ('RunnerShuttingDown' in status) this.runners.delete(runnerId);
    }
    for (const instance of this.instances.values()) this.advanceInstance(instance);
    this.event();
  }

  private timeoutNodes(now: number): void {
    for (const node of [...this.nodes]) {
      if (node.alive) continue;
      const stopped = node.stoppedAt ?? null;
      if (stopped !== null ? now - stopped < STOPPED_NODE_REMOVAL_MS : now - node.lastSeenAt <= MASTER_NODE_TIMEOUT_MS) continue;
      this.removeNow(node);
    }
  }

  /** The master removes the node and every instance that spanned it. */
  private removeNow(node: FakeNode): void {
    for (const instance of [...this.instances.values()]) {
      if (!instance.shards.some((s) => s.nodeId === node.id)) continue;
      this.deleteInstance(instance.id);
      // As the capture shows: the instance's runners, on every Mac, and its tasks leave the state with it.
      for (const shard of instance.shards) this.runners.delete(shard.runnerId);
      for (const [id, task] of this.tasks) if (task.body.instanceId === instance.id) this.tasks.delete(id);
    }
    this.nodes.splice(this.nodes.indexOf(node), 1);
  }

  private settleCancels(): void {
    for (const [id, task] of this.tasks) {
      if (task.tag !== 'CancelTask' || task.body.taskStatus !== 'Pending' || this.stuckCancels.has(id)) continue;
      task.body.taskStatus = 'Complete';
      const cancelled = this.tasks.get(String(task.body.cancelledTaskId));
      if (cancelled?.body.taskStatus === 'Cancelled') this.tasks.delete(String(task.body.cancelledTaskId));
    }
  }

  private advanceInstance(instance: FakeInstance): void {
    if (this.stalledLoads.has(instance.id)) return;
    const statuses = instance.shards.map((s) => this.runners.get(s.runnerId) ?? {});
    if (statuses.some((s) => 'RunnerFailed' in s || 'RunnerShuttingDown' in s)) return;
    for (const shard of instance.shards) this.advanceRunner(instance, shard);
    const tasks = this.generationTasks(instance.id);
    const active = tasks.filter((t) => t.body.taskStatus === 'Pending' || t.body.taskStatus === 'Running');
    const tags = instance.shards.map((s) => tagOfStatus(this.runners.get(s.runnerId)));
    if (tags.every((t) => t === 'RunnerReady') && active.length > 0) {
      // Only the first task a Ready runner picks up is marked Running (runner.py:233-234).
      active[0]!.body.taskStatus = 'Running';
      for (const shard of instance.shards) this.runners.set(shard.runnerId, { RunnerRunning: {} });
    } else if (tags.every((t) => t === 'RunnerRunning') && active.length === 0) {
      for (const shard of instance.shards) this.runners.set(shard.runnerId, { RunnerReady: { prefillServerPort: null } });
    }
  }

  private advanceRunner(instance: FakeInstance, shard: FakeShard): void {
    const status = this.runners.get(shard.runnerId);
    const tag = tagOfStatus(status);
    const index = LOADING_STEPS.indexOf(tag as (typeof LOADING_STEPS)[number]);
    const total = shard.endLayer - shard.startLayer;
    if (index >= 0 && index < LOADING_STEPS.length - 1) this.runners.set(shard.runnerId, { [LOADING_STEPS[index + 1]!]: {} });
    else if (tag === 'RunnerConnected') {
      this.runners.set(shard.runnerId, { RunnerLoading: { layersLoaded: 0, totalLayers: total } });
      if (shard.rank === 0) this.addTask('LoadModel', { taskStatus: 'Running', instanceId: instance.id });
    } else if (tag === 'RunnerLoading') {
      const loading = status!.RunnerLoading as { layersLoaded: number; totalLayers: number };
      const loaded = Math.min(loading.layersLoaded + this.layersPerStep, loading.totalLayers);
      this.runners.set(
        shard.runnerId,
        loaded >= loading.totalLayers && loading.layersLoaded >= loading.totalLayers
          ? { RunnerLoaded: {} }
          : { RunnerLoading: { layersLoaded: loaded, totalLayers: loading.totalLayers } },
      );
    } else if (tag === 'RunnerLoaded') {
      this.runners.set(shard.runnerId, { RunnerWarmingUp: {} });
      this.completeWorkerTask(instance.id, 'LoadModel');
    } else if (tag === 'RunnerWarmingUp') {
      this.runners.set(shard.runnerId, { RunnerReady: { prefillServerPort: null } });
      if (shard.rank === 0) this.addTask('StartWarmup', { taskStatus: 'Complete', instanceId: instance.id });
    }
  }

  private completeWorkerTask(instanceId: string, tag: string): void {
    for (const task of this.tasks.values()) if (task.tag === tag && task.body.instanceId === instanceId) task.body.taskStatus = 'Complete';
  }

  private allReady(): boolean {
    for (const instance of this.instances.values()) {
      for (const shard of instance.shards) {
        const tag = tagOfStatus(this.runners.get(shard.runnerId));
        if (tag !== 'RunnerReady' && tag !== 'RunnerRunning') return false;
      }
    }
    return true;
  }

  private addTask(tag: string, body: Json): string {
    const taskId = randomUUID();
    this.tasks.set(taskId, { tag, body: { taskId, ...body } });
    this.event();
    return taskId;
  }

  private setTaskStatus(taskId: string, status: string): void {
    this.task(taskId).body.taskStatus = status;
    this.event();
  }

  /** The tagged Instance as exo serializes it (camelCase). */
  instanceJson(instance: FakeInstance): Json {
    const runnerToShard: Json = {};
    const nodeToRunner: Json = {};
    const hostsByNode: Json = {};
    for (const shard of instance.shards) {
      runnerToShard[shard.runnerId] = this.shardJson(instance, shard);
      nodeToRunner[shard.nodeId] = shard.runnerId;
      hostsByNode[shard.nodeId] = [{ ip: '0.0.0.0', port: instance.port }];
    }
    return {
      [instance.kind]: {
        instanceId: instance.id,
        shardAssignments: { modelId: instance.modelId, runnerToShard, nodeToRunner },
        hostsByNode,
        ephemeralPort: instance.port,
      },
    };
  }

  shardJson(instance: FakeInstance, shard: FakeShard): Json {
    return {
      [`${instance.sharding}ShardMetadata`]: {
        modelCard: instance.card,
        deviceRank: shard.rank,
        worldSize: instance.shards.length,
        immediateException: false,
        shouldTimeout: null,
        startLayer: shard.startLayer,
        endLayer: shard.endLayer,
        nLayers: instance.card.nLayers,
      },
    };
  }
}

function tagOfStatus(status: Json | undefined): string {
  return status ? (Object.keys(status)[0] ?? '') : '';
}

/** TextGenerationTaskParams as exo stores them (a plain BaseModel: snake_case). */
function textParams(model: string, prompt: string): Json {
  const messages = [{ role: 'user', content: prompt }];
  return {
    model,
    input: messages,
    instructions: null,
    max_output_tokens: 512,
    temperature: 0.6,
    top_p: 0.9,
    stream: true,
    tools: null,
    bench: false,
    use_prefix_cache: false,
    top_k: null,
    stop: null,
    seed: null,
    chat_template_messages: messages,
    reasoning_effort: null,
    enable_thinking: null,
    logprobs: false,
    top_logprobs: null,
    min_p: null,
    repetition_penalty: null,
    repetition_context_size: null,
    presence_penalty: null,
    frequency_penalty: null,
    images: [],
    image_hashes: {},
    prefill_endpoint: null,
  };
}
