/**
 * The models' loads and unloads of the request log (`events` of `/api/requests`),
 * newest first, in the Requests view: a load on request and how long it took, an idle
 * unload, an eviction, a placement on exo and its deletion, a refused load and why.
 */
import { formatClock } from '../../../../shared/time-words';
import type { ModelEventRecord } from '../../../../shared/request-record';

const EVENT_WORDS: Record<string, string> = { load: 'loaded', unload: 'unloaded', load_refused: 'load refused' };
const seconds = (v: number) => (v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`);

/** The last loads and unloads, of `model` when one is chosen; nothing when there are none. */
export function ModelEventsList({ events, model, limit = 20 }: { events: ModelEventRecord[]; model: string; limit?: number }) {
  const shown = events.filter((e) => !model || e.model === model).slice(0, limit);
  if (shown.length === 0) return null;
  return (
    <div className="model-events" data-testid="model-events">
      <h3 className="small">Loads and unloads</h3>
      <ul className="small">
        {shown.map((e) => (
          <li key={`${e.at}-${e.model}-${e.event}-${e.instance ?? ''}`} className={`model-event ${e.event}`} data-testid="model-event">
            <span className="muted">{formatClock(e.at)}</span> {e.model}{' '}
            <strong>{EVENT_WORDS[e.event] ?? e.event}</strong>
            {e.durationMs == null ? '' : ` in ${seconds(e.durationMs)}`}
            {e.reason ? ` · ${e.reason}` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
