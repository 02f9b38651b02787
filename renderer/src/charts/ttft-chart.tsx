/**
 * The live TTFT chart: the recent samples with the p50 and p95 lines. A given width
 * and height (no ResponsiveContainer): the card measures its width once per layout
 * change (lib/use-element-width.ts), it renders in jsdom too, and nothing measures on
 * every frame. The p50/p95 lines extend the axis: the node's percentiles are over the
 * snapshot's samples (shared/stats.ts TTFT_WINDOW), and the points shown may lag them by
 * a snapshot, so a p95 above every visible point must still be drawn. The lines are named
 * in a legend under the chart (their values are in the panel's header row), not by labels inside it: a label drawn at the line sat
 * over the samples near the p95. Animation is off: at ~10 updates a second a tween would
 * never finish and would only cost frames.
 */
import { memo } from 'react';
import { CartesianGrid, Line, LineChart, ReferenceLine, XAxis, YAxis } from 'recharts';
import type { TtftSample } from '../../../shared/snapshot';

export interface TtftChartProps {
  samples: TtftSample[];
  p50Ms: number | null;
  p95Ms: number | null;
  width?: number;
  height?: number;
}

const axisTick = { fontSize: 10, fill: 'var(--text-secondary)' };

function secondsLabel(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)}s` : `${Math.round(ms)}ms`;
}

function TtftChartImpl({ samples, p50Ms, p95Ms, width = 356, height = 100 }: TtftChartProps) {
  if (samples.length === 0) {
    return (
      // Compact when empty: the popover is small, and an empty frame the chart's size says nothing.
      <div className="chart-empty" style={{ width }} data-testid="ttft-chart-empty">
        No TTFT samples yet
      </div>
    );
  }
  const data = samples.map((s, index) => ({ index, totalMs: s.totalMs }));
  return (
    <div className="chart" data-testid="ttft-chart" data-samples={samples.length}>
      <LineChart width={width} height={height} data={data} margin={{ top: 6, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="var(--separator)" vertical={false} />
        <XAxis dataKey="index" hide />
        <YAxis width={46} tick={axisTick} tickFormatter={secondsLabel} axisLine={false} tickLine={false} />
        {p50Ms !== null && (
          <ReferenceLine
            y={p50Ms}
            ifOverflow="extendDomain"
            stroke="var(--accent)"
            strokeDasharray="4 3"
          />
        )}
        {p95Ms !== null && (
          <ReferenceLine
            y={p95Ms}
            ifOverflow="extendDomain"
            stroke="var(--warn)"
            strokeDasharray="4 3"
          />
        )}
        <Line
          type="monotone"
          dataKey="totalMs"
          stroke="var(--accent)"
          strokeWidth={1.5}
          dot={samples.length < 20 ? { r: 2 } : false}
          isAnimationActive={false}
        />
      </LineChart>
      <div className="chart-legend small muted" data-testid="ttft-legend">
        <span>
          <span className="legend-line" aria-hidden="true" /> TTFT
        </span>
        {p50Ms !== null && (
          <span>
            <span className="legend-line dashed" aria-hidden="true" /> p50
          </span>
        )}
        {p95Ms !== null && (
          <span>
            <span className="legend-line dashed warn" aria-hidden="true" /> p95
          </span>
        )}
      </div>
    </div>
  );
}

/** Memoised: a new snapshot with the same samples array does not redraw the chart. */
export const TtftChart = memo(TtftChartImpl);
