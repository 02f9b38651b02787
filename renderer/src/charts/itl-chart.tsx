/**
 * B's inter-token latency over its stream in one run of the sharing check's experiment
 * 2, with A's prefill shaded: the gaps grow inside the band when the neighbour's
 * prefill slows B's decode. A given width (the panel measures it) and no animation, as
 * the other charts. Long streams are thinned to the largest gap per bucket, so a spike
 * is never averaged away.
 */
import { memo } from 'react';
import { CartesianGrid, Line, LineChart, ReferenceArea, XAxis, YAxis } from 'recharts';

export interface ItlChartProps {
  itl: ReadonlyArray<{ t: number; itlMs: number }>;
  aPrefill: { start: number; end: number } | null;
  width: number;
  height?: number;
  /** The most points drawn. */
  maxPoints?: number;
}

const axisTick = { fontSize: 10, fill: 'var(--text-secondary)' };

/** At most `max` points: the largest gap of each run of consecutive ones. */
export function thinGaps(itl: ItlChartProps['itl'], max: number): Array<{ t: number; itlMs: number }> {
  if (itl.length <= max) return [...itl];
  const size = Math.ceil(itl.length / max);
  const out: Array<{ t: number; itlMs: number }> = [];
  for (let i = 0; i < itl.length; i += size) {
    let top = itl[i]!;
    for (let j = i + 1; j < Math.min(i + size, itl.length); j++) if (itl[j]!.itlMs > top.itlMs) top = itl[j]!;
    out.push(top);
  }
  return out;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms >= 10_000 ? 0 : 1)}s`;

function ItlChartImpl({ itl, aPrefill, width, height = 130, maxPoints = 600 }: ItlChartProps) {
  if (itl.length === 0) return <div className="chart-empty">No tokens measured</div>;
  const data = thinGaps(itl, maxPoints);
  return (
    <div className="chart" data-testid="itl-chart" data-points={data.length}>
      <LineChart width={width} height={height} data={data} margin={{ top: 6, right: 8, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="var(--separator)" vertical={false} />
        <XAxis dataKey="t" type="number" domain={['dataMin', 'dataMax']} tick={axisTick} tickFormatter={seconds} minTickGap={28} />
        <YAxis width={46} tick={axisTick} unit=" ms" axisLine={false} tickLine={false} />
        {aPrefill && (
          <ReferenceArea
            x1={aPrefill.start}
            x2={aPrefill.end}
            ifOverflow="extendDomain"
            fill="var(--warn)"
            fillOpacity={0.15}
            label={{ value: "A's prefill", position: 'insideTop', fontSize: 10, fill: 'var(--warn)' }}
          />
        )}
        <Line type="linear" dataKey="itlMs" name="B's ITL" stroke="var(--accent)" strokeWidth={1} dot={false} isAnimationActive={false} />
      </LineChart>
    </div>
  );
}

/** Memoised: the report does not change once shown. */
export const ItlChart = memo(ItlChartImpl);
