/**
 * What exobar learns by watching exo over time, which exo's state itself does not
 * carry: when a task was first seen (its age), since when a runner has its status,
 * tasks that left the state (ended, never lost), when each node's lastSeen last moved,
 * since when an instance has been loading, since when one has had no runner on some
 * Mac (missing from exo's runner list, failed or shut down), and exobar's stable id for each instance
 * (matched by model across exo restarts). Also the bounded history of every runner
 * and task status change, for the diagnostic bundle.
 */
import type { ExoInstance, ExoRunnerStatus, ExoTask } from './parse-exo-state';
import { GONE_STATUSES } from '../../../../shared/instance-state';
import { LOADING_STATUSES } from './exo-view';

/** One status change exobar saw, for exo/state-history.jsonl. */
export interface ExoStatusChange {
  at: number;
  kind: 'runner' | 'task';
  id: string;
  instanceId: string | null;
  from: string | null;
  /** null when it left exo's state. */
  to: string | null;
}

const HISTORY_LIMIT = 2_000;

interface Seen<T> {
  value: T;
  since: number;
}

export class ExoTracker {
  readonly history: ExoStatusChange[] = [];
  private readonly tasks = new Map<string, { task: ExoTask; firstSeen: number; statusSince: number }>();
  private readonly runners = new Map<string, Seen<string>>();
  private readonly lastSeen = new Map<string, Seen<number | null>>();
  private readonly loadingSince = new Map<string, number>();
  private readonly withoutRunnerSince = new Map<string, number>();
  private readonly ended = new Map<string, number>();
  /** exo instance id → exobar id. */
  private readonly ids = new Map<string, { id: string; matchedByModel: boolean }>();
  /** Every exo instance id ever seen → exobar id (tasks may leave after their instance). */
  private readonly everIds = new Map<string, string>();
  /** exobar ids whose exo instance went away: reused for the next instance of the model. */
  private readonly freeIds = new Map<string, string[]>();
  private lastObserved: [Map<string, ExoInstance>, Map<string, ExoRunnerStatus>, Map<string, ExoTask>] | null = null;

  /** Takes in one fast reading. */
  observe(now: number, instances: Map<string, ExoInstance>, runners: Map<string, ExoRunnerStatus>, tasks: Map<string, ExoTask>): void {
    // The same maps as last time (exo sent the same bytes): nothing can have changed.
    const last = this.lastObserved;
    if (last && last[0] === instances && last[1] === runners && last[2] === tasks) return;
    this.lastObserved = [instances, runners, tasks];
    this.observeInstances(now, instances, runners);
    for (const [runnerId, status] of runners) {
      const seen = this.runners.get(runnerId);
      if (seen?.value === status.tag) continue;
      this.record(now, 'runner', runnerId, null, seen?.value ?? null, status.tag);
      this.runners.set(runnerId, { value: status.tag, since: now });
    }
    for (const [runnerId, seen] of this.runners) {
      if (runners.has(runnerId)) continue;
      this.record(now, 'runner', runnerId, null, seen.value, null);
      this.runners.delete(runnerId);
    }
    for (const [taskId, task] of tasks) {
      const seen = this.tasks.get(taskId);
      if (!seen) this.tasks.set(taskId, { task, firstSeen: now, statusSince: now });
      else if (seen.task.status !== task.status) this.tasks.set(taskId, { task, firstSeen: seen.firstSeen, statusSince: now });
      if (seen?.task.status !== task.status && task.kind === 'TextGeneration')
        this.record(now, 'task', taskId, task.instanceId, seen?.task.status ?? null, task.status);
    }
    for (const [taskId, seen] of this.tasks) {
      if (tasks.has(taskId)) continue;
      this.tasks.delete(taskId);
      if (seen.task.kind !== 'TextGeneration') continue;
      this.record(now, 'task', taskId, seen.task.instanceId, seen.task.status, null);
      const exobarId = seen.task.instanceId ? this.everIds.get(seen.task.instanceId) : undefined;
      if (exobarId) this.ended.set(exobarId, (this.ended.get(exobarId) ?? 0) + 1);
    }
  }

  /** Takes in the node sections' lastSeen values (read every 5 s). */
  observeLastSeen(now: number, lastSeen: Map<string, number | null>): void {
    for (const [nodeId, value] of lastSeen) {
      const seen = this.lastSeen.get(nodeId);
      if (!seen || seen.value !== value) this.lastSeen.set(nodeId, { value, since: now });
    }
  }

  /** Epoch ms when exobar last saw the node's lastSeen move (or first saw it). */
  lastSeenMovedAt(nodeId: string): number | null {
    return this.lastSeen.get(nodeId)?.since ?? null;
  }

  exobarId(exoInstanceId: string): { id: string; matchedByModel: boolean } | null {
    return this.ids.get(exoInstanceId) ?? null;
  }

  taskFirstSeen(taskId: string): number | null {
    return this.tasks.get(taskId)?.firstSeen ?? null;
  }

  taskStatusSince(taskId: string): number | null {
    return this.tasks.get(taskId)?.statusSince ?? null;
  }

  runnerStatusSince(runnerId: string): number | null {
    return this.runners.get(runnerId)?.since ?? null;
  }

  endedTasks(exobarId: string): number {
    return this.ended.get(exobarId) ?? 0;
  }

  /**
   * Since when the instance has had no working runner on some Mac (its runner missing
   * from exo's runner list, failed, shutting down or shut down), or null. exo can keep
   * such an instance registered, and requests to it then hang (exo #2120, #1458).
   */
  instanceWithoutRunnerSince(exoInstanceId: string): number | null {
    return this.withoutRunnerSince.get(exoInstanceId) ?? null;
  }

  /** Since when the instance's runners have been loading (none Failed), or null. */
  instanceLoadingSince(exoInstanceId: string): number | null {
    return this.loadingSince.get(exoInstanceId) ?? null;
  }

  private observeInstances(now: number, instances: Map<string, ExoInstance>, runners: Map<string, ExoRunnerStatus>): void {
    for (const [exoId, entry] of this.ids) {
      if (instances.has(exoId)) continue;
      this.ids.delete(exoId);
      this.loadingSince.delete(exoId);
      this.withoutRunnerSince.delete(exoId);
      const model = entry.id.replace(/#\d+$/, '').slice('exo:'.length);
      this.freeIds.set(model, [...(this.freeIds.get(model) ?? []), entry.id]);
    }
    for (const instance of instances.values()) {
      if (!this.ids.has(instance.instanceId)) {
        const allocated = this.allocateId(instance.modelId);
        this.ids.set(instance.instanceId, allocated);
        this.everIds.set(instance.instanceId, allocated.id);
      }
      const tags = instance.shards.map((s) => runners.get(s.runnerId)?.tag ?? 'missing');
      const loading = tags.some((t) => LOADING_STATUSES.has(t)) && !tags.includes('RunnerFailed');
      if (!loading) this.loadingSince.delete(instance.instanceId);
      else if (!this.loadingSince.has(instance.instanceId)) this.loadingSince.set(instance.instanceId, now);
      const withoutRunner = tags.some((t) => t === 'missing' || GONE_STATUSES.has(t));
      if (!withoutRunner) this.withoutRunnerSince.delete(instance.instanceId);
      else if (!this.withoutRunnerSince.has(instance.instanceId)) this.withoutRunnerSince.set(instance.instanceId, now);
    }
  }

  /** An instance of a model exobar saw before (exo restarted, ids changed) keeps its exobar id. */
  private allocateId(model: string): { id: string; matchedByModel: boolean } {
    const free = this.freeIds.get(model);
    const reused = free?.shift();
    if (reused) return { id: reused, matchedByModel: true };
    const taken = new Set([...this.ids.values()].map((e) => e.id));
    let id = `exo:${model}`;
    for (let n = 2; taken.has(id); n++) id = `exo:${model}#${n}`;
    return { id, matchedByModel: false };
  }

  private record(at: number, kind: ExoStatusChange['kind'], id: string, instanceId: string | null, from: string | null, to: string | null): void {
    this.history.push({ at, kind, id, instanceId, from, to });
    if (this.history.length > HISTORY_LIMIT) this.history.splice(0, this.history.length - HISTORY_LIMIT);
  }
}
