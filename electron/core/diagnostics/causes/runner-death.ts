/**
 * What both runner-death causes (runner_stuck, runner_crashed) report: the watchdog's
 * and the exit's records around the failure, and what the supervisor did next.
 */
import type { RequestTimeline } from '../../node/node-types';
import type { DiagnosisContext } from '../diagnosis-context';
import type { RunnerIncident } from '../diagnosis-types';

/** The supervisor states that follow a runner's death; others (starting, ready) are not its answer to it. */
const STATES_AFTER_DEATH = ['restarting', 'failed', 'needs_attention'];

/** A runner death as the request saw it. */
export interface RunnerDeath {
  watchdog: RunnerIncident | null;
  exit: RunnerIncident | null;
  evidence: {
    failureCode: string;
    watchdogPhase: string | null;
    silentMs: number | null;
    deadlineMs: number | null;
    exitCause: string | null;
    exitCode: number | null;
    exitSignal: string | null;
    reason: string | null;
    runnerStateAfter: { state: string; reason: string } | null;
  };
}

/** The supervisor's first state after `from` that answers a death (1 ms of slack: one clock, two writers). */
function stateAfter(ctx: DiagnosisContext, instanceId: string, from: number): { state: string; reason: string } | null {
  const next = ctx.stateChanges.find((e) => e.instanceId === instanceId && e.t >= from - 1 && STATES_AFTER_DEATH.includes(e.data.to));
  return next ? { state: next.data.to, reason: next.data.reason } : null;
}

/**
 * The incidents of `t`'s runner from its arrival until a second after it ended (the
 * exit is recorded after the request already failed), and the evidence both verdicts carry.
 */
export function runnerDeath(ctx: DiagnosisContext, t: RequestTimeline, code: string, until: number): RunnerDeath {
  const mine = ctx.incidents.filter((i) => i.instanceId === t.instanceId && i.t >= t.arrivedAt - 1 && i.t <= until + 1000);
  const watchdog = mine.find((i) => i.kind === 'watchdog') ?? null;
  const exit = mine.find((i) => i.kind === 'exit') ?? null;
  return {
    watchdog,
    exit,
    evidence: {
      failureCode: code,
      watchdogPhase: watchdog?.phase ?? null,
      silentMs: watchdog?.silentMs ?? null,
      deadlineMs: watchdog?.deadlineMs ?? null,
      exitCause: exit?.cause ?? null,
      exitCode: exit?.code ?? null,
      exitSignal: exit?.signal ?? null,
      reason: exit?.reason ?? null,
      // What the supervisor did next, from its state machine: restarting, failed, needs_attention.
      runnerStateAfter: stateAfter(ctx, t.instanceId, watchdog?.t ?? exit?.t ?? until),
    },
  };
}
