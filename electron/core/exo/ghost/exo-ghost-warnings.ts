/**
 * exo_cancelled_still_running: an exo runner goes on generating a request that was
 * cancelled (exo deleted the task before its runner heard of the cancel; see
 * exo-ghost-tracker.ts). It names the model and the Mac, says how long, and what it
 * costs: the GPU is held and the model's next request waits.
 */
import type { ExoNodeSnapshot } from '../../../../shared/exo-snapshot';
import type { ExoInstanceView, ExoWarning } from '../attach/exo-view';
import type { ExoGhostTracker } from './exo-ghost-tracker';

/** The instances with each one's ghost generation (null when none), as the snapshot carries it. */
export function withGhosts(instances: ExoInstanceView[], ghosts: ExoGhostTracker, now: number): ExoInstanceView[] {
  return instances.map((instance) => {
    const ghost = ghosts.ghostOf(instance.exo.exoInstanceId);
    if (!ghost) return instance;
    return { ...instance, exo: { ...instance.exo, ghostGeneration: { since: ghost.since, ageMs: Math.max(0, now - ghost.since), nodeIds: ghost.nodeIds } } };
  });
}

/** One warning per instance whose runner still generates a cancelled request. */
export function ghostGenerationWarnings(instances: ExoInstanceView[], nodes: ExoNodeSnapshot[]): ExoWarning[] {
  const warnings: ExoWarning[] = [];
  for (const instance of instances) {
    const ghost = instance.exo.ghostGeneration;
    if (!ghost) continue;
    const macs = ghost.nodeIds.map((id) => nodes.find((n) => n.nodeId === id)?.label ?? `node ${id.slice(0, 8)}`).join(', ');
    const seconds = Math.round(ghost.ageMs / 1000);
    const others = instances.filter((i) => i !== instance && i.exo.runners.some((r) => ghost.nodeIds.includes(r.nodeId))).map((i) => i.modelName);
    warnings.push({
      code: 'exo_cancelled_still_running',
      instanceIds: [instance.id],
      title: `${instance.modelName} on ${macs} is still generating a cancelled request (${seconds} s)`,
      risk:
        `exo deleted the cancelled request before its runner heard of the cancel, so the runner decodes the rest of it for nobody (RunnerRunning with no task). ` +
        `It holds the GPU of ${macs}${others.length ? `, which ${others.join(' and ')} share` : ''}, and the next request for ${instance.modelName} waits behind it; exobar holds its own until the runner is ready again.`,
      fix:
        `Wait for the runner to be ready again (it ends when the cancelled request reaches its max_tokens). Send lower max_tokens so a cancel costs less; ` +
        `if it must stop now, delete the instance in exo and place it again.`,
    });
  }
  return warnings;
}
