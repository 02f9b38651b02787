/**
 * The history chart in jsdom: a model with one minute of data still draws its p50 and p95
 * (as dots: a line needs two points), the legend names every series drawn, the TTFT axis
 * is in seconds above 1 s.
 */
import { cleanup, render } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import type { HistoryPoint } from '../../../shared/history';
import { HistoryChart } from './history-chart';

afterEach(cleanup);

const MINUTE = 60_000;
const T0 = Date.UTC(2026, 11, 3, 12, 0, 0);

function point(minute: number, p50: number | null, p95: number | null, requests = 3, errors = 0): HistoryPoint {
  return {
    start: T0 + minute * MINUTE,
    spanMs: MINUTE,
    requests,
    errors,
    ttftP50Ms: p50,
    ttftP95Ms: p95,
    decodeTokensPerSecondP50: 40,
    queueMax: 1,
    restarts: 0,
  };
}

const legendWords = (container: HTMLElement) => [...container.querySelectorAll('.recharts-legend-item-text')].map((e) => e.textContent);

describe('HistoryChart', () => {
  it('draws a model with one minute of data: a dot for p50 and for p95, and its bar', () => {
    const { container } = render(<HistoryChart points={[point(0, 210, 340, 5)]} hourly={false} width={380} />);
    const dots = container.querySelectorAll('.recharts-line-dot');
    expect(dots).toHaveLength(2);
    for (const dot of dots) expect(Number(dot.getAttribute('r'))).toBeGreaterThan(0);
    expect(container.querySelectorAll('.recharts-bar-rectangle').length).toBeGreaterThan(0);
    expect(legendWords(container)).toEqual(['TTFT p50', 'TTFT p95', 'requests/min']);
  });

  it('draws lines without dots once a series has two values or more', () => {
    const { container } = render(<HistoryChart points={[point(0, 210, 340), point(1, 220, null), point(2, 230, 360)]} hourly={false} width={380} />);
    expect(container.querySelectorAll('.recharts-line-dot')).toHaveLength(0);
    const paths = [...container.querySelectorAll('.recharts-line-curve')].map((p) => p.getAttribute('d') ?? '');
    expect(paths).toHaveLength(2);
    for (const d of paths) expect(d).toMatch(/L/);
  });

  it('names the failed part of the bars in the legend only when there is one, and counts per hour for 7 and 30 days', () => {
    const { container } = render(<HistoryChart points={[point(0, 210, 340, 5, 2), point(60, 220, 350, 4)]} hourly width={380} />);
    expect(legendWords(container)).toEqual(['TTFT p50', 'TTFT p95', 'requests/h', 'errors']);
  });

  it('puts the TTFT axis in seconds when the values reach past 1 s, in ms below', () => {
    // jsdom lays out no text, so recharts draws no tick words here: the browser test reads them.
    const slow = render(<HistoryChart points={[point(0, 800, 2400), point(1, 900, 3100)]} hourly={false} width={380} />);
    expect(slow.getByTestId('history-chart-plot').getAttribute('data-unit')).toBe('s');
    slow.unmount();
    const fast = render(<HistoryChart points={[point(0, 80, 240), point(1, 90, 310)]} hourly={false} width={380} />);
    expect(fast.getByTestId('history-chart-plot').getAttribute('data-unit')).toBe('ms');
  });
});
