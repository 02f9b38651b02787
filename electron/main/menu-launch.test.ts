/**
 * The tray's "Launch safe pair" past the gates the operator may pass: the plans are the
 * server's own (this Mac's pair through the fit check, and the pair planned on the
 * serving fake exo), the dialog is the only stand-in.
 */
import { describe, expect, it, vi } from 'vitest';
import type { MessageBoxOptions } from 'electron';
import { defaultSettings, type SafePairPlan } from '../../shared/api';
import { SIM_MODELS } from '../../shared/catalog';
import { planSafePair } from '../../shared/safe-pair-plan';
import { checkFit } from '../core/fit/check-fit';
import { estimateModelMemory } from '../core/fit/model-memory';
import { withFit } from '../core/safe-pair/plan-for-node';
import { oneMacPairPlan } from '../../test/support/fake-exo';
import { launchSafePairFromMenu, LAUNCH_ANYWAY_BUTTONS } from './menu-launch';

const GiB = 1024 ** 3;

/** This Mac's sim pair with `freeGiB` free, as GET /api/launch/safe-pair plans it. */
async function localPlan(freeGiB: number): Promise<SafePairPlan> {
  const plan = planSafePair({ catalog: [...SIM_MODELS], settings: defaultSettings(), running: [], freeMemoryBytes: freeGiB * GiB });
  const estimates = await Promise.all(SIM_MODELS.map((m) => estimateModelMemory(m, 8192)));
  return withFit(plan, checkFit(estimates, { freeBytes: freeGiB * GiB, gpuLimitBytes: 16 * GiB }));
}

function deps(plan: SafePairPlan, answer: number) {
  const questions: MessageBoxOptions[] = [];
  return {
    questions,
    launch: vi.fn(async () => undefined),
    ask: async (q: MessageBoxOptions) => {
      questions.push(q);
      return answer;
    },
    plan: async () => plan,
  };
}

describe('the menu launch', () => {
  it('launches a plan that fits without asking', async () => {
    const d = deps(await localPlan(18), 0);
    expect(await launchSafePairFromMenu(d)).toBe('launched');
    expect(d.questions).toEqual([]);
    expect(d.launch).toHaveBeenCalledWith();
  });

  it('asks with the figures and the risk when the pair does not fit; Launch anyway acknowledges the memory', async () => {
    const d = deps(await localPlan(4), 0);
    expect(await launchSafePairFromMenu(d)).toBe('launched_anyway');
    expect(d.questions).toHaveLength(1);
    expect(d.questions[0]).toMatchObject({ type: 'warning', buttons: [...LAUNCH_ANYWAY_BUTTONS], defaultId: 1, cancelId: 1 });
    expect(d.questions[0]!.message).toBe('The safe pair does not fit in memory. Launch it anyway?');
    expect(d.questions[0]!.detail).toMatch(/^Not enough memory: needs 5\.9 GiB; 4\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 2\.0 GiB usable\. Launching anyway may push macOS/);
    expect(d.launch).toHaveBeenCalledWith({ acknowledgeMemory: true });
  });

  it('Cancel launches nothing', async () => {
    const d = deps(await localPlan(4), 1);
    expect(await launchSafePairFromMenu(d)).toBe('cancelled');
    expect(d.launch).not.toHaveBeenCalled();
  });

  it('a blocker that is not memory is never offered past: the launch is tried plainly, its refusal reaches the notification', async () => {
    const plan = await localPlan(4);
    const d = deps({ ...plan, blockers: [...plan.blockers, 'Unknown model "x" (safePair.small): it is not in the catalog.'] }, 0);
    expect(await launchSafePairFromMenu(d)).toBe('launched');
    expect(d.questions).toEqual([]);
  });

  it("on a one-Mac exo cluster: asks past exo's fast-synch gate", async () => {
    const d = deps(await oneMacPairPlan(96), 0);
    expect(await launchSafePairFromMenu(d)).toBe('launched_anyway');
    expect(d.questions[0]!.message).toBe('Two ring models on one GPU, fast synch assumed on. Launch it anyway?');
    expect(d.questions[0]!.detail).toContain('EXO_FAST_SYNCH=false');
    expect(d.launch).toHaveBeenCalledWith({ acknowledgeRisk: true });
  });

  it('on exo, a Mac too small for both and the fast-synch gate: one question, both acknowledged', async () => {
    const d = deps(await oneMacPairPlan(5), 0);
    expect(await launchSafePairFromMenu(d)).toBe('launched_anyway');
    expect(d.questions[0]!.message).toBe(
      'The safe pair does not fit on every Mac it lands on. Two ring models on one GPU, fast synch assumed on. Launch it anyway?',
    );
    expect(d.questions[0]!.detail).toMatch(/^Not enough memory on studio-a: needs 2\.\d GiB; 4\.0 GiB free, of which 2\.0 GiB is kept free for macOS and other apps: 2\.0 GiB usable/);
    expect(d.launch).toHaveBeenCalledWith({ acknowledgeMemory: true, acknowledgeRisk: true });
  });
});
