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
  /** Process group id. */
  pgid: number;
  startTime: string;
  zombie: boolean;
}

/** Parses one /proc/<pid>/stat line (the name in parentheses may hold spaces and parentheses). */
export function parseProcStat(text: string): ProcInfo | null {
  const close = text.lastIndexOf(')');
  if (close === -1) return null;
  const fields = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  // fields[0] is field 3 (state), [1] field 4 (ppid), [2] field 5 (pgrp), [19] field 22 (starttime).
  const ppid = Number(fields[1]);
  const pgid = Number(fields[2]);
  const startTime = fields[19];
  if (!Number.isInteger(ppid) || !Number.isInteger(pgid) || startTime === undefined) return null;
  return { ppid, pgid, startTime, zombie: fields[0] === 'Z' || fields[0] === 'X' };
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

export type ProcessRow = ProcessIdentity & { ppid: number; pgid: number };

/** Every live (non-zombie) process of this user's view of the system. */
async function processTable(): Promise<ProcessRow[]> {
  const table: ProcessRow[] = [];
  if (hasProc) {
    const entries = await readdir('/proc').catch(() => [] as string[]);
    await Promise.all(
      entries
        .filter((e) => /^\d+$/.test(e))
        .map(async (e) => {
          const info = await procInfo(Number(e));
          if (info && !info.zombie) table.push({ pid: Number(e), ppid: info.ppid, pgid: info.pgid, startTime: info.startTime });
        }),
    );
    return table;
  }
  const { stdout } = await run('ps', ['-A', '-o', 'pid=,ppid=,pgid=,stat=,lstart=']).catch(() => ({ stdout: '' }));
  return parsePsTable(stdout);
}

/** Parses `ps -A -o pid=,ppid=,pgid=,stat=,lstart=` (macOS), zombies left out. */
export function parsePsTable(stdout: string): ProcessRow[] {
  const table: ProcessRow[] = [];
  for (const line of stdout.split('\n')) {
    const match = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(.+?)\s*$/.exec(line);
    if (match && !match[4]!.startsWith('Z')) table.push({ pid: Number(match[1]), ppid: Number(match[2]), pgid: Number(match[3]), startTime: match[5]! });
  }
  return table;
}

/** Every live descendant of `rootPid` (children, grandchildren, ...), with start times. */
export async function descendants(rootPid: number): Promise<ProcessIdentity[]> {
  const table = await processTable();
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

/**
 * The members of process group `pgid` other than its leader. exobar starts exo as a
 * group leader, and exo's runners stay in its group even when orphaned, so this finds
 * a runner spawned between two recordings. The kernel never hands out a pid that is
 * still some group's id, so while members remain the group is exo's.
 */
export async function groupMembers(pgid: number): Promise<ProcessIdentity[]> {
  return (await processTable()).filter((row) => row.pgid === pgid && row.pid !== pgid).map((row) => ({ pid: row.pid, startTime: row.startTime }));
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
