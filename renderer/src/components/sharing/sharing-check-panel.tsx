/**
 * "Check GPU sharing": starts the sharing check on this node (`POST /api/checks/sharing`
 * or IPC) with the settings given, shows its step and progress while it runs (polled),
 * cancels it, lists the kept reports (newest first) and shows the one picked, the
 * newest after a check ends. A check started elsewhere (the CLI, another page) shows
 * here too while it runs. Collapsed by default; read only while open. What it shows
 * comes from useSharingCheck (use-sharing-check.ts); this file draws it.
 */
import { formatDateTime } from '../../../../shared/time-words';
import { useId, useState } from 'react';
import { PanelToggle } from '../common/panel-toggle';
import { ProgressBar } from '../common/progress-bar';
import { SharingReportView } from './sharing-report-view';
import { useSharingCheck } from './use-sharing-check';

function NumberField({ label, value, min, onChange }: { label: string; value: number; min: number; onChange: (v: number) => void }) {
  return (
    <label className="small sharing-field">
      {label} <input type="number" min={min} value={value} onChange={(e) => onChange(Math.max(min, Math.round(Number(e.target.value) || min)))} />
    </label>
  );
}

export function SharingCheckPanel() {
  const [open, setOpen] = useState(false);
  const bodyId = useId();
  const { list, running, shown, error, ended, promptTokens, setPromptTokens, streams, setStreams, seconds, setSeconds, show, start, cancel } =
    useSharingCheck(open);

  const reports = list?.checks ?? [];
  return (
    <section className="panel sharing-check-panel" aria-label="GPU sharing">
      <PanelToggle open={open} onToggle={() => setOpen((o) => !o)} bodyId={bodyId}>
        <span>GPU sharing</span>
        <span className="spacer" />
        {running ? (
          <span className="small">checking… {Math.round(running.progress * 100)} %</span>
        ) : (
          reports.length > 0 && (
            <span className="muted small">
              {reports.length} {reports.length === 1 ? 'report' : 'reports'}
            </span>
          )
        )}
      </PanelToggle>
      <div id={bodyId} className="panel-body" hidden={!open}>
        <p className="muted small">
          Measures how two models share this Mac&apos;s GPU through exobar&apos;s own supervisor: B&apos;s time to first token and decode while A prefills a
          long prompt, and the throughput of several clients per model. Models it launches are stopped again.
        </p>
        {running ? (
          <div className="sharing-running" data-testid="sharing-running">
            <p className="small" role="status">
              {running.step}
            </p>
            <ProgressBar value={running.progress} max={1} label="Check progress" />
            <button type="button" className="button" onClick={cancel}>
              Cancel
            </button>
          </div>
        ) : (
          <div className="sharing-start">
            <NumberField label="A's prompt (tokens)" value={promptTokens} min={64} onChange={setPromptTokens} />
            <NumberField label="Clients per model" value={streams} min={1} onChange={setStreams} />
            <NumberField label="Seconds of load" value={seconds} min={1} onChange={setSeconds} />
            <button type="button" className="button primary" onClick={start}>
              Check GPU sharing
            </button>
          </div>
        )}
        {ended && (
          <p className="small" role="status">
            {ended}
          </p>
        )}
        {error && (
          <p className="failure small" role="alert">
            {error}
          </p>
        )}
        {reports.length > 0 && (
          <ul className="sharing-reports" aria-label="Kept reports">
            {reports.map((r) => (
              <li key={r.id}>
                <button type="button" data-testid="sharing-report-row" aria-pressed={shown?.id === r.id} onClick={() => void show(r.id)}>
                  {formatDateTime(r.startedAt)} · {r.models.join(' + ')}
                  {r.simulated ? ' · simulated' : ''}
                  {r.decodeRatio !== null ? ` · B at ${Math.round(r.decodeRatio * 100)} % of solo during A's prefill` : ''}
                </button>
              </li>
            ))}
          </ul>
        )}
        {list && reports.length === 0 && !running && <p className="muted small">No reports yet.</p>}
        {shown?.result && <SharingReportView result={shown.result} markdown={shown.markdown} />}
      </div>
    </section>
  );
}
