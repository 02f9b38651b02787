/**
 * The Requests view: the request log (local and through exobar to exo), newest first,
 * filterable by model, source and outcome, sortable by any column; a row opens that
 * request's timeline (its TTFT parts); export as CSV or as a markdown table. Read from
 * `/api/requests` (or IPC) while open, every 5 s and whenever a request ends. Below it,
 * the models' loads and unloads the log keeps beside the requests. Collapsed by
 * default; its heading's count follows the log while collapsed too (read again, one
 * record only, whenever the snapshot says a request ended or a model came or went).
 */
import { formatClock, formatDay } from '../../../../shared/time-words';
import { stringify } from 'csv-stringify/browser/esm/sync';
import { plural } from '../../../../shared/status-words';
import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { REQUEST_RECORD_COLUMNS, type RequestList, type RequestRecord } from '../../../../shared/request-record';
import type { Snapshot } from '../../../../shared/snapshot';
import { useActions, useExobar } from '../../store/store-context';
import { PanelToggle } from '../common/panel-toggle';
import { ModelEventsList } from './model-events-list';

type SortKey = 'at' | 'model' | 'source' | 'outcome' | 'ttftMs' | 'prefillTokensPerSecond' | 'decodeTokensPerSecond' | 'itlP95Ms' | 'outputTokens';
/** `wide`: a column only a window wider than the popover shows (app.css); the filters and the row's timeline say it there. */
const COLUMNS: Array<{ key: SortKey; label: string; wide?: boolean }> = [
  { key: 'at', label: 'Time' },
  { key: 'model', label: 'Model' },
  { key: 'source', label: 'Source', wide: true },
  { key: 'outcome', label: 'Outcome' },
  { key: 'ttftMs', label: 'TTFT' },
  { key: 'prefillTokensPerSecond', label: 'Prefill tok/s', wide: true },
  { key: 'decodeTokensPerSecond', label: 'Decode tok/s' },
  { key: 'itlP95Ms', label: 'ITL p95' },
  { key: 'outputTokens', label: 'Out tok', wide: true },
];
const wideOnly = (key: SortKey): string | undefined => (COLUMNS.find((c) => c.key === key)?.wide ? 'wide-only' : undefined);

const ms = (v: number | null) => (v == null ? '—' : v >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${Math.round(v)} ms`);
const rate = (v: number | null) => (v == null ? '—' : v >= 100 ? String(Math.round(v)) : v.toFixed(1));
// One date format on the page (shared/time-words.ts): the rows' 24-hour time, after the day as 2026-12-03.
const time = formatClock;
const day = formatDay;
const outcomeWords = (r: RequestRecord) =>
  r.outcome === 'failed'
    ? `failed (${r.errorCode})`
    : r.outcome === 'cancelled'
      ? `cancelled${r.cancelledBy ? ` (${r.cancelledBy.replace('_', ' ')})` : ''}`
      : 'done';

function compare(a: RequestRecord, b: RequestRecord, key: SortKey): number {
  const x = a[key];
  const y = b[key];
  if (x == null) return y == null ? 0 : 1;
  if (y == null) return -1;
  return typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
}

/** The rows as a markdown table (the columns the view shows). */
export function requestsMarkdown(rows: RequestRecord[]): string {
  const header = `| ${COLUMNS.map((c) => c.label).join(' | ')} |`;
  const rule = `|${COLUMNS.map(() => '---').join('|')}|`;
  const cells = (r: RequestRecord) =>
    [
      new Date(r.at).toISOString(),
      r.model,
      r.source,
      outcomeWords(r),
      ms(r.ttftMs),
      rate(r.prefillTokensPerSecond),
      rate(r.decodeTokensPerSecond),
      ms(r.itlP95Ms),
      String(r.outputTokens),
    ]
      .map((c) => c.replace(/\|/g, '\\|'))
      .join(' | ');
  return [header, rule, ...rows.map((r) => `| ${cells(r)} |`)].join('\n') + '\n';
}

/** The rows as CSV, every field of the log. */
export function requestsCsv(rows: RequestRecord[]): string {
  return stringify(
    rows.map((r) => REQUEST_RECORD_COLUMNS.map((c) => r[c] ?? '')),
    { header: true, columns: REQUEST_RECORD_COLUMNS as string[] },
  );
}

function download(text: string, fileName: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** One request's timeline: its TTFT parts as a bar, then decode. */
function RequestTimeline({ r }: { r: RequestRecord }) {
  const total = Math.max(1, (r.endedAt ?? r.at) - r.at);
  const parts = [
    { label: 'load', v: r.loadMs, cls: 'load' },
    { label: 'wait', v: r.waitMs, cls: 'wait' },
    { label: 'waiting in the runner', v: r.runnerWaitMs, cls: 'runner-wait' },
    { label: 'prefill', v: r.prefillMs, cls: 'prefill' },
    { label: 'first token', v: r.firstTokenMs, cls: 'first' },
  ];
  const decodeMs = r.ttftMs == null ? null : Math.max(0, total - r.ttftMs);
  return (
    <div className="request-timeline" data-testid="request-timeline">
      <div className="timeline-bar" aria-hidden="true">
        {parts.map((p) => (p.v ? <span key={p.label} className={`seg ${p.cls}`} style={{ width: `${(p.v / total) * 100}%` }} /> : null))}
        {decodeMs ? <span className="seg decode" style={{ width: `${(decodeMs / total) * 100}%` }} /> : null}
      </div>
      <p className="small">
        {r.id} · {r.source} · {r.instance ?? 'instance unknown'} on {r.node ?? 'unknown Mac'} ·{' '}
        <span title="The client program, as its User-Agent header named it">{r.client ? `sent by “${r.client}”` : 'sent by a client that gave no name'}</span>
      </p>
      <p className="small">
        arrived {day(r.at)} {time(r.at)} · {r.loadMs == null ? '' : `model load ${ms(r.loadMs)} · `}wait {ms(r.waitMs)} ·{' '}
        {r.runnerWaitMs ? `waiting in the runner ${ms(r.runnerWaitMs)} · ` : ''}prefill {ms(r.prefillMs)} (
        {plural(r.promptTokens, 'token')}
        {r.cachedTokens == null ? '' : `, ${r.cachedTokens} cached`}
        {r.prefillTokensPerSecond == null ? '' : `, ${rate(r.prefillTokensPerSecond)} tok/s`}) · first token {ms(r.firstTokenMs)} · decode {decodeMs == null ? '—' : ms(decodeMs)} (
        {plural(r.outputTokens, 'token')}) · ended {ms(total)} after arrival, {outcomeWords(r)}
      </p>
    </div>
  );
}

/**
 * A number that changes whenever the log gains a record: requests ended (local counters,
 * exo's ended tasks) and models loaded or unloaded (the instances present).
 */
export function logActivity(snapshot: Snapshot): string {
  let ended = 0;
  for (const i of snapshot.instances) {
    if (i.source === 'local') ended += i.counters.completed + i.counters.failed + i.counters.cancelled + i.counters.rejected;
    else ended += i.exo.endedTasks;
  }
  return `${ended}:${snapshot.instances.map((i) => i.id).join(',')}`;
}

/** Reads of the log at most once a second, however fast requests end (the last change is always read). */
const MIN_READ_GAP_MS = 1_000;

export function RequestsPanel() {
  const { listRequests } = useActions();
  const [open, setOpen] = useState(false);
  const bodyId = useId();
  const [list, setList] = useState<RequestList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [model, setModel] = useState('');
  const [source, setSource] = useState('');
  const [outcome, setOutcome] = useState('');
  const [sort, setSort] = useState<{ key: SortKey; desc: boolean }>({ key: 'at', desc: true });
  const [selected, setSelected] = useState<string | null>(null);

  const activity = useExobar((s) => logActivity(s.snapshot));
  const [total, setTotal] = useState<number | null>(null);
  const lastRead = useRef(0);

  // Open: the rows (and the total), every 5 s and after each change the snapshot shows.
  // Collapsed: the total only (one record read), after each change and every 15 s.
  useEffect(() => {
    let live = true;
    const load = () => {
      lastRead.current = Date.now();
      return listRequests({ limit: open ? 1000 : 1 }).then(
        (got) => {
          if (!live) return;
          setTotal(got.total);
          if (open) setList(got);
          setError(null);
        },
        (e: unknown) => live && open && setError(e instanceof Error ? e.message : String(e)),
      );
    };
    const soon = setTimeout(() => void load(), Math.max(0, lastRead.current + MIN_READ_GAP_MS - Date.now()));
    // A slow read too: a record exo's side writes after the snapshot that counted its task.
    const timer = setInterval(() => void load(), open ? 5_000 : 15_000);
    return () => {
      live = false;
      clearTimeout(soon);
      clearInterval(timer);
    };
  }, [open, listRequests, activity]);

  const all = useMemo(() => list?.requests ?? [], [list]);
  const models = useMemo(() => [...new Set(all.map((r) => r.model))].sort(), [all]);
  const rows = useMemo(() => {
    const kept = all.filter((r) => (!model || r.model === model) && (!source || r.source === source) && (!outcome || r.outcome === outcome));
    return kept.sort((a, b) => (sort.desc ? -1 : 1) * compare(a, b, sort.key));
  }, [all, model, source, outcome, sort]);

  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`;
  return (
    <section className="panel requests-panel" aria-label="Requests">
      <PanelToggle open={open} onToggle={() => setOpen((o) => !o)} bodyId={bodyId}>
        <span>Requests</span>
        <span className="spacer" />
        {total !== null && (
          <span className="muted small" data-testid="requests-logged">
            {total} logged
          </span>
        )}
      </PanelToggle>
      <div id={bodyId} className="panel-body" hidden={!open}>
        {error && (
          <p className="failure small" role="alert">
            Could not read the request log: {error}
          </p>
        )}
        {list?.problem && (
          <p className="warning small" role="alert">
            {list.problem}
          </p>
        )}
        <div className="requests-filters">
          <select aria-label="Model" value={model} onChange={(e) => setModel(e.target.value)}>
            <option value="">All models</option>
            {models.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
          <select aria-label="Source" value={source} onChange={(e) => setSource(e.target.value)}>
            <option value="">Local and exo</option>
            <option value="local">Local</option>
            <option value="exo">exo</option>
          </select>
          <select aria-label="Outcome" value={outcome} onChange={(e) => setOutcome(e.target.value)}>
            <option value="">Any outcome</option>
            <option value="done">Done</option>
            <option value="cancelled">Cancelled</option>
            <option value="failed">Failed</option>
          </select>
          <span className="spacer" />
          <button type="button" onClick={() => download(requestsCsv(rows), 'exobar-requests.csv', 'text/csv')} disabled={rows.length === 0}>
            Export CSV
          </button>
          <button type="button" onClick={() => download(requestsMarkdown(rows), 'exobar-requests.md', 'text/markdown')} disabled={rows.length === 0}>
            Export markdown
          </button>
        </div>
        <div className="requests-table-wrap">
          <table className="requests-table" data-testid="requests-table">
            <thead>
              <tr>
                {COLUMNS.map((c) => (
                  <th key={c.key} className={`col-${c.key}${c.wide ? ' wide-only' : ''}`} aria-sort={sort.key === c.key ? (sort.desc ? 'descending' : 'ascending') : 'none'}>
                    <button type="button" onClick={() => setSort((s) => ({ key: c.key, desc: s.key === c.key ? !s.desc : c.key === 'at' }))}>
                      {c.label}
                      {sort.key === c.key ? (sort.desc ? ' ▾' : ' ▴') : ''}
                    </button>
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <RequestRow key={r.id} r={r} open={selected === r.id} onToggle={() => setSelected((s) => (s === r.id ? null : r.id))} />
              ))}
            </tbody>
          </table>
          {list && rows.length === 0 && <p className="muted small">No requests {all.length > 0 ? 'match these filters' : 'logged yet'}.</p>}
        </div>
        {list && <ModelEventsList events={list.events} model={model} />}
        {list && (
          <p className="muted small" data-testid="requests-disk">
            {plural(list.total, 'request')} kept (the last 10,000) · {mib(list.diskBytes)} of {mib(list.diskCapBytes)} on disk
          </p>
        )}
      </div>
    </section>
  );
}

function RequestRow({ r, open, onToggle }: { r: RequestRecord; open: boolean; onToggle: () => void }) {
  return (
    <>
      <tr className={`request-row ${r.outcome}`} onClick={onToggle} aria-expanded={open} data-testid="request-row">
        <td>{time(r.at)}</td>
        <td className="wraps">{r.model}</td>
        <td className={wideOnly('source')}>{r.source}</td>
        <td className="wraps">{outcomeWords(r)}</td>
        <td>{ms(r.ttftMs)}</td>
        <td className={wideOnly('prefillTokensPerSecond')}>{rate(r.prefillTokensPerSecond)}</td>
        <td>{rate(r.decodeTokensPerSecond)}</td>
        <td>{ms(r.itlP95Ms)}</td>
        <td className={wideOnly('outputTokens')}>{r.outputTokens}</td>
      </tr>
      {open && (
        <tr className="request-detail">
          <td colSpan={COLUMNS.length}>
            <RequestTimeline r={r} />
          </td>
        </tr>
      )}
    </>
  );
}
