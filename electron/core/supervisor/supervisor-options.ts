/** How a runner supervisor is set up: its runner, its logs, its watchdog and restart policy, its hooks. */
import type { Logger } from 'pino';
import type { RunnerProcess } from './runner-process';
import type { RatePrior } from './runner-rates';
import type { RestartPolicy } from './runner-restart-decision';
import type { SpawnSpec } from './spawn-spec';
import type { WatchdogLimits } from './watchdog';

export interface SupervisorOptions {
  instanceId: string;
  /** Built anew for each (re)start: the policy's environment is decided before spawn. */
  spawnSpec: () => SpawnSpec;
  /** The fast-synch value the policy decided; the runner's hello must report the same. */
  expectedFastSynch: () => boolean;
  /** Directory for stdout.log and stderr.log; null keeps logs in memory only. */
  logDir: string | null;
  /** Keep generated text in stdout.log; false writes each token's length instead (privacy). */
  logGeneratedText?: boolean;
  watchdog: WatchdogLimits;
  /** The catalog's figures for this model in real ms: the prior of the learned rates. */
  rates: RatePrior;
  /** Other runners computing on this GPU now: each stretches the watchdog's deadline. */
  gpuSharers?: () => number;
  restart: RestartPolicy;
  helloTimeoutMs?: number;
  ackTimeoutMs?: number;
  /** Where each runner's pid and start time are recorded, so a later exobar can stop orphans. */
  processes?: { started(instanceId: string, pid: number): Promise<void>; ended(pid: number): void };
  /** Makes the runner process (tests substitute one whose terminate fails, as on a wedged GPU). */
  createProcess?: (...args: ConstructorParameters<typeof RunnerProcess>) => RunnerProcess;
  /** How long a Shutdown may take before the process group gets SIGTERM. */
  shutdownGraceMs?: number;
  /** The model this runner serves, named in exobar's log. */
  model?: string;
  /** exobar's own logger (pino): a refused transition is written there once, at warn. */
  logger?: Pick<Logger, 'warn'>;
}
