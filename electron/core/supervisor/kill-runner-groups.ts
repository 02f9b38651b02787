/**
 * The last resort when a clean stop hangs or the operator insists: SIGKILL every runner's
 * process group. Runners lead their own groups (spawned detached), so this also reaches
 * anything a runner started. Used by `exobar serve` and by the app's quit.
 */

/**
 * SIGKILLs the process group of each pid (the pid itself when it leads no group);
 * returns how many were signalled. Errors mean already gone. Pass live pids
 * (`ExobarNode.runnerPids()`), never ones read from an old snapshot: a pid from
 * before a restart may belong to another process by now.
 */
export function killRunnerGroups(pids: readonly number[], kill: (pid: number, signal: NodeJS.Signals) => void = process.kill): number {
  let killed = 0;
  for (const pid of pids) {
    try {
      kill(-pid, 'SIGKILL');
      killed++;
    } catch {
      try {
        kill(pid, 'SIGKILL');
        killed++;
      } catch {
        // already gone
      }
    }
  }
  return killed;
}
