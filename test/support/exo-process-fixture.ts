/**
 * States of this Mac's exo for the views' tests, each built from the words the
 * process manager writes (electron/core/exo-process/) and parsed by the real
 * ExoProcessStateSchema, so a fixture can never hold a shape the snapshot cannot.
 */
import { ExoProcessStateSchema, type ExoProcessState } from '../../shared/exo-process';

const T0 = 1_764_500_000_000;

const base: ExoProcessState = {
  status: 'running',
  ownsProcess: true,
  pid: 4242,
  command: ['exo', '-v', '--api-port', '52415', '--no-fast-synch'],
  apiPort: 52415,
  startedAt: T0,
  readyAt: T0 + 4_000,
  nodeId: '1a2b3c4d5e6f708192a3b4c5d6e7f801',
  progress: null,
  fastSynch: { enabled: false, reason: 'ring only (2 instances): off', observed: false, mismatch: false },
  exit: null,
  failure: null,
  reason: null,
  lastLines: ['[ 10:00:00.000 | INFO ] Starting EXO | pid=4242', '[ 10:00:00.010 | INFO ] FAST_SYNCH forced OFF'],
  restarts: { count: 0, max: 5, nextAt: null },
  restartNeeded: null,
};

/** A state of exo, checked by the schema. */
export function exoProcessState(patch: Partial<ExoProcessState> = {}): ExoProcessState {
  return ExoProcessStateSchema.parse({ ...base, ...patch });
}

/** The states the views must tell apart, as the manager publishes them. */
export const EXO_STATES = {
  running: () => exoProcessState(),
  starting: () => exoProcessState({ status: 'starting', readyAt: null, nodeId: null, progress: "waiting for exo's API (http://127.0.0.1:52415/node_id)" }),
  stopping: () => exoProcessState({ status: 'stopping', progress: 'asking exo to stop (SIGINT)' }),
  stopped: () =>
    exoProcessState({
      status: 'stopped',
      ownsProcess: false,
      pid: null,
      exit: { code: 0, signal: null, at: T0 + 60_000 },
      reason: 'stopped by exobar (SIGINT, graceful)',
    }),
  crashed: () =>
    exoProcessState({
      status: 'crashed',
      ownsProcess: false,
      pid: null,
      readyAt: null,
      failure: 'exited_during_start',
      exit: { code: 1, signal: null, at: T0 + 2_000 },
      reason: 'exo exited during start (exit code 1) before its API answered; its last lines say why',
      lastLines: [
        '[ 10:00:00.000 | INFO ] Starting EXO | pid=4242',
        '[ 10:00:01.000 | CRITICAL ] EXO terminated due to unhandled exception',
        'ModuleNotFoundError: No module named mlx',
      ],
    }),
  restarting: () =>
    exoProcessState({
      status: 'restarting',
      ownsProcess: false,
      pid: null,
      failure: 'crashed',
      exit: { code: 1, signal: null, at: T0 + 90_000 },
      reason: 'exo exited on its own (exit code 1)',
      restarts: { count: 1, max: 5, nextAt: T0 + 94_000 },
    }),
  needsAttention: () =>
    exoProcessState({
      status: 'needs_attention',
      ownsProcess: false,
      pid: null,
      failure: 'runners_left',
      exit: { code: 1, signal: null, at: T0 + 90_000 },
      reason:
        'exo exited on its own (exit code 1) and the GPU may be wedged: exo left runner pid 4250 ignored SIGTERM and had to be killed (SIGKILL), which may not free the GPU. ' +
        'Check Activity Monitor for GPU use and memory held; reboot the Mac if it stays busy, then start exo again. exobar will not restart exo on its own.',
      lastLines: ['[ 10:01:30.000 | ERROR ] runner 0 stopped answering', '[ 10:01:30.100 | CRITICAL ] EXO terminated due to unhandled exception'],
    }),
} satisfies Record<string, () => ExoProcessState>;
