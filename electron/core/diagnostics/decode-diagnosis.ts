/**
 * Slow decodes, diagnosed: a request whose tokens came markedly slower while a
 * neighbour on the same GPU prefilled or decoded than the model's tokens come alone
 * (`decode_slowed_by_neighbour`, naming the neighbour and its phase). The solo
 * reference is every recorded request of the model: its inter-token gaps during which
 * no neighbour worked. A pure function of the node's request records.
 */
import { phaseVerb, type NeighbourPhase } from '../../../shared/sharing';
import type { RequestTimeline } from '../node/node-types';

export interface DecodeFinding {
  requestId: string;
  instanceId: string;
  model: string;
  cause: 'decode_slowed_by_neighbour';
  bugToReport: false;
  neighbour: { instanceId: string; model: string; modelName: string; phase: NeighbourPhase; node: string | null };
  /** The request's tokens/s over its gaps beside that neighbour's phase. */
  decodeTokensPerSecond: number;
  /** The model's tokens/s over its solo gaps (every recorded request). */
  soloDecodeTokensPerSecond: number;
  /** decodeTokensPerSecond over soloDecodeTokensPerSecond. */
  ratio: number;
  explanation: string;
  evidence: { gapsBeside: number; gapsTotal: number; soloGaps: number; itlP95Ms: number | null };
}

/** Gaps needed on each side before a comparison is drawn. */
const MIN_GAPS = 5;
/** The neighbour must have been busy for at least this share of the request's gaps. */
const MIN_SHARED_FRACTION = 0.25;

const r2 = (n: number) => Math.round(n * 100) / 100;

/** Findings for requests decoded at or below 1/`slowdown` of their model's solo rate beside a neighbour. */
export function diagnoseDecode(timelines: readonly RequestTimeline[], slowdown: number): DecodeFinding[] {
  const solo = new Map<string, { gaps: number; ms: number }>();
  for (const t of timelines) {
    const s = solo.get(t.model) ?? { gaps: 0, ms: 0 };
    s.gaps += t.decodeSharing.soloGaps;
    s.ms += t.decodeSharing.soloMs;
    solo.set(t.model, s);
  }
  const findings: DecodeFinding[] = [];
  for (const t of timelines) {
    const ref = solo.get(t.model)!;
    if (ref.gaps < MIN_GAPS || ref.ms <= 0) continue;
    const soloRate = (ref.gaps / ref.ms) * 1000;
    const total = t.decodeSharing.soloGaps + t.decodeSharing.neighbours.reduce((n, x) => Math.max(n, x.gaps), 0);
    let worst: DecodeFinding | null = null;
    for (const n of t.decodeSharing.neighbours) {
      if (n.gaps < MIN_GAPS || n.ms <= 0 || n.gaps < MIN_SHARED_FRACTION * total) continue;
      const rate = (n.gaps / n.ms) * 1000;
      const ratio = rate / soloRate;
      if (ratio > 1 / slowdown || (worst && worst.ratio <= ratio)) continue;
      const where = n.node ? ` on ${n.node}` : '';
      worst = {
        requestId: t.requestId,
        instanceId: t.instanceId,
        model: t.model,
        cause: 'decode_slowed_by_neighbour',
        bugToReport: false,
        neighbour: { instanceId: n.instanceId, model: n.model, modelName: n.modelName, phase: n.phase, node: n.node },
        decodeTokensPerSecond: r2(rate),
        soloDecodeTokensPerSecond: r2(soloRate),
        ratio: r2(ratio),
        explanation:
          `It decoded at ${Math.round(ratio * 100)} % of its solo rate (${rate.toFixed(1)} vs ${soloRate.toFixed(1)} tokens/s over ` +
          `${ref.gaps} tokens decoded alone) while ${n.modelName} ${phaseVerb(n.phase)}${where} on the same GPU (${n.gaps} of its ${total} tokens timed).`,
        evidence: { gapsBeside: n.gaps, gapsTotal: total, soloGaps: ref.gaps, itlP95Ms: t.itlP95Ms },
      };
    }
    if (worst) findings.push(worst);
  }
  return findings;
}
