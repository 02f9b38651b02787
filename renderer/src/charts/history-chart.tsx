/**
 * One model's history chart (the History panel's): TTFT p50 and p95 per minute (per hour
 * for 7 and 30 days) on the left axis, in ms or in seconds once a value reaches 1 s
 * (duration-axis.ts), and the requests per span as bars on the right axis, their failed
 * part in red when there is one. A legend names each series. Both axes size themselves to
 * their widest label (`width="auto"`) and the time axis keeps its first and last labels
 * inside the plot (`preserveStartEnd`), so no label is cut at 420 px or 1280 px. A series
 * with a single value (a model used in one minute only) is drawn as a dot: a line needs
 * two points. A given width (the panel measures it) and no animation, as the TTFT chart.
 */
import { memo } from 'react';
import { Bar, CartesianGrid, ComposedChart, Legend, Line, XAxis, YAxis, type LegendPayload } from 'recharts';
import type { HistoryPoint } from '../../../shared/history';
import { durationAxis } from './duration-axis';

export interface HistoryChartProps {
  points: HistoryPoint[];
  /** Hours (7 and 30 days) rather than minutes: the time labels and the bars' unit. */
  hourly: boolean;
  width: number;
  height?: number;
}

const P50_COLOUR = 'var(--accent)';
const P95_COLOUR = 'var(--warn)';
const axisTick = { fontSize: 10, fill: 'var(--text-secondary)' };
const legendStyle = { fontSize: 10, lineHeight: '14px' };

/** A filled dot for a series with fewer than two values, where a line would draw nothing. */
const dotWhenAlone = (values: Array<number | null>, colour: string) =>
  values.filter((v) => v != null).length < 2 ? { r: 3.5, fill: colour, stroke: colour, strokeWidth: 1, strokeDasharray: '' } : false;
/** The legend's words in the text colour: recharts paints them in the series' colour, and the bars' is too pale to read. */
const legendWords = (value: string) => <span style={{ color: 'var(--text-secondary)' }}>{value}</span>;

// The lines first, as the chart is about them; then the bars, requests before their failed part.
const LEGEND_ORDER = ['p50', 'p95', 'answered', 'errors'];
const legendOrder = (item: LegendPayload) => LEGEND_ORDER.indexOf(String(item.dataKey));

function timeLabel(hourly: boolean) {
  return (t: number): string => {
    const d = new Date(t);
    return hourly ? `${d.getMonth() + 1}/${d.getDate()} ${d.getHours()}h` : d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', hour12: false });
  };
}

function HistoryChartImpl({ points, hourly, width, height = 170 }: HistoryChartProps) {
  const axis = durationAxis(points.flatMap((p) => [p.ttftP50Ms, p.ttftP95Ms]));
  const inUnit = (ms: number | null) => (ms == null ? null : ms / axis.perUnitMs);
  const data = points.map((p) => ({ t: p.start, p50: inUnit(p.ttftP50Ms), p95: inUnit(p.ttftP95Ms), answered: p.requests - p.errors, errors: p.errors }));
  const withErrors = points.some((p) => p.errors > 0);
  return (
    <div className="chart" data-testid="history-chart-plot" data-unit={axis.unit}>
      <ComposedChart width={width} height={height} data={data} margin={{ top: 8, right: 4, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="var(--separator)" vertical={false} />
        <XAxis dataKey="t" tickFormatter={timeLabel(hourly)} tick={axisTick} minTickGap={24} interval="preserveStartEnd" />
        <YAxis yAxisId="ttft" width="auto" tick={axisTick} tickFormatter={axis.label} axisLine={false} tickLine={false} />
        <YAxis yAxisId="requests" orientation="right" width="auto" tick={axisTick} allowDecimals={false} axisLine={false} tickLine={false} />
        <Bar
          yAxisId="requests"
          dataKey="answered"
          stackId="requests"
          name={hourly ? 'requests/h' : 'requests/min'}
          fill="var(--chart-bar, #c9d6e8)"
          maxBarSize={24}
          isAnimationActive={false}
        />
        {withErrors && <Bar yAxisId="requests" dataKey="errors" stackId="requests" name="errors" fill="var(--bad)" maxBarSize={24} isAnimationActive={false} />}
        <Line
          yAxisId="ttft"
          dataKey="p50"
          name="TTFT p50"
          stroke={P50_COLOUR}
          strokeWidth={1.5}
          dot={dotWhenAlone(
            data.map((d) => d.p50),
            P50_COLOUR,
          )}
          legendType="plainline"
          isAnimationActive={false}
          connectNulls
        />
        <Line
          yAxisId="ttft"
          dataKey="p95"
          name="TTFT p95"
          stroke={P95_COLOUR}
          strokeWidth={1.5}
          strokeDasharray="4 2"
          dot={dotWhenAlone(
            data.map((d) => d.p95),
            P95_COLOUR,
          )}
          legendType="plainline"
          isAnimationActive={false}
          connectNulls
        />
        <Legend verticalAlign="bottom" iconSize={12} itemSorter={legendOrder} wrapperStyle={legendStyle} formatter={legendWords} />
      </ComposedChart>
    </div>
  );
}

/** Memoised: the panel re-reads the history every 15 s; the same points do not redraw. */
export const HistoryChart = memo(HistoryChartImpl);
