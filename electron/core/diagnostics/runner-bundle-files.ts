/**
 * The bundle's runners/<id>/ folders: for each runner the node knows, that its events
 * name or whose logs are on disk, its exit.json (state, exits, restarts, transitions)
 * and its stdout and stderr tails, redacted and sharing the bytes the rest of the
 * bundle left, each within its own cap.
 */
import { localInstances } from '../../../shared/instance-state';
import type { Snapshot } from '../../../shared/snapshot';
import type { NodeEvent } from '../node/node-types';
import { instanceIdOf, isEventOf } from '../events/node-event';
import { jsonBytes, type BundleFile, type BundleLimits, type DiagnosticContext, type TruncatedFile } from './bundle-context';
import { capMemoryTail, listLogDirs, readLogFileTail, runnerLogDir, safeSegment, truncationMarker, type LogTail } from './log-tails';
import type { Redactor } from './redaction';

/** Which runners get a runners/<id>/ folder: the node's instances, those in events, then log folders on disk. */
async function runnerIds(ctx: DiagnosticContext, snapshot: Snapshot | null, events: readonly NodeEvent[], limits: BundleLimits): Promise<string[]> {
  const ids: string[] = [];
  const add = (id: string) => {
    if (!ids.includes(id)) ids.push(id);
  };
  for (const instance of snapshot?.instances ?? []) add(instance.id);
  for (let i = events.length - 1; i >= 0; i--) {
    const id = instanceIdOf(events[i]!);
    if (id) add(id);
  }
  if (ctx.dataDir) for (const id of await listLogDirs(ctx.dataDir)) add(id);
  return ids.slice(0, limits.maxRunners);
}

/** exit.json: what is known of a runner's status and deaths. */
function exitReport(id: string, snapshot: Snapshot | null, events: readonly NodeEvent[]): unknown {
  const instance = (snapshot ? localInstances(snapshot) : []).find((i) => i.id === id) ?? null;
  const mine = events.filter((e) => instanceIdOf(e) === id);
  const pick = (kind: 'runner_exited' | 'watchdog_fired' | 'runner_restart_scheduled' | 'runner_spawned' | 'runner_state' | 'runner_state_refused') =>
    mine.filter(isEventOf(kind)).map((e) => ({ t: e.t, ...e.data }));
  return {
    instanceId: id,
    model: instance?.model ?? null,
    current: instance !== null,
    state: instance?.runner.state ?? null,
    attention: instance?.runner.attention ?? null,
    status: instance?.runner.status ?? null,
    pid: instance?.runner.pid ?? null,
    restarts: instance?.runner.restarts ?? null,
    malformedLines: instance?.runner.malformedLines ?? null,
    /** The last exit: its cause (crash, stuck, startup_failed, stopped), code or signal, and the message (the runner's own when it gave one). */
    lastExit: instance?.runner.lastExit ?? null,
    exits: pick('runner_exited'),
    watchdog: pick('watchdog_fired'),
    restartsScheduled: pick('runner_restart_scheduled'),
    spawned: pick('runner_spawned'),
    /** Every transition of the runner's state, with its reason. */
    transitions: pick('runner_state'),
    /** Transitions the supervisor's table refused: a supervisor bug whenever this is not empty. */
    refusedTransitions: pick('runner_state_refused'),
  };
}

async function logTail(ctx: DiagnosticContext, id: string, stream: 'stdout' | 'stderr', capBytes: number): Promise<LogTail> {
  const memory = ctx.node?.runnerLogs(id) ?? null;
  if (memory) return capMemoryTail(memory[stream], capBytes);
  if (ctx.dataDir) return readLogFileTail(runnerLogDir(ctx.dataDir, id), stream, capBytes);
  return { text: '', sourceBytes: 0, omittedBytes: 0, source: 'none' };
}

export interface RunnerBundleInput {
  snapshot: Snapshot | null;
  events: readonly NodeEvent[];
  limits: BundleLimits;
  redactor: Redactor;
  /** What the rest of the bundle left for the runners' folders. */
  budgetBytes: number;
}

/** Every runner's folder, and the logs cut to fit. */
export async function runnerBundleFiles(ctx: DiagnosticContext, input: RunnerBundleInput): Promise<{ files: BundleFile[]; truncated: TruncatedFile[] }> {
  const { snapshot, events, limits, redactor: r } = input;
  const files: BundleFile[] = [];
  const truncated: TruncatedFile[] = [];
  const ids = await runnerIds(ctx, snapshot, events, limits);
  const exitReports = ids.map((id) => ({ id, data: jsonBytes(r.value(exitReport(id, snapshot, events))) }));
  const exitBytes = exitReports.reduce((sum, e) => sum + e.data.length, 0);
  const logBudget = Math.max(0, input.budgetBytes - exitBytes);
  const perLog = ids.length > 0 ? Math.min(limits.maxLogBytesPerFile, Math.floor(logBudget / (ids.length * 2))) : 0;
  // Each runner's logs are read and redacted one runner at a time: the work is CPU-bound regexes.
  for (const { id, data } of exitReports) {
    const dir = `runners/${safeSegment(id)}`;
    for (const stream of ['stdout', 'stderr'] as const) {
      const tail = await logTail(ctx, id, stream, perLog);
      let text = r.text(tail.text);
      // Redaction may lengthen a line; cut again rather than exceed the cap.
      let omitted = tail.omittedBytes;
      if (Buffer.byteLength(text) > perLog) {
        const again = capMemoryTail(text, perLog);
        omitted += again.omittedBytes;
        text = again.text;
      }
      if (omitted > 0) {
        text = truncationMarker(omitted) + text;
        truncated.push({ name: `${dir}/${stream}.log`, omitted: `the first ${omitted} bytes` });
      }
      files.push({ name: `${dir}/${stream}.log`, data: Buffer.from(text, 'utf8') });
    }
    files.push({ name: `${dir}/exit.json`, data });
  }
  return { files, truncated };
}
