/**
 * The sim keeps exo's measured proportions (docs/domain.md): a short 1B request is ~1.7x
 * slower while the 3B prefills, and the 3B's 30k-token prefill takes ~19 s. Run at half
 * speed with wide bands: what a loaded CPU adds to a sample (a late timer, a pipe read
 * late) is a few tens of real milliseconds, small beside a 115 ms TTFT at time scale 0.5
 * but most of a 46 ms one at 0.2. The bands are on each phase's fastest sample, since load
 * only ever adds. The exact figures come from
 * `node --import tsx test/support/conformance/sim-calibration.ts --time-scale 1`.
 */
import { describe, expect, it } from 'vitest';
import { useRunnerProcessCleanup } from '../support/runner-cleanup';
import { measureSimCalibration } from '../support/conformance/sim-calibration';

describe('sim calibration', () => {
  useRunnerProcessCleanup();

  it('matches the measured TTFT ratio and the 3B prefill time, within tolerant bands', async () => {
    const result = await measureSimCalibration({ timeScale: 0.5, trials: 5 });
    const report = JSON.stringify(result);
    expect(result.ttftAloneMinS, report).toBeGreaterThan(0.17);
    expect(result.ttftAloneMinS, report).toBeLessThan(0.4);
    expect(result.busyRatioMin, report).toBeGreaterThan(1.3);
    expect(result.busyRatioMin, report).toBeLessThan(2.3);
    expect(result.prefill30kS, report).toBeGreaterThan(16);
    expect(result.prefill30kS, report).toBeLessThan(24);
  });
});
