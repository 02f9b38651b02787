/**
 * "Launch anyway": what a safe pair plan asks the operator to acknowledge before it
 * launches, in words, for the popover and the tray menu alike. Two gates can be passed
 * on purpose: the fit check (this Mac's memory, or each Mac's on an exo cluster:
 * `acknowledgeMemory`) and exo's fast-synch gate (two ring models on one Mac's GPU with
 * fast synch on or assumed on: `acknowledgeRisk`). Any other blocker (a model exo cannot
 * place, a missing model) is never offered past.
 */
import type { SafePairPlan } from './api';
import type { LaunchSafePairOptions } from './bridge-actions';

export interface LaunchAnywayOffer {
  kind: 'memory' | 'fast_synch';
  /** One line: what the gate found. */
  title: string;
  /** The figures or the hazard, then what launching anyway risks. */
  detail: string;
  acknowledge: LaunchSafePairOptions;
}

/** True when every blocker of the plan is one of the fit check's problems. */
function onlyMemoryBlocks(plan: SafePairPlan): boolean {
  const problems = new Set(plan.fit?.problems ?? []);
  return plan.blockers.every((b) => problems.has(b));
}

/**
 * The gates this plan must be launched past: empty when it launches as it is, null when
 * something else blocks it (then nothing can be acknowledged).
 */
export function launchAnywayOffers(plan: SafePairPlan): LaunchAnywayOffer[] | null {
  if (!onlyMemoryBlocks(plan)) return null;
  const offers: LaunchAnywayOffer[] = [];
  const fit = plan.fit;
  if (fit && !fit.fits) {
    offers.push({
      kind: 'memory',
      title: plan.exo ? 'The safe pair does not fit on every Mac it lands on' : 'The safe pair does not fit in memory',
      detail: [...fit.problems, fit.risk ?? ''].join(' ').trim(),
      acknowledge: { acknowledgeMemory: true },
    });
  }
  // Only a launch that creates an instance creates the hazard; reusing both changes nothing.
  const risk = plan.exo?.fastSynchRisk;
  if (risk && plan.models.some((m) => !m.alreadyRunning)) {
    offers.push({
      kind: 'fast_synch',
      title: risk.assumed ? 'Two ring models on one GPU, fast synch assumed on' : 'Two ring models on one GPU with fast synch on',
      detail: risk.message,
      acknowledge: { acknowledgeRisk: true },
    });
  }
  return offers;
}

/** The launch options that acknowledge every offer. */
export function acknowledging(offers: readonly LaunchAnywayOffer[]): LaunchSafePairOptions {
  return Object.assign({}, ...offers.map((o) => o.acknowledge)) as LaunchSafePairOptions;
}
