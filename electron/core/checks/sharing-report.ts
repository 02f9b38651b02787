/**
 * The sharing check's markdown report, for an exo issue: this machine's figures beside
 * exo's published ones, and the machine's facts. Built from the result alone.
 */
import { EXO_PUBLISHED, type DecodeRun, type DecodeSpan, type SharingCheckResult, type TtftRun } from '../../../shared/sharing-check';
import { formatMemory } from '../../../shared/memory-words';

const s = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(2)} s`);
const rate = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)} tok/s`);
const msf = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)} ms`);
const pct = (v: number | null) => (v === null ? 'n/a' : `${Math.round(v * 100)} %`);
/** A run's setting in words: the hold on exo, the sharing policy locally. */
const setting = (x: { hold: boolean | null; policy?: string | null }) => (x.hold !== null ? `hold ${x.hold ? 'on' : 'off'}` : (x.policy ?? 'as configured'));

export function sharingReportMarkdown(r: SharingCheckResult): string {
  const a = r.models.find((m) => m.role === 'A')!;
  const b = r.models.find((m) => m.role === 'B')!;
  const lines: string[] = [];
  lines.push(`# GPU sharing check: ${b.name} beside ${a.name}`, '');
  if (r.simulated) {
    lines.push(
      "> **Simulated.** A model here is exobar's sim runner: its sharing model is calibrated for time to first token only; its decode figures are not evidence.",
      '',
    );
  }
  lines.push(
    r.target.kind === 'exo'
      ? `Run ${new Date(r.startedAt).toISOString()} on exo at ${r.target.node ?? 'unknown'}, through exobar's proxy (its own /v1/chat/completions), with exobar's hold on and off.`
      : `Run ${new Date(r.startedAt).toISOString()} through exobar's supervisor (local).`,
    '',
  );
  lines.push('## Machine', '');
  lines.push(
    `- chip: ${r.machine.chip ?? 'unknown'} (${r.machine.cpus} cores), memory ${formatMemory(r.machine.memoryBytes)}, ${r.machine.os} ${r.machine.arch}`,
  );
  lines.push(`- MLX ${r.machine.mlxVersion ?? 'unknown'}, mlx-lm ${r.machine.mlxLmVersion ?? 'unknown'}`);
  for (const m of [a, b]) lines.push(`- ${m.role}: ${m.name} (\`${m.id}\`, ${m.engine}${m.quantization ? `, ${m.quantization}` : ''})`);
  lines.push('');
  if (r.ttft.ran) {
    const t = r.ttft;
    lines.push('## 1. Time to first token of B', '');
    lines.push(`A prefills a unique ${t.promptTokens}-token prompt (${s(t.aPrefillS)} here).`, '');
    const runs: TtftRun[] = t.runs.length > 0 ? t.runs : [t];
    if (runs.some((x) => x.hold !== null)) {
      // On exo: each run with the hold on or off; exo's worker decides the queued case, exobar's hold works around it.
      lines.push(`| condition | ${runs.map((x) => setting(x)).join(' | ')} | exo published |`, `|---|${runs.map(() => '---|').join('')}---|`);
      const row = (what: string, pick: (x: TtftRun) => number | null, published: string) =>
        lines.push(`| ${what} | ${runs.map((x) => s(pick(x))).join(' | ')} | ${published} s |`);
      row('B alone', (x) => x.bAloneS, EXO_PUBLISHED.bAloneS);
      row('A prefilling, nothing queued', (x) => x.bWhileAPrefillsS, EXO_PUBLISHED.bWhileAPrefillsS);
      row(
        'A prefilling + one A request queued',
        (x) => x.bWhileAPrefillsWithQueuedS,
        `${EXO_PUBLISHED.blockingQueuedS} (stock exo), ${EXO_PUBLISHED.nonBlockingQueuedS} (fixed worker)`,
      );
      lines.push('', "With the hold on, the queued A request waits in exobar's queue until A's first token, so exo's worker never blocks B behind it.");
    } else {
      lines.push('| condition | this machine | exo published |', '|---|---|---|');
      lines.push(`| B alone | ${s(t.bAloneS)} | ${EXO_PUBLISHED.bAloneS} s |`);
      lines.push(`| A prefilling, nothing queued | ${s(t.bWhileAPrefillsS)} | ${EXO_PUBLISHED.bWhileAPrefillsS} s |`);
      lines.push(
        `| A prefilling + one A request queued, blocking supervisor | ${t.baselineQueuedS === null ? 'not run' : s(t.baselineQueuedS)} | ${EXO_PUBLISHED.blockingQueuedS} s |`,
      );
      lines.push(`| same, non-blocking supervisor (exobar) | ${s(t.bWhileAPrefillsWithQueuedS)} | ${EXO_PUBLISHED.nonBlockingQueuedS} s |`);
    }
    if (t.baselineNote) lines.push('', `Baseline: ${t.baselineNote}.`);
    lines.push('', `exo's figures: ${EXO_PUBLISHED.machine}.`, '');
  } else lines.push('## 1. Time to first token of B', '', `Not run: ${r.ttft.reason}.`, '');
  lines.push('## 2. B decodes while A prefills', '');
  if (r.decode.ran) {
    const d = r.decode;
    const runs = d.runs.length > 0 ? d.runs : [d];
    const name = (x: DecodeRun) => setting(x);
    const row = (x: DecodeRun, when: string, span: DecodeSpan) =>
      `| ${name(x)} | ${when} | ${span.tokens} | ${rate(span.decodeTokensPerSecond)} | ${msf(span.itlP50Ms)} | ${msf(span.itlP95Ms)} |`;
    lines.push(`| ${runs.some((x) => x.hold !== null) ? 'hold' : 'sharing policy'} | B | gaps | tokens/s | ITL p50 | ITL p95 |`, '|---|---|---|---|---|---|');
    for (const x of runs) lines.push(row(x, "before A's prefill", x.before), row(x, "during A's prefill", x.during), row(x, "after A's prefill", x.after));
    lines.push('');
    for (const x of runs) {
      lines.push(
        `- ${name(x)}: B decodes at **${pct(x.decodeRatio)}** of its solo rate while A prefills (ITL p95 ×${x.itlP95Ratio?.toFixed(2) ?? 'n/a'}); after the prefill, ${pct(x.idleRatio)}. A's prefill: ${s(x.aPrefillS)}.`,
      );
    }
    if (runs.length > 1 && runs.every((x) => x.policy !== null)) {
      lines.push(
        '',
        `A's prefill with \`decode_first\` over with \`off\`: ${d.prefillCostRatio === null ? 'n/a' : `×${d.prefillCostRatio.toFixed(2)}`} (what pacing costs A; the policy's ceiling is +15 %).`,
      );
    }
    lines.push('', 'exo published no figure for this: only the time to first token was measured there.', '');
  } else lines.push(`Not run: ${r.decode.reason}.`, '');
  lines.push('## 3. Throughput under load', '');
  if (r.throughput.ran) {
    const on = r.throughput.fastSynchOn;
    const onSkipped = 'reason' in on ? on.reason : null;
    const runs = [r.throughput.fastSynchOff, ...('models' in on ? [on] : [])];
    lines.push('| fast synch | model | requests/min | tokens/s | failed |', '|---|---|---|---|---|');
    for (const run of runs) {
      for (const m of run.models)
        lines.push(`| ${run.fastSynch ? 'on' : 'off'} | ${m.model} | ${m.requestsPerMinute.toFixed(1)} | ${m.tokensPerSecond.toFixed(1)} | ${m.failed} |`);
    }
    const off = r.throughput.fastSynchOff;
    lines.push(
      '',
      `${off.streams} streaming clients per model for ${off.seconds} s each run. exo published ${EXO_PUBLISHED.collapseRequestsPerMinute} requests per minute in the fast-synch collapse (8 clients per model).`,
    );
    for (const run of runs) if (run.stoppedEarly) lines.push('', `The fast synch ${run.fastSynch ? 'on' : 'off'} run stopped early: ${run.stoppedEarly}.`);
    if (onSkipped) lines.push('', `Fast synch on: ${onSkipped}.`);
    lines.push('');
  } else lines.push(`Not run: ${r.throughput.reason}.`, '');
  lines.push('## 4. B decodes beside an idle neighbour', '');
  if (r.idleNeighbour.ran) {
    const n = r.idleNeighbour;
    lines.push('| A | gaps | tokens/s | ITL p50 | ITL p95 |', '|---|---|---|---|---|');
    for (const [when, span] of [
      ['resident, idle', n.resident],
      ['unloaded', n.unloaded],
    ] as const)
      lines.push(`| ${when} | ${span.tokens} | ${rate(span.decodeTokensPerSecond)} | ${msf(span.itlP50Ms)} | ${msf(span.itlP95Ms)} |`);
    lines.push(
      '',
      `B decodes at **${pct(n.decodeRatio)}** of its rate with A unloaded while A is resident and idle (ITL p95 ×${n.itlP95Ratio?.toFixed(2) ?? 'n/a'}). A: ${n.how}.`,
      '',
      "oMLX users measured two idle resident models cutting another model's decode on an M3 Ultra from 74-86 to 46-62 tokens/s (jundot/omlx #3209).",
      '',
    );
  } else lines.push(`Not run: ${r.idleNeighbour.reason}.`, '');
  const same = r.instancesBefore.join(',') === r.instancesAfter.join(',');
  lines.push(`Instances before: ${r.instancesBefore.join(', ') || 'none'}; after: ${r.instancesAfter.join(', ') || 'none'}${same ? ' (as before)' : ''}.`, '');
  return lines.join('\n');
}
