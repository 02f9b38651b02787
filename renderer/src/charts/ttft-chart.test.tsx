/**
 * The TTFT chart names its p50 and p95 lines in a legend under the plot (the panel's
 * header row gives their values): a label drawn
 * at the line sat over the samples near the p95.
 */
import { cleanup, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { ttftSample } from '../../../test/support/renderer/fixtures';
import { TtftChart } from './ttft-chart';

afterEach(cleanup);

describe('TTFT chart', () => {
  it('draws no text over the plot for p50 and p95, and names both lines in the legend', () => {
    const samples = Array.from({ length: 12 }, (_, i) => ttftSample(i));
    render(<TtftChart samples={samples} p50Ms={230} p95Ms={1_400} width={356} />);
    const chart = screen.getByTestId('ttft-chart');
    const svgText = [...chart.querySelectorAll('svg text')].map((t) => t.textContent ?? '');
    expect(svgText.some((t) => /p50|p95/.test(t))).toBe(false);
    const legend = screen.getByTestId('ttft-legend').textContent ?? '';
    expect(legend).toMatch(/TTFT.*p50.*p95/);
  });

  it('leaves a percentile out of the legend while it is unknown', () => {
    render(<TtftChart samples={[ttftSample(1)]} p50Ms={null} p95Ms={null} />);
    expect(screen.getByTestId('ttft-legend').textContent).not.toMatch(/p50|p95/);
  });
});
