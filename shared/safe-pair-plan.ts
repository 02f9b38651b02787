/**
 * The safe pair: two models (a small and a medium one) on one Mac, both as ring
 * instances with fast synch off. Pure planning, shared by the control API
 * (GET /api/launch/safe-pair), the launcher and the renderer's preview.
 *
 * Why ring and off: every single-node instance is a ring instance, and two ring
 * instances on one GPU with MLX_METAL_FAST_SYNCH=1 can spin forever on the GPU wait
 * (throughput collapse, or a GPU wedged until reboot); exo's fix is fast synch off
 * for ring instances (docs/domain.md, "Instance types and the fast-synch policy").
 */
import { defaultSettings, type SafePairPlan, type SafePairPlanEntry, type Settings } from './api';
import type { CatalogModel } from './catalog';
import type { InstanceLifecycle } from './instance-state';
import type { InstanceType } from './instance-vocabulary';
import { decideFastSynch, sharedGpuWarnings, type PlacedInstance } from './fast-synch-policy';
import { fitSentence } from './memory-words';

const GiB = 1024 ** 3;

/**
 * Memory kept free beyond what the two models need. A fixed 2 GiB: the OS's free
 * figure already excludes what other apps use, and this leaves room for the
 * runners' own process overhead and for macOS not to start compressing or swapping
 * the moment the weights are loaded. Callers with better knowledge pass `headroomBytes`.
 */
export const DEFAULT_HEADROOM_BYTES = 2 * GiB;

/** How the planner's own memory blocker begins (the fit check replaces it where it runs). */
export const MEMORY_BLOCKER = 'Not enough memory';

/** An instance already on the node, as the plan needs to know it. */
export interface RunningInstanceInfo {
  id: string;
  model: string;
  instanceType: InstanceType;
  /** The fast-synch value the instance's runner has (decided by the policy). */
  fastSynch: boolean;
  /** Why, as the snapshot says it; used as the plan entry's reason when the instance is reused. */
  fastSynchReason?: string;
  /** Its lifecycle state (shared/instance-state.ts); the plan entry says it, so a loading model is not shown as serving. */
  state?: InstanceLifecycle;
}

export interface SafePairPlanInput {
  catalog: readonly CatalogModel[];
  settings: Settings;
  running: readonly RunningInstanceInfo[];
  /** Free memory reported by the OS (electron/core/system-memory.ts). */
  freeMemoryBytes: number;
  /** Defaults to {@link DEFAULT_HEADROOM_BYTES}. */
  headroomBytes?: number;
}

/**
 * The two model ids the safe pair launches. A model set in settings wins. While the
 * settings still hold their built-in default (the sim models), the catalog's small and
 * medium model are used instead, preferring real (non-simulated) MLX models when the
 * catalog has them in that size class, so a Mac with local MLX models launches those.
 */
export function pickSafePairModels(catalog: readonly CatalogModel[], settings: Settings): { small: string; medium: string } {
  const builtIn = defaultSettings().safePair;
  return {
    small: pickForClass(catalog, 'small', settings.safePair.small, builtIn.small),
    medium: pickForClass(catalog, 'medium', settings.safePair.medium, builtIn.medium),
  };
}

function pickForClass(catalog: readonly CatalogModel[], sizeClass: 'small' | 'medium', configured: string, builtIn: string): string {
  if (configured !== builtIn) return configured;
  const inClass = catalog.filter((m) => m.sizeClass === sizeClass);
  const real = inClass.find((m) => m.engine === 'mlx' && !m.simulated);
  if (real) return real.id;
  if (inClass.some((m) => m.id === configured)) return configured;
  return inClass[0]?.id ?? configured;
}

/**
 * Plans the safe pair without doing anything: which models, as which instance type,
 * with which fast-synch value and why, the memory needed against the memory free
 * (after headroom), and every reason the plan cannot run, in words.
 */
export function planSafePair(input: SafePairPlanInput): SafePairPlan {
  const { catalog, settings, running } = input;
  const headroomBytes = input.headroomBytes ?? DEFAULT_HEADROOM_BYTES;
  const freeBytes = Math.max(0, input.freeMemoryBytes);
  const blockers: string[] = [];
  const picked = pickSafePairModels(catalog, settings);

  if (picked.small === picked.medium) {
    blockers.push(`The safe pair needs two different models, but both are "${picked.small}": change safePair in settings.`);
  }

  const models: SafePairPlanEntry[] = [];
  const toStart: PlacedInstance[] = [];
  for (const [slot, id] of [
    ['small', picked.small],
    ['medium', picked.medium],
  ] as const) {
    if (slot === 'medium' && id === picked.small) continue;
    const model = catalog.find((m) => m.id === id);
    if (!model) {
      blockers.push(`Unknown model "${id}" (safePair.${slot}): it is not in the catalog.`);
      continue;
    }
    const sameModel = running.filter((r) => r.model === id);
    const reused = sameModel.find((r) => r.instanceType === 'ring');
    if (!reused && sameModel.length > 0) {
      blockers.push(`${id} is already running as a JACCL instance; the safe pair runs it as a ring instance. Stop it first.`);
    }
    if (reused) {
      const reason = reused.fastSynchReason ?? `already running with fast synch ${reused.fastSynch ? 'on' : 'off'}`;
      models.push(entry(model, reused.fastSynch, reason, reused.state ?? 'serving'));
      continue;
    }
    // 'auto': the ring rule decides (off), unless the settings' global default forces it.
    const decision = decideFastSynch('ring', 'auto', settings.defaultFastSynch);
    models.push(entry(model, decision.enabled, decision.reason, null));
    toStart.push({ id: `safe-pair:${slot}`, model: id, instanceType: 'ring', fastSynch: decision.enabled });
  }

  const [risk] = sharedGpuWarnings([...running, ...toStart]);
  if (risk) {
    const cause =
      settings.defaultFastSynch === 'on' && toStart.some((i) => i.fastSynch)
        ? ' The settings default forces fast synch on; set it to "auto" so ring instances run with it off.'
        : ' Relaunch the instances that have fast synch on with it off first.';
    blockers.push(`${risk.title}. ${risk.risk}${cause}`);
  }

  const requiredBytes = models.filter((m) => !m.alreadyRunning).reduce((sum, m) => sum + m.memoryBytes, 0);
  const availableBytes = Math.max(0, freeBytes - headroomBytes);
  if (requiredBytes > availableBytes) {
    blockers.push(`${MEMORY_BLOCKER}: ${fitSentence({ neededBytes: requiredBytes, freeBytes, headroomBytes })}.`);
  }

  return { models, memory: { requiredBytes, freeBytes, headroomBytes }, blockers, canRun: blockers.length === 0 };
}

/** A plan entry; `state` is the reused instance's lifecycle state, null for a new instance. */
function entry(model: CatalogModel, fastSynch: boolean, fastSynchReason: string, state: InstanceLifecycle | null): SafePairPlanEntry {
  return {
    model: model.id,
    modelName: model.name,
    engine: model.engine,
    simulated: model.simulated,
    instanceType: 'ring',
    fastSynch,
    fastSynchReason,
    memoryBytes: model.memoryBytes,
    alreadyRunning: state !== null,
    state,
  };
}
