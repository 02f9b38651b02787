/**
 * A process known by pid AND start time, so a stop never hits a process that merely
 * reuses a pid exo's runner once had. The start time comes from /proc/<pid>/stat on
 * Linux (field 22, clock ticks since boot) and `ps -o lstart=` on macOS; both are
 * compared as opaque strings, only ever with values read the same way.
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface ProcessIdentity {
  pid: number;
  startTime: string;
}

interface ProcInfo {
  ppid: number;
  startTime: string;
  zombie: boolean;
}

/** Parses one /proc/<pid>/stat line (the name in parentheses may hold spaces and parentheses). */
export function parseProcStat(text: string): ProcInfo | null {
  const close = text.lastIndexOf(')');
  if (close === -1) return null;
  const fields = text.slice(close + 2).trim().split(/\s+/);
  // fields[0] is field 3 (state), fields[1] field 4 (ppid), fields[19] field 22 (starttime).
  const ppid = Number(fields[1]);
  const startTime = fields[19];
  if (!Number.isInteger(ppid) || startTime === undefined) return null;
  return { ppid, startTime, zombie: fields[0] === 'Z' || fields[0] === 'X' };
}

async function procInfo(pid: number): Promise<ProcInfo | null> {
  try {
    return parseProcStat(await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

const hasProc = process.platform === 'linux';

/**
 * The start time of a live process, or null when there is none (or only a zombie: it
 * has exited, and holds no GPU memory, only its exit status).
 */
export async function processStartTime(pid: number): Promise<string | null> {
  if (hasProc) {
    const info = await procInfo(pid);
    return info && !info.zombie ? info.startTime : null;
  }
  try {
    const { stdout } = await run('ps', ['-o', 'stat=,lstart=', '-p', String(pid)]);
    const line = stdout.trim();
    if (line === '' || line.startsWith('Z')) return null;
    return line.replace(/^\S+\s+/, '');
  } catch {
    return null; // ps exits 1 when no such process exists.
  }
}

/** Every live descendant of `rootPid` (children, grandchildren, ...), with start times. */
export async function descendants(rootPid: number): Promise<ProcessIdentity[]> {
  const table: Array<{ pid: number; ppid: number; startTime: string }> = [];
  if (hasProc) {
    const entries = await readdir('/proc').catch(() => [] as string[]);
    await Promise.all(
      entries
        .filter((e) => /^\d+$/.test(e))
        .map(async (e) => {
          const info = await procInfo(Number(e));
          if (info && !info.zombie) table.push({ pid: Number(e), ppid: info.ppid, startTime: info.startTime });
        }),
    );
  } else {
    const { stdout } = await run('ps', ['-A', '-o', 'pid=,ppid=,stat=,lstart=']).catch(() => ({ stdout: '' }));
    for (const line of stdout.split('\n')) {
      const match = /^\s*(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
      if (match && !match[3]!.startsWith('Z')) table.push({ pid: Number(match[1]), ppid: Number(match[2]), startTime: match[4]! });
    }
  }
  const found: ProcessIdentity[] = [];
  const frontier = [rootPid];
  const seen = new Set(frontier);
  while (frontier.length > 0) {
    const parent = frontier.shift()!;
    for (const row of table) {
      if (row.ppid !== parent || seen.has(row.pid)) continue;
      seen.add(row.pid);
      found.push({ pid: row.pid, startTime: row.startTime });
      frontier.push(row.pid);
    }
  }
  return found;
}

/** True when the process named by `identity` still runs: same pid, same start time. */
export async function stillRunning(identity: ProcessIdentity): Promise<boolean> {
  return (await processStartTime(identity.pid)) === identity.startTime;
}

/** Sends a signal; false when the process is already gone. */
export function sendSignal(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}
