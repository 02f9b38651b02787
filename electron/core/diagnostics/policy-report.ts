/**
 * policy.json: per runner, the fast-synch decision, its reason, the value the runner
 * reported in its hello, and every warning raised about it. Built from the snapshot
 * (current runners and warnings) and the events (instances since deleted, warnings
 * raised and cleared over time), because a collapse under fast synch (docs/domain.md) can
 * only be told apart from a supervisor stall when this is known.
 */
import { localInstances, reportedFastSynchDiffers } from '../../../shared/instance-state';
import type { Snapshot, Warning } from '../../../shared/snapshot';
import type { NodeEvent } from '../node/node-types';
import { isEventOf } from '../events/node-event';

export interface PolicyRunner {
  instanceId: string;
  model: string | null;
  instanceType: string | null;
  override: string | null;
  /** "on" or "off": what the policy put in the runner's environment. */
  decision: 'on' | 'off' | null;
  reason: string | null;
  /** The value the runner reported in its hello; null before the hello. */
  reported: boolean | null;
  /** True when the runner reported something else than decided (an error shown to the user). */
  mismatch: boolean;
  /** Still in the node's snapshot (false: known from events only). */
  current: boolean;
  /** Current warnings that name this runner. */
  warnings: Array<Pick<Warning, 'code' | 'title'>>;
  /** Every warning raised about this runner (monotonic ms, code). */
  warningsRaised: Array<{ t: number; code: string }>;
}

export interface PolicyReport {
  runners: PolicyRunner[];
  warnings: Warning[];
  warningEvents: Array<{ t: number; kind: 'warning_raised' | 'warning_cleared'; code: string | null; instanceIds: string[] }>;
}

/** Builds policy.json from a snapshot (null when no node runs) and the recent events. */
export function buildPolicyReport(snapshot: Snapshot | null, events: readonly NodeEvent[]): PolicyReport {
  const warningEvents = events
    .filter(isEventOf('warning_raised', 'warning_cleared'))
    .map((e) => ({ t: e.t, kind: e.kind, code: e.data.code, instanceIds: e.data.instanceIds }));
  const warnings = snapshot?.warnings ?? [];
  const runners = new Map<string, PolicyRunner>();
  const blank = (instanceId: string): PolicyRunner => ({
    instanceId,
    model: null,
    instanceType: null,
    override: null,
    decision: null,
    reason: null,
    reported: null,
    mismatch: false,
    current: false,
    warnings: [],
    warningsRaised: [],
  });

  // Instances known from events (deleted ones included), then overwritten by the snapshot.
  for (const e of events) {
    if (e.kind === 'instance_created') {
      const { model, instanceType, fastSynch, reason } = e.data;
      runners.set(e.instanceId, { ...blank(e.instanceId), model, instanceType, decision: fastSynch ? 'on' : 'off', reason });
    } else if (e.kind === 'runner_hello') {
      const runner = runners.get(e.instanceId) ?? blank(e.instanceId);
      runner.reported = e.data.fastSynch;
      runner.decision = e.data.decided ? 'on' : 'off';
      runners.set(e.instanceId, runner);
    }
  }
  for (const instance of snapshot ? localInstances(snapshot) : []) {
    const previous = runners.get(instance.id) ?? blank(instance.id);
    runners.set(instance.id, {
      ...previous,
      model: instance.model,
      instanceType: instance.instanceType,
      override: instance.fastSynch.override,
      decision: instance.fastSynch.enabled ? 'on' : 'off',
      reason: instance.fastSynch.reason,
      reported: instance.fastSynch.reported,
      current: true,
    });
  }
  for (const runner of runners.values()) {
    runner.mismatch = runner.decision !== null && reportedFastSynchDiffers(runner.decision === 'on', runner.reported);
    runner.warnings = warnings.filter((w) => w.instanceIds.includes(runner.instanceId)).map((w) => ({ code: w.code, title: w.title }));
    runner.warningsRaised = warningEvents
      .filter((w) => w.kind === 'warning_raised' && w.instanceIds.includes(runner.instanceId))
      .map((w) => ({ t: w.t, code: w.code ?? 'unknown' }));
  }
  return { runners: [...runners.values()], warnings, warningEvents };
}
