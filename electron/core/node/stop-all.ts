/**
 * "Stop all models", once for every caller (the tray menu, the page over IPC, and
 * `DELETE /api/instances`): each local instance is deleted on its own, so one that fails
 * to stop does not keep the others running.
 */
import { localInstances } from '../../../shared/instance-state';
import type { ExobarNode } from './node-types';

export interface StopAllResult {
  /** Every instance that was asked to stop. */
  ids: string[];
  failed: Array<{ id: string; error: unknown }>;
}

/** Stops every instance whose runner this node supervises; never throws, reports failures. */
export async function stopAllInstances(node: Pick<ExobarNode, 'snapshot' | 'deleteInstance'>): Promise<StopAllResult> {
  const ids = localInstances(node.snapshot()).map((i) => i.id);
  const results = await Promise.allSettled(ids.map((id) => node.deleteInstance(id)));
  const failed = results.flatMap((r, n) => (r.status === 'rejected' ? [{ id: ids[n]!, error: r.reason as unknown }] : []));
  return { ids, failed };
}
