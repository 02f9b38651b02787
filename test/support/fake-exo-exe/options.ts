/**
 * The fake exo's command line and environment: exo's own flags and variables (as
 * exo 0.3.70 reads them, docs/exo-process.md "exo's command line") plus the FAKE_EXO_* knobs a
 * test sets to make it misbehave.
 */
import { parseArgs } from 'node:util';
import { exoHomeDir } from '../../../electron/core/exo-process/exo-home';

export interface FakeExoOptions {
  apiPort: number;
  verbosity: number;
  /** --fast-synch → true, --no-fast-synch → false, neither → null (exo's "auto"). */
  fastSynchFlag: boolean | null;
  noApi: boolean;
  /** Where exo keeps its files (exoHomeDir: EXO_HOME, else ~/.exo off Linux, else the XDG cache folder). */
  exoHome: string;
  knobs: FakeExoKnobs;
}

/** Test-only behaviour, from FAKE_EXO_* variables. */
export interface FakeExoKnobs {
  /** FAKE_EXO_IGNORE_SIGINT=1: SIGINT does nothing (SIGTERM still stops it). */
  ignoreSigint: boolean;
  /** FAKE_EXO_EXIT_DURING_START=<code>: exit with it after the banner, before binding. */
  exitDuringStart: number | null;
  /** FAKE_EXO_STUBBORN_CHILD=1: the first runner ignores SIGTERM and is left behind when exo stops. */
  stubbornChild: boolean;
  /** FAKE_EXO_BIND_DELAY_MS: time between the banner and the bind. */
  bindDelayMs: number;
  /** FAKE_EXO_EXIT_AFTER_MS: crash (exit FAKE_EXO_EXIT_CODE, default 1) this long after binding, leaving the runners. */
  exitAfterMs: number | null;
  exitCode: number;
  /** FAKE_EXO_RUNNERS: runner children spawned once the API is up (default 1). */
  runners: number;
  /** FAKE_EXO_LOG_FAST_SYNCH=on|off: log this "FAST_SYNCH forced" line whatever the flag said (a wrapper that overrides it). */
  logFastSynch: 'on' | 'off' | null;
  /** FAKE_EXO_SHUTDOWN_MS: how long a graceful shutdown takes. */
  shutdownMs: number;
}

/** A bad command line: exo's argparse prints usage and exits 2. */
export class FakeExoUsageError extends Error {}

function intEnv(env: NodeJS.ProcessEnv, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new FakeExoUsageError(`${name}: expected an integer, got ${raw}`);
  return value;
}

/** Parses argv (without node and the script) and the environment. */
export function parseFakeExoOptions(argv: string[], env: NodeJS.ProcessEnv): FakeExoOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        quiet: { type: 'boolean', short: 'q' },
        verbose: { type: 'boolean', short: 'v', multiple: true },
        'force-master': { type: 'boolean', short: 'm' },
        'no-api': { type: 'boolean' },
        'api-port': { type: 'string' },
        'no-worker': { type: 'boolean' },
        'no-downloads': { type: 'boolean' },
        offline: { type: 'boolean' },
        'no-batch': { type: 'boolean' },
        namespace: { type: 'string' },
        'zenoh-port': { type: 'string' },
        'discovery-port': { type: 'string' },
        'fast-synch': { type: 'boolean' },
        'no-fast-synch': { type: 'boolean' },
      },
    }));
  } catch (error) {
    throw new FakeExoUsageError((error as Error).message);
  }
  if (values['fast-synch'] && values['no-fast-synch']) throw new FakeExoUsageError('argument --no-fast-synch: not allowed with argument --fast-synch');
  const apiPort = values['api-port'] === undefined ? 52415 : Number(values['api-port']);
  if (!Number.isInteger(apiPort) || apiPort < 1 || apiPort > 65535)
    throw new FakeExoUsageError(`argument --api-port: invalid int value: '${values['api-port']}'`);
  const logFastSynch = env.FAKE_EXO_LOG_FAST_SYNCH;
  return {
    apiPort,
    verbosity: values.quiet ? -1 : (values.verbose?.length ?? 0),
    fastSynchFlag: values['fast-synch'] ? true : values['no-fast-synch'] ? false : null,
    noApi: values['no-api'] ?? false,
    exoHome: exoHomeDir(env),
    knobs: {
      ignoreSigint: env.FAKE_EXO_IGNORE_SIGINT === '1',
      exitDuringStart: intEnv(env, 'FAKE_EXO_EXIT_DURING_START'),
      stubbornChild: env.FAKE_EXO_STUBBORN_CHILD === '1',
      bindDelayMs: intEnv(env, 'FAKE_EXO_BIND_DELAY_MS') ?? 0,
      exitAfterMs: intEnv(env, 'FAKE_EXO_EXIT_AFTER_MS'),
      exitCode: intEnv(env, 'FAKE_EXO_EXIT_CODE') ?? 1,
      runners: intEnv(env, 'FAKE_EXO_RUNNERS') ?? 1,
      logFastSynch: logFastSynch === 'on' || logFastSynch === 'off' ? logFastSynch : null,
      shutdownMs: intEnv(env, 'FAKE_EXO_SHUTDOWN_MS') ?? 50,
    },
  };
}
