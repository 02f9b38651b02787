/**
 * The status of the exo exobar runs on this Mac, as a table of allowed transitions for
 * the process kit's one-writer machine: the manager's `update()` moves the status only
 * through it, so a status change the table does not allow is refused, counted and
 * recorded instead of being shown.
 */
import type { ExoProcessStatus } from '../../../shared/exo-process';
import type { TransitionTable } from '../process/state-machine';

export const EXO_PROCESS_TRANSITIONS: TransitionTable<ExoProcessStatus> = {
  idle: ['starting', 'restarting', 'stopped'],
  starting: ['running', 'crashed', 'stopping', 'stopped', 'needs_attention'],
  running: ['stopping', 'crashed', 'stopped'],
  stopping: ['stopped', 'needs_attention'],
  // Crashed: an automatic restart is scheduled, the operator starts it again, or its leftovers need attention.
  crashed: ['restarting', 'starting', 'needs_attention', 'stopping', 'stopped'],
  restarting: ['starting', 'crashed', 'stopping', 'stopped', 'needs_attention'],
  // Nothing restarts on its own from here: only the operator's start or restart.
  needs_attention: ['starting', 'restarting', 'stopped'],
  stopped: ['starting', 'restarting'],
};
