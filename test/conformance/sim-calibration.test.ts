/**
 * The sim keeps exo's measured proportions (docs/domain.md): a short 1B request is ~1.7x
 * slower while the 3B prefills, and the 3B's 30k-token prefill takes ~19 s. Run at a
 * small time scale with wide bands, since the CPU is shared with other work; the exact
 * figures come from `node --import tsx test/support/conformance/sim-calibration.ts --time-scale 1`.
 */
import { describe, expect, it } from 'vitest';
import { useRunnerProcessCleanup } from '../support/runner-cleanup';
import { measureSimCalibration } from '../support/conformance/sim-calibration';

describe('sim calibration', () => {
  useRunnerProcessCleanup();

  it('matches the measured TTFT ratio and the 3B prefill time, within tolerant bands', async () => {
    const result = await measureSimCalibration({ timeScale: 0.2, trials: 3 });
    const report = JSON.stringify(result);
    expect(result.ttftAloneS, report).toBeGreaterThan(0.17);
    expect(result.ttftAloneS, report).toBeLessThan(0.4);
    expect(result.busyRatio, report).toBeGreaterThan(1.3);
    expect(result.busyRatio, report).toBeLessThan(2.3);
    expect(result.prefill30kS, report).toBeGreaterThan(16);
    expect(result.prefill30kS, report).toBeLessThan(24);
  });
});
