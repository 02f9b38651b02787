/**
 * The bundle's exo/ folder in attach mode: the last state exo sent (prompt text
 * redacted), every runner and task status change exobar saw, the failed polls, the
 * exo causes, the requests exobar proxied (requests.jsonl: no prompt text), the changes their state machines refused, and the tails of exo's own logs when exo runs on this Mac. Everything
 * passes through the bundle's one Redactor.
 */
import { join } from 'node:path';
import type { ExoBundleSource } from '../exo/attach/exo-attachment';
import { redactExoState } from '../exo/attach/redact-exo-state';
import type { ExoCause } from './exo-diagnosis';
import { readLastBytes, tailBytes, truncationMarker } from './log-tails';
import type { Redactor } from './redaction';

export interface ExoBundlePart {
  files: Array<{ name: string; data: Buffer }>;
  truncated: Array<{ name: string; omitted: string }>;
}

/** exo's logs on this Mac, relative to its log folder (~/.exo/exo_log), and their names in the bundle. */
const EXO_LOGS: Array<[string, string]> = [
  ['exo.log', 'exo/logs/exo.log'],
  [join('runner_log', 'stdout.log'), 'exo/logs/runner_log/stdout.log'],
  [join('runner_log', 'stderr.log'), 'exo/logs/runner_log/stderr.log'],
];

const json = (value: unknown): Buffer => Buffer.from(`${JSON.stringify(value, null, 2)}\n`, 'utf8');
const jsonl = (rows: readonly unknown[], r: Redactor): Buffer => Buffer.from(rows.map((row) => `${JSON.stringify(r.value(row))}\n`).join(''), 'utf8');

/** Builds exo/ from the attachment's material; each exo log tail within `logCapBytes`. */
export async function exoBundleFiles(source: ExoBundleSource, causes: ExoCause[], r: Redactor, logCapBytes: number): Promise<ExoBundlePart> {
  // Tasks' user text goes first (every taskParams field but the settings), then the bundle's Redactor as everywhere.
  const state = redactExoState(source.state);
  const files: ExoBundlePart['files'] = [
    {
      name: 'exo/state.json',
      data: json(
        r.value({
          url: source.url,
          note: "exo's last answers to /state/*; every task's user text redacted",
          taskTextFieldsRedacted: state.fields,
          state: state.state,
        }),
      ),
    },
    { name: 'exo/state-history.jsonl', data: jsonl(source.history, r) },
    { name: 'exo/poll-errors.jsonl', data: jsonl(source.pollErrors, r) },
    // What changed in the cluster (Macs that joined or left, instances placed or deleted and why): exo's state keeps none of it.
    { name: 'exo/events.jsonl', data: jsonl(source.events, r) },
    { name: 'exo/diagnosis.json', data: json(r.value({ causes })) },
    // One line per request exobar proxied to exo: phases, timings, token counts, exo's generation_stats; exobar never keeps prompt text.
    { name: 'exo/requests.jsonl', data: jsonl(source.requests, r) },
    // A change a proxied request's state machine refused is a proxy bug: kept here so a bundle shows it.
    { name: 'exo/proxy-refused-transitions.json', data: json(r.value(source.proxyRefusals)) },
  ];
  const truncated: ExoBundlePart['truncated'] = [];
  if (source.logDir === null) return { files, truncated };
  for (const [relative, name] of EXO_LOGS) {
    const tail = await readLastBytes(join(source.logDir, relative), logCapBytes + 1);
    if (!tail) continue;
    const cut = tailBytes(tail.data, logCapBytes);
    // Redaction may lengthen a line: cut again rather than exceed the cap.
    const redacted = tailBytes(Buffer.from(r.text(cut.text), 'utf8'), logCapBytes);
    const omitted = tail.size - tail.data.length + cut.omittedBytes + redacted.omittedBytes;
    if (omitted > 0) truncated.push({ name, omitted: `the first ${omitted} bytes` });
    files.push({ name, data: Buffer.from(omitted > 0 ? truncationMarker(omitted) + redacted.text : redacted.text, 'utf8') });
  }
  return { files, truncated };
}
