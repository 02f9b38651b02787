/**
 * Every catalog model's fit on this node right now: each model not running is checked
 * alone beside what runs, by the same check a launch makes (weights plus KV cache at the
 * default context, against free memory and the GPU's wired limit). The machine is read
 * once for the whole list. What `GET /api/models/fit` answers and the Models panel shows.
 */
import type { CatalogModel } from '../../../shared/catalog';
import { fitVerdict, fitWords, type ModelFit } from '../../../shared/model-fit';
import type { Snapshot } from '../../../shared/snapshot';
import { readSystemMemory, type SystemMemory } from '../system-memory';
import { fitForLaunch } from './fit-for-launch';
import { runningModels, type FitChecker } from './fit-gate';
import { readGpuWiredLimit } from './gpu-wired-limit';

/** A checker that reads this machine's memory and GPU limit once, whatever the number of checks. */
export function machineReadOnce(headroomBytes?: number): FitChecker {
  let memory: Promise<SystemMemory> | null = null;
  let gpu: Promise<number | null> | null = null;
  return (input) =>
    fitForLaunch({
      ...input,
      headroomBytes,
      readMemory: () => (memory ??= readSystemMemory()),
      readGpuLimit: (total) => (gpu ??= readGpuWiredLimit(total)),
    });
}

/** Each model's fit, in catalog order; a running model is named so, unchecked. */
export async function checkModelFits(node: { models(): CatalogModel[]; snapshot(): Snapshot }, checker: FitChecker = machineReadOnce()): Promise<ModelFit[]> {
  const catalog = node.models();
  const snapshot = node.snapshot();
  const running = runningModels(snapshot, catalog);
  const runningIds = new Set(running.map((m) => m.id));
  return Promise.all(
    catalog.map(async (model): Promise<ModelFit> => {
      if (runningIds.has(model.id)) return { model: model.id, running: true, verdict: null, words: 'running', fit: null };
      const fit = await checker({ models: [model], running });
      return { model: model.id, running: false, verdict: fitVerdict(fit), words: fitWords(fit), fit };
    }),
  );
}
