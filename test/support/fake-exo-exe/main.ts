/**
 * The fake exo process, in exo 0.3.70's order (src/exo/main.py): take the pidfile
 * (a second exo prints exo's message and exits 1), parse the flags, log to stderr and
 * `~/.exo/exo_log/exo.log`, log "FAST_SYNCH forced ON|OFF" for --fast-synch /
 * --no-fast-synch and set EXO_FAST_SYNCH for the runners, print the banner *before*
 * binding the API, serve it, spawn runner children (each logs "Fast synch flag: N"),
 * and stop gracefully on SIGINT/SIGTERM (a second signal exits 1 at once).
 * FAKE_EXO_* variables make it misbehave (options.ts). Its API is the fake exo's
 * (test/support/fake-exo/), the one every other test attaches to, over one Mac with
 * nothing placed yet: one fake of exo's API, not two that drift apart.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, openSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exoHomeDir } from '../../../electron/core/exo-process/exo-home';
import { startFakeExo, type FakeExo, startedMacCluster } from '../fake-exo';
import { FakeExoUsageError, parseFakeExoOptions, type FakeExoOptions } from './options';
import { acquirePidfile } from './pidfile';
import { sleep } from '../eventually';

const RUNNER_SCRIPT = fileURLToPath(new URL('./runner.mjs', import.meta.url));

const exoHome = exoHomeDir(process.env);
const pidfilePath = join(exoHome, 'exo.pid');
let releasePidfile: () => void = () => undefined;
try {
  releasePidfile = acquirePidfile(pidfilePath);
} catch (error) {
  process.stderr.write(`${(error as Error).message}\n`);
  process.exit(1);
}

let options: FakeExoOptions;
try {
  options = parseFakeExoOptions(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof FakeExoUsageError)) throw error;
  releasePidfile();
  process.stderr.write(`usage: EXO [-h] [-q] [-v] [-m] [--no-api] [--api-port API_PORT] [--fast-synch | --no-fast-synch]\nEXO: error: ${error.message}\n`);
  process.exit(2);
}
const { knobs } = options;

// exo's log: stderr and exo_log/exo.log, the previous file rotated away at each start.
const logDir = join(exoHome, 'exo_log');
const logFile = join(logDir, 'exo.log');
mkdirSync(join(logDir, 'runner_log'), { recursive: true });
try {
  renameSync(logFile, `${logFile}.1`);
} catch {
  // First start: nothing to rotate.
}
function log(level: 'INFO' | 'WARNING' | 'ERROR' | 'CRITICAL', message: string): void {
  const line = `[ ${new Date().toISOString().slice(11, 23)} | ${level.padEnd(8)} ] ${message}\n`;
  process.stderr.write(line);
  appendFileSync(logFile, line);
}

function exitNow(code: number): never {
  releasePidfile();
  process.exit(code);
}

log('INFO', '========================================');
log('INFO', `Starting EXO | pid=${process.pid}`);
log('INFO', '========================================');
// What the environment was when exo started, for tests on systems without /proc/<pid>/environ.
writeFileSync(join(exoHome, 'fake-exo-env.json'), JSON.stringify(process.env));

if (options.fastSynchFlag !== null) process.env.EXO_FAST_SYNCH = options.fastSynchFlag ? 'true' : 'false';
const fastSynchLine = knobs.logFastSynch ?? (options.fastSynchFlag === null ? null : options.fastSynchFlag ? 'on' : 'off');
if (fastSynchLine !== null) log('INFO', `FAST_SYNCH forced ${fastSynchLine.toUpperCase()}`);

const runners = new Set<ChildProcess>();
let api: FakeExo | null = null;

// exo prints its banner before the API binds: it is not a readiness signal.
process.stderr.write(`\n${'='.repeat(60)}\n  Dashboard & API Ready\n  http://localhost:${options.apiPort}\n${'='.repeat(60)}\n\n`);

let signals = 0;
function onSignal(signal: NodeJS.Signals): void {
  if (signal === 'SIGINT' && knobs.ignoreSigint) {
    log('INFO', 'Received SIGINT (ignored)');
    return;
  }
  signals += 1;
  if (signals > 1) {
    log('WARNING', `Received ${signal} again: exiting now`);
    exitNow(1);
  }
  log('INFO', `Received ${signal}: shutting down`);
  void shutdown();
}
process.on('SIGINT', onSignal);
process.on('SIGTERM', onSignal);

function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

async function shutdown(): Promise<void> {
  // Runners get SIGTERM; one that ignores it is left behind, as a real runner stuck in a GPU wait is.
  await Promise.all(
    [...runners].map(async (child) => {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 1000))) log('WARNING', `runner pid=${child.pid} did not stop; leaving it`);
    }),
  );
  await api?.close();
  await sleep(knobs.shutdownMs);
  log('INFO', 'EXO Shutdown complete');
  exitNow(0);
}

/** Spawns a runner; resolves once it is up (its signal handlers installed), as it says over IPC. */
function spawnRunner(index: number): Promise<void> {
  const stdout = openSync(join(logDir, 'runner_log', 'stdout.log'), 'a');
  const stderr = openSync(join(logDir, 'runner_log', 'stderr.log'), 'a');
  const child = spawn(process.execPath, [RUNNER_SCRIPT, logFile, String(index)], {
    env: { ...process.env, FAKE_EXO_RUNNER_IGNORE_SIGTERM: knobs.stubbornChild && index === 0 ? '1' : '0' },
    stdio: ['ignore', stdout, stderr, 'ipc'],
  });
  runners.add(child);
  child.on('exit', () => runners.delete(child));
  log('INFO', `Spawned runner ${index} pid=${child.pid}`);
  return new Promise((resolve) => {
    child.once('message', () => resolve());
    child.once('exit', () => resolve());
  });
}

async function start(): Promise<void> {
  if (knobs.exitDuringStart !== null) {
    log('CRITICAL', 'EXO terminated due to unhandled exception');
    exitNow(knobs.exitDuringStart);
  }
  await sleep(knobs.bindDelayMs);
  if (!options.noApi) {
    try {
      // The fake binds loopback only (tests must not open ports to the network); exo binds 0.0.0.0.
      api = await startFakeExo({ cluster: startedMacCluster('fake-exo'), port: options.apiPort });
    } catch (error) {
      // Hypercorn's words for a port in use (errno 98 on Linux, 48 on macOS).
      const errno = (error as NodeJS.ErrnoException).code === 'EADDRINUSE' ? 98 : 1;
      log('ERROR', `[Errno ${errno}] error while attempting to bind on address ('0.0.0.0', ${options.apiPort}): address already in use`);
      log('CRITICAL', 'EXO terminated due to unhandled exception');
      exitNow(1);
    }
    log('INFO', `Running on http://0.0.0.0:${options.apiPort} (CTRL + C to quit)`);
  }
  const runnersUp = Promise.all(Array.from({ length: knobs.runners }, (_, i) => spawnRunner(i)));
  if (knobs.exitAfterMs !== null) {
    // The crash comes after the runners are up: on a loaded machine a runner's start can
    // take longer than the delay, and a runner killed before its handlers exist is not the
    // stubborn one a test asks for.
    await runnersUp;
    setTimeout(() => {
      // A crash: the runners are not stopped, they are orphaned as exo's would be.
      log('CRITICAL', 'EXO terminated due to unhandled exception');
      exitNow(knobs.exitCode);
    }, knobs.exitAfterMs);
  }
}

void start();
