/**
 * History across restarts: one chart per model (charts/history-chart.tsx: its TTFT p50
 * and p95 per minute, per hour for 7 and 30 days, with the requests per span), a range
 * selector, and the `slower_than_usual` warning with both figures. Read from
 * `/api/history` (or IPC) while open. Collapsed by default.
 */
import { useEffect, useId, useRef, useState } from 'react';
import { HISTORY_RANGES, type HistoryAnswer, type HistoryModel, type HistoryRange } from '../../../../shared/history';
import { HistoryChart } from '../../charts/history-chart';
import { useElementWidth } from '../../lib/use-element-width';
import { useActions } from '../../store/store-context';
import { PanelToggle } from '../common/panel-toggle';

function ModelHistoryChart({ history, range }: { history: HistoryModel; range: HistoryRange }) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useElementWidth(ref, 360);
  const total = history.points.reduce((n, p) => n + p.requests, 0);
  const errors = history.points.reduce((n, p) => n + p.errors, 0);
  const restarts = history.points.reduce((n, p) => n + p.restarts, 0);
  return (
    <div className="history-model" data-testid="history-chart" data-model={history.model}>
      <h3 className="small">
        {history.model}{' '}
        <span className="muted">
          · {total} requests · {errors} errors · {restarts} restarts
        </span>
      </h3>
      {history.slowerThanUsual && (
        <p className="warning small" role="alert" data-testid="slower-than-usual">
          Slower than usual: TTFT p50 {history.slowerThanUsual.lastHourP50Ms} ms over the last hour, {history.slowerThanUsual.usualP50Ms} ms over the last 7
          days at similar load ({history.slowerThanUsual.requestsPerMinute} requests/min).
        </p>
      )}
      <div ref={ref} className="history-chart">
        {width > 0 && <HistoryChart points={history.points} hourly={range === '7d' || range === '30d'} width={width} />}
      </div>
    </div>
  );
}

export function HistoryPanel() {
  const { getHistory } = useActions();
  const [open, setOpen] = useState(false);
  const bodyId = useId();
  const [range, setRange] = useState<HistoryRange>('24h');
  const [answer, setAnswer] = useState<HistoryAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!open) return;
    let live = true;
    const load = () =>
      getHistory(range).then(
        (got) => live && (setAnswer(got), setError(null)),
        (e: unknown) => live && setError(e instanceof Error ? e.message : String(e)),
      );
    void load();
    const timer = setInterval(() => void load(), 15_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [open, range, getHistory]);

  const slower = answer?.models.filter((m) => m.slowerThanUsual).length ?? 0;
  return (
    <section className="panel history-panel" aria-label="History">
      <PanelToggle open={open} onToggle={() => setOpen((o) => !o)} bodyId={bodyId}>
        <span>History</span>
        <span className="spacer" />
        {slower > 0 && <span className="warning small">{slower} slower than usual</span>}
      </PanelToggle>
      <div id={bodyId} className="panel-body" hidden={!open}>
        <div className="history-ranges" role="group" aria-label="Range">
          {HISTORY_RANGES.map((r) => (
            <button key={r} type="button" aria-pressed={r === range} onClick={() => setRange(r)}>
              {r}
            </button>
          ))}
        </div>
        {error && (
          <p className="failure small" role="alert">
            Could not read the history: {error}
          </p>
        )}
        {answer?.problem && <p className="warning small">{answer.problem}</p>}
        {answer && answer.models.length === 0 && <p className="muted small">No requests in this range yet.</p>}
        {answer?.models.map((m) => (
          <ModelHistoryChart key={m.model} history={m} range={range} />
        ))}
        {answer && (
          <p className="muted small">
            Kept 30 days (hours after a day) · {(answer.diskBytes / 1024 / 1024).toFixed(1)} of {(answer.diskCapBytes / 1024 / 1024).toFixed(0)} MiB on disk
          </p>
        )}
      </div>
    </section>
  );
}
