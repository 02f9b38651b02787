import { clockTime } from '../../lib/exo-words';
import { useExobar } from '../../store/store-context';

/** How many of the snapshot's events the timeline shows: a glance, not the log (the bundle has them all). */
const SHOWN = 8;

/**
 * The attached cluster's timeline under the exo source: its newest events first (a Mac
 * that joined or left, a model placed or deleted and why, a runner failed), each with
 * the time exobar saw it and exobar's summary in words. Losses are marked so the eye
 * finds them; exo itself keeps no record of any of it.
 */
export function ExoClusterTimeline() {
  const events = useExobar((s) => s.snapshot.exo?.events ?? []);
  if (events.length === 0) return null;
  const newest = events.slice(-SHOWN).reverse();
  return (
    <section aria-label="cluster timeline" data-testid="exo-timeline">
      <p className="muted small">Cluster timeline{events.length > SHOWN ? ` (newest ${SHOWN} of ${events.length})` : ''}</p>
      <ol className="exo-timeline small">
        {newest.map((event) => (
          <li key={event.id} className="row" data-testid="exo-event" data-kind={event.kind}>
            <span className="tabular muted nowrap">{clockTime(event.at)}</span>
            <span className={event.loss ? 'failure' : ''}>{event.summary}</span>
          </li>
        ))}
      </ol>
    </section>
  );
}
