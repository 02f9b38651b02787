/**
 * The sharing check on an attached exo: which two models (both must have an instance
 * on exo), its requests through exobar's own proxy (proxy-channel.ts), and experiment
 * 4's neighbour unloaded by deleting its exo instance and placed again through exo's
 * own placement (the calls of electron/core/exo/launch/).
 */
import type { CatalogModel } from '../../../shared/catalog';
import type { ExoInstanceSnapshot } from '../../../shared/snapshot';
import type { ExobarNode } from '../node/node-types';
import { exoCall, placeRing, readCluster } from '../exo/launch/exo-cluster-api';
import { stopExoModel, waitForRunners } from '../exo/launch/exo-safe-pair';
import type { NeighbourResidency } from './idle-neighbour-experiment';
import { sleep } from './check-context';

/** What the core gives the check to run on exo. */
export interface ExoCheckHooks {
  /** The attached exo's address, or null. */
  exoUrl(): string | null;
  /** exobar's own address (`http://127.0.0.1:port`): the check's requests go through its `/v1/chat/completions`. */
  baseUrl(): string | null;
  /** Sets exobar's hold (setting `exo.hold`) for one run; the undo gives the operator's back. */
  applyHold(on: boolean): Promise<() => Promise<void>>;
}

export const exoInstances = (node: ExobarNode): ExoInstanceSnapshot[] => node.snapshot().instances.filter((i): i is ExoInstanceSnapshot => i.source === 'exo');

/** The models the attached exo has instances of, in the snapshot's order. */
export const exoModels = (node: ExobarNode): string[] => [...new Set(exoInstances(node).map((i) => i.model))];

/** Billions of parameters from a model id ("Llama-3.2-3B" → 3), for the default A (the larger prefills); 0 when unnamed. */
const paramsOf = (id: string): number => Number(/(\d+(?:\.\d+)?)B\b/i.exec(id)?.[1] ?? 0);

/** An exo model as the experiments see a model: exo knows no context length exobar could read here. */
function asCatalogModel(node: ExobarNode, id: string): CatalogModel {
  const name = exoInstances(node).find((i) => i.model === id)?.modelName ?? id;
  return { id, name, engine: 'mlx', simulated: false, memoryBytes: 0, sizeClass: 'medium' };
}

/** [A, B] on exo: the ones asked for, else the two models exo runs (the larger prefills). */
export function chooseExoModels(node: ExobarNode, asked: [string, string] | undefined): [CatalogModel, CatalogModel] {
  if (asked) return [asCatalogModel(node, asked[0]), asCatalogModel(node, asked[1])];
  const bySize = exoModels(node).sort((x, y) => paramsOf(y) - paramsOf(x));
  return [asCatalogModel(node, bySize[0]!), asCatalogModel(node, bySize.at(-1)!)];
}

/** A's exo instances deleted (`DELETE /instance/{id}`) and placed again (`GET /instance/placement`, `POST /instance`). */
export function exoResidency(url: string, model: string, node: ExobarNode): NeighbourResidency {
  return {
    how: `deleted ${model}'s exo instance through exo's API (DELETE /instance); placed it again through exo's placement (POST /instance) once measured`,
    async unload() {
      await stopExoModel(url, model);
      // Until exo's state and exobar's view agree it is gone: its memory and runner are freed then.
      for (let i = 0; i < 600; i++) {
        const cluster = await readCluster(url);
        if (![...cluster.instances.values()].some((x) => x.modelId === model) && !exoModels(node).includes(model)) return;
        await sleep(100);
      }
      throw new Error(`exo still lists an instance of ${model} 60 s after it was deleted`);
    },
    async reload() {
      const placed = await placeRing(url, model);
      if (!placed.ok) throw new Error(`experiment 4: exo cannot place ${model} again: ${placed.reason}`);
      const answer = await exoCall(url, 'POST', '/instance', { instance: placed.tagged });
      if (answer.status !== 200) throw new Error(`experiment 4: exo refused to place ${model} again: ${answer.message}`);
      await waitForRunners(url, placed.instance.instanceId, model, { readyTimeoutMs: 600_000 });
    },
  };
}
