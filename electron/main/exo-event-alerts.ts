/**
 * Notifications for the exo cluster's losses that no warning carries: a Mac that left
 * the cluster (exo deletes every instance that used it; each model it took comes as
 * its own `exo_model_lost` warning, and a failed runner as `exo_runner_failed`). Each
 * event notifies once, on the snapshot that first carries it.
 */
import type { Snapshot } from '../../shared/snapshot';
import { truncate } from '../../shared/status-words';

export interface ExoEventAlert {
  key: string;
  kind: 'exo_event';
  title: string;
  body: string;
}

/** Alerts for the cluster events in `next` that `prev` did not carry. */
export function exoEventAlerts(prev: Snapshot | null, next: Snapshot): ExoEventAlert[] {
  const exo = next.exo;
  if (!exo) return [];
  const key = (e: { id: string; at: number }) => `exo-event:${exo.url}:${e.at}:${e.id}`;
  const seen = new Set((prev?.exo?.url === exo.url ? prev.exo.events : []).map(key));
  return exo.events
    .filter((e) => e.kind === 'node_left' && !seen.has(key(e)))
    .map((e) => ({
      key: key(e),
      kind: 'exo_event',
      title: `${e.nodes[0]?.label ?? 'A Mac'} left the exo cluster`,
      body: truncate(
        `${e.summary}. exo deletes every model instance that used it; exobar shows each model it took until it is placed again or dismissed.`,
        200,
      ),
    }));
}
