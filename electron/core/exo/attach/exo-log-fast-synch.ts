/**
 * This Mac's effective fast-synch value, read from exo's own log: exo does not publish
 * it in its State. exo logs "FAST_SYNCH forced ON|OFF" at start when a flag forces it
 * (exo 0.3.70, src/exo/main.py) and "Fast synch flag: 0|1" for every runner it spawns
 * (src/exo/worker/runner/bootstrap.py; docs/exo.md "exo source this code follows"). The most recent start wins: lines before
 * the last "Starting EXO" belong to an earlier run; within a run the last line wins.
 */
import { exoLogPath } from '../../exo-process/exo-home';
import { readLastBytes } from '../../diagnostics/log-tails';

/** exo's log on this machine, where exo keeps it for this environment (exo-home.ts; rotated once per start). */
export function defaultExoLogPath(env: NodeJS.ProcessEnv = process.env): string {
  return exoLogPath(env);
}

export interface ExoLogFastSynch {
  enabled: boolean;
  /** The log line it was read from. */
  line: string;
}

const START = /Starting EXO/;
const FORCED = /FAST_SYNCH forced (ON|OFF)/;
const RUNNER_FLAG = /Fast synch flag: ([01])/;

/** Reads the value from log text; null when this run's log says nothing about it. */
export function fastSynchFromLog(text: string): ExoLogFastSynch | null {
  const lines = text.split('\n');
  let start = 0;
  for (let i = lines.length - 1; i >= 0; i--) {
    if (START.test(lines[i]!)) {
      start = i;
      break;
    }
  }
  for (let i = lines.length - 1; i >= start; i--) {
    const line = lines[i]!;
    const forced = FORCED.exec(line);
    if (forced) return { enabled: forced[1] === 'ON', line: line.trim() };
    const flag = RUNNER_FLAG.exec(line);
    if (flag) return { enabled: flag[1] === '1', line: line.trim() };
  }
  return null;
}

/** Reads the last `maxBytes` of exo's log; null when there is no log or it says nothing. */
export async function readExoLogFastSynch(path = defaultExoLogPath(), maxBytes = 4 * 1024 * 1024): Promise<ExoLogFastSynch | null> {
  const tail = await readLastBytes(path, maxBytes);
  return tail ? fastSynchFromLog(tail.data.toString('utf8')) : null;
}
