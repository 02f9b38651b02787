/**
 * A model's residency at a glance, the same words in the tray and the Models panel:
 * "loading", "loaded · unloads in 4 min", "loaded · in use", "loaded · kept loaded",
 * "pinned", "unloaded". The cards say more (shared/residency.ts `residencyWords`).
 */
import { formatDuration } from './residency';
import { instanceLifecycle } from './instance-state';
import type { LocalInstanceSnapshot } from './snapshot';

/** `instance`: the model's local instance, or undefined when none runs it (unloaded). `now`: epoch ms. */
export function residencyGlance(instance: LocalInstanceSnapshot | undefined, now: number): string {
  if (!instance) return 'unloaded';
  const lifecycle = instanceLifecycle(instance);
  if (lifecycle === 'loading' || lifecycle === 'restarting') return 'loading';
  if (lifecycle !== 'serving') return lifecycle;
  const { residency } = instance;
  if (residency.pinned) return 'pinned';
  if (residency.idleSince === null) return 'loaded · in use';
  if (residency.unloadsAt === null) return 'loaded · kept loaded';
  return `loaded · unloads in ${formatDuration(residency.unloadsAt - now)}`;
}
