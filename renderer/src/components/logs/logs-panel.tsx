/**
 * The log view: pick a log (each model's runner, exobar's own, exo's when exobar runs
 * it), its last lines first, then every new line live; pause, a level filter, search,
 * copy. The page keeps the last LOG_KEPT_LINES lines and draws at most LOG_SHOWN_LINES
 * of those that match, and lines that arrive together are drawn together (at most
 * every FLUSH_MS), so a log writing thousands of lines a second leaves the page
 * responsive. Collapsed by default; a card's Log button and the tray's Open log open it
 * at that model's log.
 */
import { plural } from '../../../../shared/status-words';
import { useCallback, useEffect, useId, useMemo, useRef, useState, type ReactNode } from 'react';
import { LOG_LEVELS, type LogSourceInfo } from '../../../../shared/logs';
import { copyText } from '../../lib/clipboard';
import { filterLines, LogBuffer, type LevelFilter, type LogLine } from '../../lib/log-lines';
import { useActions, useExobar } from '../../store/store-context';
import { PanelToggle } from '../common/panel-toggle';

/** Lines asked for when a log opens. */
export const LOG_FIRST_LINES = 500;
/** The most lines in the page at once (the newest that match). */
export const LOG_SHOWN_LINES = 1_000;
/** Lines arriving within this are drawn in one update. */
const FLUSH_MS = 100;
/** How often the list of logs is read again while the view is open (a new model's log appears). */
const SOURCES_MS = 5_000;

const LEVEL_WORDS: Record<LevelFilter, string> = {
  all: 'All lines',
  trace: 'Trace and above',
  debug: 'Debug and above',
  info: 'Info and above',
  warn: 'Warnings and errors',
  error: 'Errors only',
  fatal: 'Fatal only',
};

/** The view's default: the log asked for, else the first model's runner log, else exobar's own. */
function pickSource(sources: LogSourceInfo[], asked: string | null): string | null {
  if (asked && sources.some((s) => s.id === asked)) return asked;
  return (sources.find((s) => s.kind === 'runner' && !s.id.endsWith(':stdout')) ?? sources.find((s) => s.kind === 'exobar') ?? sources[0])?.id ?? null;
}

function Highlighted({ text, search }: { text: string; search: string }) {
  const needle = search.trim().toLowerCase();
  if (!needle) return <>{text}</>;
  const parts: ReactNode[] = [];
  const lower = text.toLowerCase();
  let at = 0;
  for (let i = lower.indexOf(needle); i !== -1; i = lower.indexOf(needle, at)) {
    if (i > at) parts.push(text.slice(at, i));
    parts.push(<mark key={i}>{text.slice(i, i + needle.length)}</mark>);
    at = i + needle.length;
  }
  parts.push(text.slice(at));
  return <>{parts}</>;
}

/** One followed log: its own buffer, so choosing another log (or following again) starts afresh. */
function LogStream({ source, level, search, onFollowAgain }: { source: string; level: LevelFilter; search: string; onFollowAgain: () => void }) {
  const { followLog } = useActions();
  const view = useRef<HTMLPreElement>(null);
  const buffer = useRef(new LogBuffer());
  const pausedRef = useRef(false);
  const atBottom = useRef(true);
  const [lines, setLines] = useState<LogLine[]>([]);
  const [received, setReceived] = useState(0);
  const [ended, setEnded] = useState<string | null>(null);
  const [paused, setPaused] = useState(false);
  // Said only while the filter it was copied under holds.
  const [copied, setCopied] = useState<{ words: string; under: string } | null>(null);
  const filterKey = `${level}|${search}`;

  useEffect(() => {
    const kept = buffer.current;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const flush = () => {
      timer = null;
      setReceived(kept.received);
      if (!pausedRef.current) setLines(kept.all());
    };
    const stop = followLog(source, LOG_FIRST_LINES, (event) => {
      if (event.kind === 'ended') setEnded(event.message);
      else if (event.kind === 'lines') {
        kept.append(event.lines);
        timer ??= setTimeout(flush, FLUSH_MS);
      }
    });
    return () => {
      stop();
      if (timer) clearTimeout(timer);
    };
  }, [source, followLog]);

  const togglePause = useCallback(() => {
    pausedRef.current = !pausedRef.current;
    setPaused(pausedRef.current);
    if (!pausedRef.current) {
      atBottom.current = true;
      setLines(buffer.current.all());
    }
  }, []);

  const matching = useMemo(() => filterLines(lines, level, search), [lines, level, search]);
  const shown = matching.length > LOG_SHOWN_LINES ? matching.slice(-LOG_SHOWN_LINES) : matching;
  const waiting = received - (lines.at(-1)?.seq ?? -1) - 1;

  // Stay at the newest line unless the operator scrolled up to read.
  useEffect(() => {
    const el = view.current;
    if (el && atBottom.current) el.scrollTop = el.scrollHeight;
  }, [shown]);

  const copy = async () => {
    const text = matching.map((l) => l.raw).join('\n');
    try {
      await copyText(`${text}\n`);
      setCopied({ words: `Copied ${matching.length} ${matching.length === 1 ? 'line' : 'lines'}`, under: filterKey });
    } catch (e) {
      setCopied({ words: e instanceof Error ? e.message : String(e), under: filterKey });
    }
  };

  return (
    <>
      <div className="logs-controls">
        <p className="small muted logs-status" data-testid="logs-status" aria-live="polite">
          {ended ? (
            <span className="failure">Stopped: {ended}</span>
          ) : paused ? (
            `Paused${waiting > 0 ? `: ${waiting} new ${waiting === 1 ? 'line' : 'lines'} waiting` : ''}`
          ) : (
            'Following live'
          )}
          {matching.length > shown.length && ` · showing the newest ${shown.length} of ${matching.length} matching lines`}
          {(level !== 'all' || search.trim()) && matching.length <= shown.length && ` · ${matching.length} of ${plural(lines.length, 'line')} ${matching.length === 1 ? 'matches' : 'match'}`}
          {copied?.under === filterKey && ` · ${copied.words}`}
        </p>
        <span className="spacer" />
        {ended && (
          <button type="button" onClick={onFollowAgain}>
            Follow again
          </button>
        )}
        <button type="button" aria-pressed={paused} onClick={togglePause}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <button type="button" onClick={() => void copy()} disabled={matching.length === 0}>
          Copy
        </button>
      </div>
      <pre
        className="logs-view"
        data-testid="logs-view"
        ref={view}
        tabIndex={0}
        aria-label="Log lines"
        onScroll={(e) => {
          const el = e.currentTarget;
          atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 24;
        }}
      >
        {shown.map((l) => (
          <div key={l.seq} className={`log-line${l.level ? ` level-${l.level}` : ''}`} data-seq={l.seq}>
            <Highlighted text={l.text} search={search} />
          </div>
        ))}
      </pre>
    </>
  );
}

export function LogsPanel() {
  const { listLogSources } = useActions();
  const asked = useExobar((s) => s.logView);
  const [open, setOpen] = useState(false);
  const bodyId = useId();
  const panel = useRef<HTMLElement>(null);
  const [sources, setSources] = useState<LogSourceInfo[]>([]);
  const [sourcesError, setSourcesError] = useState<string | null>(null);
  const [source, setSource] = useState<string | null>(null);
  const [level, setLevel] = useState<LevelFilter>('all');
  const [search, setSearch] = useState('');
  const [follow, setFollow] = useState(0);
  const [seenRequest, setSeenRequest] = useState(0);

  // A card's Log button or the tray's Open log: open here, at that log (set while rendering, as React advises for state from props).
  if (asked.request !== seenRequest) {
    setSeenRequest(asked.request);
    setOpen(true);
    if (asked.source) setSource(asked.source);
  }
  useEffect(() => {
    if (asked.request > 0) panel.current?.scrollIntoView?.({ block: 'start' });
  }, [asked.request]);

  useEffect(() => {
    if (!open) return;
    let live = true;
    const load = () =>
      listLogSources().then(
        (got) => {
          if (!live) return;
          setSources(got.sources);
          setSourcesError(null);
          setSource((current) => (current && got.sources.some((s) => s.id === current) ? current : pickSource(got.sources, current)));
        },
        (e: unknown) => live && setSourcesError(e instanceof Error ? e.message : String(e)),
      );
    void load();
    const timer = setInterval(() => void load(), SOURCES_MS);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [open, listLogSources]);

  const title = sources.find((s) => s.id === source)?.title;
  return (
    <section className="panel logs-panel" aria-label="Logs" ref={panel} data-testid="logs-panel">
      <PanelToggle open={open} onToggle={() => setOpen((o) => !o)} bodyId={bodyId}>
        <span>Logs</span>
        <span className="spacer" />
        {open && title && <span className="muted small ellipsis">{title}</span>}
      </PanelToggle>
      <div id={bodyId} className="panel-body" hidden={!open}>
        {sourcesError && (
          <p className="failure small" role="alert">
            Could not list the logs: {sourcesError}
          </p>
        )}
        <div className="logs-controls">
          <select aria-label="Log" value={source ?? ''} onChange={(e) => setSource(e.target.value || null)}>
            {sources.length === 0 && <option value="">No logs yet</option>}
            {sources.map((s) => (
              <option key={s.id} value={s.id}>
                {s.title}
              </option>
            ))}
          </select>
          <select aria-label="Level" value={level} onChange={(e) => setLevel(e.target.value as LevelFilter)}>
            {(['all', ...LOG_LEVELS] as const).map((l) => (
              <option key={l} value={l}>
                {LEVEL_WORDS[l]}
              </option>
            ))}
          </select>
          <input type="search" aria-label="Search the log" placeholder="Search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </div>
        {open && source ? (
          <LogStream key={`${source}#${follow}`} source={source} level={level} search={search} onFollowAgain={() => setFollow((n) => n + 1)} />
        ) : (
          <p className="small muted" data-testid="logs-status">
            {open ? 'No log to follow yet: a model started here writes one.' : ''}
          </p>
        )}
      </div>
    </section>
  );
}
