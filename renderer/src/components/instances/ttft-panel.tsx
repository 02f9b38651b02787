import { useRef } from 'react';
import type { TtftSample, TtftSnapshot } from '../../../../shared/snapshot';
import { TtftChart } from '../../charts/ttft-chart';
import { formatDuration } from '../../lib/format';
import { JARGON } from '../../lib/jargon';
import { useElementWidth } from '../../lib/use-element-width';
import { useExobar } from '../../store/store-context';

const EMPTY: TtftSample[] = [];
/** The chart's width in the popover's card (420 px window), before it is measured. */
const POPOVER_CHART_WIDTH = 356;

/**
 * The latest TTFT split into its parts. The split is the diagnosis: a long "wait" while
 * another model is mid-prefill points at the supervisor, a long "prefill" at this
 * model's own prompt (domain: the 15 s stall was all wait).
 */
function TtftBreakdown({ latest }: { latest: TtftSample | null }) {
  const parts = [
    // A request that waited for its model's load (on request, or a placement on exo): the load comes first.
    ...(latest?.loadMs === undefined ? [] : [{ key: 'load', label: 'model load', ms: latest.loadMs }]),
    { key: 'wait', label: 'wait', ms: latest?.waitMs ?? null },
    // Acknowledged, then held in the runner behind the same model's earlier prompts (local runners).
    ...(latest?.runnerWaitMs ? [{ key: 'runner-wait', label: 'waiting in the runner', ms: latest.runnerWaitMs }] : []),
    { key: 'prefill', label: 'prefill', ms: latest?.prefillMs ?? null },
    { key: 'first', label: 'first token', ms: latest?.firstTokenMs ?? null },
  ];
  const total = latest?.totalMs ?? 0;
  return (
    <div className="ttft-breakdown" data-testid="ttft-breakdown">
      {latest && total > 0 && (
        <div className="stack" aria-hidden="true">
          {parts.map((p) => (
            <div key={p.key} className={`stack-part part-${p.key}`} style={{ width: `${((p.ms ?? 0) / total) * 100}%` }} />
          ))}
        </div>
      )}
      <div className="row small">
        {parts.map((p) => (
          <span key={p.key} className="part-label">
            <span className={`swatch part-${p.key}`} aria-hidden="true" />
            {p.label} <span className="tabular">{formatDuration(p.ms)}</span>
          </span>
        ))}
      </div>
    </div>
  );
}

/** TTFT: the latest value, p50/p95, the latest one's parts and the live chart. */
export function TtftPanel({ instanceId, ttft }: { instanceId: string; ttft: TtftSnapshot }) {
  const samples = useExobar((s) => s.ttftHistory[instanceId] ?? EMPTY);
  // The chart fills its card: as wide as the card is (one column in the popover, a grid cell in a wide window).
  const ttftRef = useRef<HTMLDivElement>(null);
  const width = useElementWidth(ttftRef, POPOVER_CHART_WIDTH);
  return (
    <div className="ttft" ref={ttftRef}>
      <div className="row">
        <span className="label explained" title={JARGON.ttft}>
          TTFT
        </span>
        <span className="tabular" data-testid="ttft-latest">
          {formatDuration(ttft.latest?.totalMs)}
        </span>
        <span className="spacer" />
        <span className="muted small tabular">
          p50 <span data-testid="ttft-p50">{formatDuration(ttft.p50Ms)}</span> · p95 <span data-testid="ttft-p95">{formatDuration(ttft.p95Ms)}</span>
        </span>
      </div>
      <TtftBreakdown latest={ttft.latest} />
      <TtftChart samples={samples} p50Ms={ttft.p50Ms} p95Ms={ttft.p95Ms} width={width} />
    </div>
  );
}
