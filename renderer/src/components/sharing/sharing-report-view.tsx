/**
 * One finished GPU sharing check: the machine and models, experiment 1's times to first
 * token beside exo's published ones, experiment 2's chart per sharing policy (B's ITL
 * over time with A's prefill shaded) and its decode figures, experiment 3's throughput,
 * experiment 4's decode beside an idle neighbour, and "Copy as markdown" (the report as kept, for an exo issue). A simulated report says
 * so first: the sim's decode figures are not evidence. A check run on exo through
 * exobar's proxy shows experiments 1 and 2 once with exobar's hold on and once off.
 */
import { formatDateTime } from '../../../../shared/time-words';
import { plural } from '../../../../shared/status-words';
import { useRef, useState } from 'react';
import { EXO_PUBLISHED, type DecodeRun, type SharingCheckResult, type TtftRun } from '../../../../shared/sharing-check';
import { ItlChart } from '../../charts/itl-chart';
import { copyText } from '../../lib/clipboard';
import { formatBytes, NA } from '../../lib/format';
import { useElementWidth } from '../../lib/use-element-width';

const s = (v: number | null) => (v === null ? NA : `${v.toFixed(2)} s`);
const rate = (v: number | null) => (v === null ? NA : `${v.toFixed(1)} tok/s`);
const ms = (v: number | null) => (v === null ? NA : `${v.toFixed(1)} ms`);
const pct = (v: number | null) => (v === null ? NA : `${Math.round(v * 100)} %`);
/** A run's setting: exobar's hold on exo, the sharing policy locally. */
const settingOf = (run: { hold: boolean | null; policy?: string | null }) =>
  run.hold !== null ? `Hold ${run.hold ? 'on' : 'off'}` : `Sharing policy ${run.policy ?? 'as configured'}`;

function DecodeRunView({ run, b, a }: { run: DecodeRun; b: string; a: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const width = useElementWidth(ref, 360);
  return (
    <div className="sharing-run" data-testid="sharing-run" data-policy={run.policy ?? ''} data-hold={run.hold === null ? '' : String(run.hold)}>
      <h4 className="small">
        {settingOf(run)}:{' '}
        <strong>
          {b} decodes at {pct(run.decodeRatio)} of its solo rate while {a} prefills
        </strong>{' '}
        <span className="muted">
          (ITL p95 ×{run.itlP95Ratio === null ? NA : run.itlP95Ratio.toFixed(2)}; afterwards {pct(run.idleRatio)})
        </span>
      </h4>
      <div ref={ref}>{width > 0 && <ItlChart itl={run.itl} aPrefill={run.aPrefill} width={width} />}</div>
      <table className="sharing-table small">
        <thead>
          <tr>
            <th>{b}</th>
            <th>tokens/s</th>
            <th>ITL p50</th>
            <th>ITL p95</th>
          </tr>
        </thead>
        <tbody>
          {(['before', 'during', 'after'] as const).map((span) => (
            <tr key={span}>
              <td>{span === 'during' ? `during ${a}'s prefill` : `${span} it`}</td>
              <td>{rate(run[span].decodeTokensPerSecond)}</td>
              <td>{ms(run[span].itlP50Ms)}</td>
              <td>{ms(run[span].itlP95Ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function SharingReportView({ result, markdown }: { result: SharingCheckResult; markdown: string | null }) {
  const [copied, setCopied] = useState<string | null>(null);
  const a = result.models.find((m) => m.role === 'A')?.name ?? 'A';
  const b = result.models.find((m) => m.role === 'B')?.name ?? 'B';
  const m = result.machine;
  const runs = result.decode.ran ? (result.decode.runs.length > 0 ? result.decode.runs : [result.decode]) : [];
  const ttftRuns: TtftRun[] = result.ttft.ran ? (result.ttft.runs.length > 0 ? result.ttft.runs : [result.ttft]) : [];
  const idle = result.idleNeighbour;
  const copy = () =>
    markdown &&
    copyText(markdown).then(
      () => setCopied('Copied the report as markdown'),
      () => setCopied('Could not copy: select the text of the kept .md file instead'),
    );
  return (
    <article className="sharing-report" data-testid="sharing-report" data-check={result.id}>
      <h3 className="small">
        {b} beside {a} · {formatDateTime(result.startedAt)}
      </h3>
      {result.simulated && (
        <p className="warning small" data-testid="sharing-simulated">
          Simulated: a model here is a sim runner. Its sharing model is calibrated for time to first token only; its decode figures are not evidence.
        </p>
      )}
      <p className="muted small">
        {m.chip ?? 'unknown chip'} ({m.cpus} cores), {formatBytes(m.memoryBytes)}, {m.os} {m.arch} · MLX {m.mlxVersion ?? 'unknown'}, mlx-lm{' '}
        {m.mlxLmVersion ?? 'unknown'}
      </p>
      {result.target.kind === 'exo' && (
        <p className="small" data-testid="sharing-exo">
          On exo at {result.target.node ?? 'unknown'}, through exobar&apos;s proxy; experiments 1 and 2 with exobar&apos;s hold on and off.
        </p>
      )}
      {result.ttft.ran ? (
        <table className="sharing-table small" data-testid="sharing-ttft">
          <thead>
            <tr>
              <th>{b}&apos;s time to first token</th>
              {ttftRuns.map((run, i) => (
                <th key={i}>{run.hold === null ? 'here' : settingOf(run).toLowerCase()}</th>
              ))}
              <th>exo published</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <td>alone</td>
              {ttftRuns.map((run, i) => (
                <td key={i}>{s(run.bAloneS)}</td>
              ))}
              <td>{EXO_PUBLISHED.bAloneS} s</td>
            </tr>
            <tr>
              <td>
                {a} prefilling {result.ttft.promptTokens} tokens
              </td>
              {ttftRuns.map((run, i) => (
                <td key={i}>{s(run.bWhileAPrefillsS)}</td>
              ))}
              <td>{EXO_PUBLISHED.bWhileAPrefillsS} s</td>
            </tr>
            <tr>
              <td>same, one {a} request queued</td>
              {ttftRuns.map((run, i) => (
                <td key={i}>{s(run.bWhileAPrefillsWithQueuedS)}</td>
              ))}
              <td>
                {result.target.kind === 'exo'
                  ? `${EXO_PUBLISHED.blockingQueuedS} (stock exo), ${EXO_PUBLISHED.nonBlockingQueuedS}`
                  : EXO_PUBLISHED.nonBlockingQueuedS}{' '}
                s
              </td>
            </tr>
          </tbody>
        </table>
      ) : (
        <p className="muted small">Time to first token: not run ({result.ttft.reason}).</p>
      )}
      {runs.map((run, i) => (
        <DecodeRunView key={`${run.policy ?? 'configured'}-${i}`} run={run} a={a} b={b} />
      ))}
      {!result.decode.ran && <p className="muted small">Decode under prefill: not run ({result.decode.reason}).</p>}
      {result.throughput.ran ? (
        <p className="small" data-testid="sharing-throughput">
          {plural(result.throughput.fastSynchOff.streams, 'client')} per model for {result.throughput.fastSynchOff.seconds.toFixed(0)} s, fast synch off:{' '}
          {result.throughput.fastSynchOff.models.map((t) => `${t.model} ${t.requestsPerMinute.toFixed(1)} requests/min`).join(', ')} (exo published{' '}
          {EXO_PUBLISHED.collapseRequestsPerMinute} in the fast-synch collapse).
        </p>
      ) : (
        <p className="muted small">Throughput: not run ({result.throughput.reason}).</p>
      )}
      {idle.ran ? (
        <p className="small" data-testid="sharing-idle-neighbour">
          {b} beside an idle neighbour: {rate(idle.resident.decodeTokensPerSecond)} with {a} resident and idle, {rate(idle.unloaded.decodeTokensPerSecond)} with{' '}
          {a} unloaded: <strong>{pct(idle.decodeRatio)}</strong>{' '}
          <span className="muted">(ITL p95 ×{idle.itlP95Ratio === null ? NA : idle.itlP95Ratio.toFixed(2)})</span>
        </p>
      ) : (
        <p className="muted small">Idle neighbour: not run ({idle.reason}).</p>
      )}
      <div className="row">
        <button type="button" className="button small" onClick={() => void copy()} disabled={!markdown}>
          Copy as markdown
        </button>
        {copied && (
          <span className="muted small" role="status">
            {copied}
          </span>
        )}
      </div>
    </article>
  );
}
