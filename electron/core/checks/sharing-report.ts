/**
 * The sharing check's markdown report, for an exo issue: this machine's figures beside
 * exo's published ones, and the machine's facts. Built from the result alone.
 */
import { EXO_PUBLISHED, type DecodeRun, type DecodeSpan, type SharingCheckResult } from '../../../shared/sharing-check';
import { formatMemory } from '../../../shared/memory-words';

const s = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(2)} s`);
const rate = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)} tok/s`);
const msf = (v: number | null) => (v === null ? 'n/a' : `${v.toFixed(1)} ms`);
const pct = (v: number | null) => (v === null ? 'n/a' : `${Math.round(v * 100)} %`);

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
  lines.push(`Run ${new Date(r.startedAt).toISOString()} through exobar's supervisor (${r.target.kind}${r.target.node ? `, ${r.target.node}` : ''}).`, '');
  lines.push('## Machine', '');
  lines.push(`- chip: ${r.machine.chip ?? 'unknown'} (${r.machine.cpus} cores), memory ${formatMemory(r.machine.memoryBytes)}, ${r.machine.os} ${r.machine.arch}`);
  lines.push(`- MLX ${r.machine.mlxVersion ?? 'unknown'}, mlx-lm ${r.machine.mlxLmVersion ?? 'unknown'}`);
  for (const m of [a, b]) lines.push(`- ${m.role}: ${m.name} (\`${m.id}\`, ${m.engine}${m.quantization ? `, ${m.quantization}` : ''})`);
  lines.push('');
  if (r.ttft.ran) {
    const t = r.ttft;
    lines.push('## 1. Time to first token of B', '');
    lines.push(`A prefills a unique ${t.promptTokens}-token prompt (${s(t.aPrefillS)} here).`, '');
    lines.push('| condition | this machine | exo published |', '|---|---|---|');
    lines.push(`| B alone | ${s(t.bAloneS)} | ${EXO_PUBLISHED.bAloneS} s |`);
    lines.push(`| A prefilling, nothing queued | ${s(t.bWhileAPrefillsS)} | ${EXO_PUBLISHED.bWhileAPrefillsS} s |`);
    lines.push(
      `| A prefilling + one A request queued, blocking supervisor | ${t.baselineQueuedS === null ? 'not run' : s(t.baselineQueuedS)} | ${EXO_PUBLISHED.blockingQueuedS} s |`,
    );
    lines.push(`| same, non-blocking supervisor (exobar) | ${s(t.bWhileAPrefillsWithQueuedS)} | ${EXO_PUBLISHED.nonBlockingQueuedS} s |`);
    if (t.baselineNote) lines.push('', `Baseline: ${t.baselineNote}.`);
    lines.push('', `exo's figures: ${EXO_PUBLISHED.machine}.`, '');
  } else lines.push('## 1. Time to first token of B', '', `Not run: ${r.ttft.reason}.`, '');
  lines.push('## 2. B decodes while A prefills', '');
  if (r.decode.ran) {
    const d = r.decode;
    const runs = d.runs.length > 0 ? d.runs : [d];
    const name = (x: DecodeRun) => x.policy ?? 'as configured';
    const row = (x: DecodeRun, when: string, span: DecodeSpan) =>
      `| ${name(x)} | ${when} | ${span.tokens} | ${rate(span.decodeTokensPerSecond)} | ${msf(span.itlP50Ms)} | ${msf(span.itlP95Ms)} |`;
    lines.push('| sharing policy | B | gaps | tokens/s | ITL p50 | ITL p95 |', '|---|---|---|---|---|---|');
    for (const x of runs) lines.push(row(x, "before A's prefill", x.before), row(x, "during A's prefill", x.during), row(x, "after A's prefill", x.after));
    lines.push('');
    for (const x of runs) {
      lines.push(
        `- ${name(x)}: B decodes at **${pct(x.decodeRatio)}** of its solo rate while A prefills (ITL p95 ×${x.itlP95Ratio?.toFixed(2) ?? 'n/a'}); after the prefill, ${pct(x.idleRatio)}. A's prefill: ${s(x.aPrefillS)}.`,
      );
    }
    if (runs.length > 1) {
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
  const same = r.instancesBefore.join(',') === r.instancesAfter.join(',');
  lines.push(`Instances before: ${r.instancesBefore.join(', ') || 'none'}; after: ${r.instancesAfter.join(', ') || 'none'}${same ? ' (as before)' : ''}.`, '');
  return lines.join('\n');
}
