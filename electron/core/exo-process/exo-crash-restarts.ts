/**
 * The automatic restarts of this Mac's exo after a crash or a failed automatic start:
 * the process kit's verdict (backoff until the cap, exo-crash-policy.ts) decides the
 * delay; the restart waits for exo's pidfile to be released, then starts exo again.
 */
import { restartVerdict } from '../process/restart-policy';
import type { ExoCrashPolicy } from './exo-crash-policy';
import type { ExoProcessStateStore } from './exo-process-state-store';
import { seconds } from './exo-timing';

export interface ExoCrashRestartsHost {
  store: ExoProcessStateStore;
  policy: ExoCrashPolicy;
  now: () => number;
  /** Whether an exo exobar spawned is alive (then nothing restarts). */
  running(): boolean;
  /** Runs `fn` after whatever action is under way (the manager's one-at-a-time order). */
  serial(fn: () => Promise<void>): Promise<void>;
  /** False (the state says who holds it) when the pidfile stays held. */
  waitForPidfile(): Promise<boolean>;
  /** An automatic start. */
  launch(): Promise<void>;
}

export class ExoCrashRestarts {
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly host: ExoCrashRestartsHost) {}

  /** exo failed (`reason`): restarts it after the verdict's delay, or gives up at the cap. */
  schedule(reason: string): void {
    const { store, policy } = this.host;
    const count = store.current.restarts.count;
    // This crash is failure count + 1: the kit's verdict restarts it with backoff until the cap.
    const verdict = restartVerdict(count + 1, policy);
    if (!verdict.restart) {
      store.update({
        status: 'crashed',
        reason: `${reason}; gave up after ${count} automatic restart${count === 1 ? '' : 's'}: start exo again once the cause is fixed`,
        restarts: { ...store.current.restarts, nextAt: null },
      });
      return;
    }
    const delay = verdict.delayMs;
    const nextAt = this.host.now() + delay;
    store.update({
      status: 'restarting',
      reason: `${reason}; restarting in ${seconds(delay)} (automatic restart ${count + 1} of ${policy.maxRestarts})`,
      restarts: { count, max: policy.maxRestarts, nextAt },
    });
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.host.serial(async () => {
        if (store.current.status !== 'restarting' || this.host.running()) return;
        store.update({ restarts: { count: count + 1, max: policy.maxRestarts, nextAt: null } });
        if (!(await this.host.waitForPidfile())) return this.schedule(store.current.reason ?? reason);
        await this.host.launch();
      });
    }, delay);
  }

  /** Calls off a scheduled restart (a stop, a start, quitting, a runner left behind). */
  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const restarts = this.host.store.current.restarts;
    if (restarts.nextAt !== null) this.host.store.update({ restarts: { ...restarts, nextAt: null } });
  }
}
