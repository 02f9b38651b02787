/**
 * README.txt: what the bundle holds, what was removed from it, and the diagnosis in
 * words, for whoever opens the zip first.
 */
import type { Diagnosis } from './diagnosis';
import type { ExoCause } from './exo-diagnosis';
import { REDACTION_DESCRIPTIONS, REDACTION_KINDS, type RedactionCounts } from './redaction';
import { plural } from '../../../shared/status-words';

export interface ReadmeInput {
  version: string;
  exportedAt: string;
  source: 'running node' | 'data directory';
  /** The bundle's files; `bytes` null for the README itself, whose size is not known while it is written. */
  files: Array<{ name: string; bytes: number | null }>;
  redactions: RedactionCounts;
  truncated: Array<{ name: string; omitted: string }>;
  diagnosis: Diagnosis | null;
  /** Attach mode's exo causes; empty when no exo is attached. */
  exoCauses?: ExoCause[];
}

const FILE_NOTES: Array<[RegExp, string]> = [
  [/^README\.txt$/, 'this file'],
  [/^manifest\.json$/, 'versions, platform, export time, uptime, the redaction counts and the diagnosis'],
  [/^snapshot\.json$/, 'the node\u2019s snapshot at export: runners, queues, prefill, pending cancels, TTFT, warnings'],
  [/^events\.jsonl$/, 'recent node events, one JSON object per line, monotonic ms (field t)'],
  [/^timeline\.csv$/, 'one row per request: timestamps and TTFT parts, with the diagnosed cause'],
  [/^policy\.json$/, 'per runner: fast-synch decision, reason, value the runner reported, warnings'],
  [/^system\.json$/, 'CPU, memory, OS release (and on macOS the hardware model and OS build)'],
  [/^settings\.json$/, 'the settings, secrets removed'],
  [/^checks\/.+\.md$/, 'one of the latest GPU sharing checks, as its markdown report (exobar check sharing)'],
  [/^checks\/.+\.json$/, 'the same check\u2019s result: every figure, the models and the machine\u2019s facts'],
  [/\/stdout\.log$/, 'the runner\u2019s stdout tail (protocol lines; text fields removed)'],
  [/\/stderr\.log$/, 'the runner\u2019s stderr tail'],
  [/\/exit\.json$/, 'the runner\u2019s status, exits (code or signal) and watchdog decisions'],
  [/^exo\/state\.json$/, 'attach mode: exo\u2019s last /state answers, prompt text redacted'],
  [/^exo\/state-history\.jsonl$/, 'attach mode: every runner and task status change exobar saw (epoch ms)'],
  [/^exo\/poll-errors\.jsonl$/, 'attach mode: failed polls of exo\u2019s API and entries it could not read'],
  [/^exo\/events\.jsonl$/, 'attach mode: what changed in the cluster: Macs that joined or left, instances placed or deleted and why, runners that failed'],
  [/^exo\/diagnosis\.json$/, 'attach mode: the exo causes (also below)'],
  [/^exo\/logs\//, 'attach mode: the tail of exo\u2019s own log on this Mac, redacted'],
];

function note(name: string): string {
  return FILE_NOTES.find(([pattern]) => pattern.test(name))?.[1] ?? '';
}

/** The README's text. */
export function readmeText(input: ReadmeInput): string {
  const lines: string[] = [];
  lines.push('exobar diagnostic bundle', '========================', '');
  lines.push(`exobar ${input.version}, exported ${input.exportedAt} from a ${input.source}.`);
  lines.push('Attach this zip to a bug report. It holds what is needed to tell a stalled supervisor');
  lines.push('from GPU contention, and no prompt or completion text.', '');

  lines.push('Files', '-----');
  for (const file of input.files) {
    const size = file.bytes === null ? '' : ` (${plural(file.bytes, 'byte')})`;
    lines.push(`${file.name}${size}${note(file.name) ? `: ${note(file.name)}` : ''}`);
  }
  lines.push('');

  lines.push('What was removed', '----------------');
  lines.push('Prompt and completion text never enter the bundle: requests appear with token counts only.');
  lines.push('Everywhere, logs included, these were replaced by a [redacted:...] marker:');
  for (const kind of REDACTION_KINDS) lines.push(`- ${REDACTION_DESCRIPTIONS[kind]}: ${input.redactions[kind]} replaced`);
  lines.push('system.json never holds serial numbers, hardware UUIDs, MAC addresses or the host name.');
  if (input.truncated.length > 0) {
    lines.push('', 'Cut to keep the bundle small (the most recent part is kept):');
    for (const t of input.truncated) lines.push(`- ${t.name}: ${t.omitted}`);
  }
  lines.push('');

  lines.push('Diagnosis', '---------');
  const d = input.diagnosis;
  if (!d) {
    lines.push('No running node: no requests to diagnose. Logs and settings only.');
  } else if (d.findings.length === 0) {
    lines.push(
      `${plural(d.examinedRequests, 'request')} examined; no time to first token at or above ${d.options.thresholdMs} ms ` +
        `(or ${d.options.soloMultiple}x its model\u2019s solo median), and no runner failure.`,
    );
  } else {
    lines.push(
      `${plural(d.examinedRequests, 'request')} examined. Causes: ${Object.entries(d.summary)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}.`,
    );
    const bugs = d.findings.filter((f) => f.bugToReport).length;
    if (bugs > 0) {
      lines.push(`${plural(bugs, 'finding')} ${bugs === 1 ? 'points' : 'point'} at a bug in exobar itself (node_dispatch_delay): please report ${bugs === 1 ? 'it' : 'them'}.`);
    }
    for (const f of d.findings.slice(0, 10)) lines.push(`- ${f.requestId} (${f.model}): ${f.cause}. ${f.explanation}`);
    if (d.findings.length > 10) lines.push(`- ... ${d.findings.length - 10} more in manifest.json`);
  }
  if (d && d.pacing.length > 0) {
    lines.push('', 'Sharing policy (one GPU, docs/sharing-policy.md):');
    for (const p of d.pacing.slice(-10)) lines.push(`- ${p.words}`);
  }
  if (input.exoCauses && input.exoCauses.length > 0) {
    lines.push('', 'exo (attach mode):');
    for (const c of input.exoCauses) {
      const diagnostics = c.exoDiagnostics.length > 0 ? ` exo diagnostics: ${c.exoDiagnostics.join(', ')}.` : '';
      lines.push(`- ${c.cause}${c.assumed ? ' (assumed)' : ''}: ${c.explanation}${diagnostics}`);
    }
  }
  lines.push('');
  lines.push('Reading timeline.csv', '--------------------');
  lines.push('All times are milliseconds of one monotonic clock (events.jsonl uses the same).');
  lines.push('ttft_ms = load_ms + dispatch_ms + ack_wait_ms + runner_wait_ms + prefill_ms + first_token_gap_ms.');
  lines.push('- dispatch_ms long while the runner was ready: the node held the task back (a bug).');
  lines.push('- ack_wait_ms long: the runner was in a step, usually another prompt\u2019s prefill on the same model');
  lines.push('  (a runner admits new tasks only between steps). Other models must not be affected.');
  lines.push('- runner_wait_ms long: acknowledged, the request waited in the runner for its turn while it prefilled');
  lines.push('  the prompts of the same model ahead of it (one per step). Not its own prefill.');
  lines.push('- prefill_ms or first_token_gap_ms long: the prompt itself, or the GPU shared with a busy runner');
  lines.push('  (compare with the same model\u2019s rows that have no concurrent_busy_instances).');
  lines.push('See docs/diagnostics.md in the exobar repository for more.');
  return `${lines.join('\n')}\n`;
}
