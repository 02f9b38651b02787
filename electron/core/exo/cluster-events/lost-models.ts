/**
 * Models exo took away: a model whose instance was deleted not through exobar (exo
 * deleted it after a Mac it used left or restarted, or someone else did) stays listed
 * until the operator deals with it: an instance of it is served again (placed again
 * through exobar or otherwise), or the operator dismisses it. Each one is an
 * `exo_model_lost` warning that says what, where, when and why, and how to get it back.
 */
import type { ExoClusterEvent, ExoEventCause, ExoEventNode } from '../../../../shared/exo-cluster-events';
import type { InstanceType } from '../../../../shared/instance-vocabulary';
import { SERVING_STATUSES, type ExoWarning } from '../attach/exo-view';
import type { ExoInstance, ExoRunnerStatus } from '../attach/parse-exo-state';
import { clockTime } from './event-words';

/** What Place again asks exo for: the lost instance's own placement. */
export interface LostPlacement {
  /** exo's instance tag (MlxRingInstance, MlxJacclInstance). */
  kind: string;
  instanceType: InstanceType | null;
  sharding: 'Pipeline' | 'Tensor' | null;
  /** How many Macs it spanned: exo's min_nodes. */
  nodeCount: number;
}

export interface LostModel {
  model: string;
  /** exobar's id of the model's instance, as the warning names it. */
  exobarId: string;
  /** exo's id of the instance that went away. */
  exoInstanceId: string;
  nodes: ExoEventNode[];
  /** When exobar saw it go. */
  at: number;
  cause: ExoEventCause;
  /** Why, in a few words: "studio-b left at 15:26". */
  why: string;
  /** The Macs whose leaving or restart took it (labels). */
  causeNodes: string[];
  placement: LostPlacement;
  /** Set once Place again created an instance: it is loading. */
  placedAgainAt: number | null;
}

const KEPT_INSTANCES = 200;

/** The title's tail while a model placed again loads. */
export const PLACED_AGAIN = ' (placed again, loading)';

export class LostModels {
  private readonly lost = new Map<string, LostModel>();
  /** Instances as last seen, so a deleted one's placement is still known. */
  private readonly seen = new Map<string, ExoInstance>();

  /** Takes in one reading and the events it published: new losses are listed; a model served again is cleared. */
  observe(instances: Map<string, ExoInstance>, runners: Map<string, ExoRunnerStatus>, events: ExoClusterEvent[], exobarIdOf: (model: string) => string): void {
    for (const [id, instance] of instances) {
      this.seen.delete(id);
      this.seen.set(id, instance);
    }
    while (this.seen.size > KEPT_INSTANCES) this.seen.delete(this.seen.keys().next().value!);
    for (const event of events) {
      if (event.kind !== 'instance_deleted' || event.cause === 'exobar' || event.cause === null || !event.model || !event.instanceId) continue;
      const instance = this.seen.get(event.instanceId);
      this.lost.set(event.model, {
        model: event.model,
        exobarId: exobarIdOf(event.model),
        exoInstanceId: event.instanceId,
        nodes: event.nodes,
        at: event.at,
        cause: event.cause,
        why: whyWords(event),
        causeNodes: event.causeNodes,
        placement: {
          kind: instance?.kind ?? 'MlxRingInstance',
          instanceType: instance?.instanceType ?? 'ring',
          sharding: instance?.sharding ?? 'Pipeline',
          nodeCount: Math.max(1, event.nodes.length),
        },
        placedAgainAt: null,
      });
    }
    for (const model of this.lost.keys()) {
      const served = [...instances.values()].some(
        (i) => i.modelId === model && i.shards.length > 0 && i.shards.every((s) => SERVING_STATUSES.has(runners.get(s.runnerId)?.tag ?? '')),
      );
      if (served) this.lost.delete(model);
    }
  }

  get(model: string): LostModel | null {
    return this.lost.get(model) ?? null;
  }

  list(): LostModel[] {
    return [...this.lost.values()].sort((a, b) => a.at - b.at);
  }

  /** The operator dismissed it; false when the model was not listed. */
  dismiss(model: string): boolean {
    return this.lost.delete(model);
  }

  /** Place again created an instance: the warning says it is loading until it is served. */
  placedAgain(model: string, at: number): void {
    const entry = this.lost.get(model);
    if (entry) entry.placedAgainAt = at;
  }
}

function whyWords(event: ExoClusterEvent): string {
  const when = clockTime(event.at);
  if (event.cause === 'node_left') return `${event.causeNodes.join(' and ')} left at ${when}`;
  if (event.cause === 'exo_restarted') return `exo restarted on ${event.causeNodes.join(' and ')} at ${when}`;
  return `deleted at ${when}, not through exobar`;
}

const list = (words: string[]) => (words.length <= 1 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`);

/** exo_model_lost, one per lost model. */
export function modelLostWarnings(lost: LostModel[]): ExoWarning[] {
  return lost.map((l) => {
    const name = l.model.split('/').pop() ?? l.model;
    const on = list(l.nodes.map((n) => n.label));
    const how = `${l.placement.instanceType === 'jaccl' ? 'JACCL' : 'ring'}, ${l.placement.sharding ?? 'Pipeline'}, ${l.placement.nodeCount === 1 ? '1 Mac' : `${l.placement.nodeCount} Macs`}`;
    const back = l.causeNodes.length > 0 ? `Once exo runs again on ${list(l.causeNodes)} (or other Macs have room for it), ` : '';
    return {
      code: 'exo_model_lost',
      instanceIds: [l.exobarId],
      model: l.model,
      // The tray's glance reads the reason after "was lost: " (electron/main/exo-lost-glance.ts).
      title: `${name} was lost: ${l.why}${l.placedAgainAt !== null ? PLACED_AGAIN : ''}`,
      risk:
        `exo deleted its instance, which ran on ${on}, at ${clockTime(l.at)} (${l.why}); exo keeps no record of it. ` +
        `Requests for ${l.model} are refused (404 "No instance found") until it is placed again.`,
      fix: `${back}Place again: it asks exo for the same placement (${how}) with the fast-synch and memory checks; or dismiss this if the model is not needed.`,
    };
  });
}
