/**
 * `exobar serve`: runs the core (node + local API) and serves the renderer to a
 * browser, until a signal stops it (a second one kills the runners at once).
 */
import { z } from 'zod';
import type { Logger } from 'pino';
import { DEFAULT_API_HOST, DEFAULT_API_PORT } from '../core/api/api-server';
import { resolveDataDir } from '../core/data-dir';
import { readServerRecord, serverRecordPath } from '../core/server-record';
import { killRunnerGroups } from '../core/supervisor/kill-runner-groups';
import { EXO_SERVE_FLAGS, EXO_SERVE_USAGE, exoServeRequest } from '../core/exo-process';
import { startCore, type RunningCore } from '../core/start-core';
import { normalizeExoUrl } from '../core/exo/attach/exo-probe';
import { createTerminalLogger, resolveLogFormat, resolveLogLevel } from '../core/terminal-log';
import { ownLogPath } from '../core/logs/own-log';
import { flagValue, parseFlags, UsageError, type CliCommand } from './cli-command';

const PortSchema = z
  .string()
  .regex(/^\d+$/, 'expected a port number (0 picks a free port)')
  .transform(Number)
  .pipe(z.number().int().min(0).max(65535, 'a port is at most 65535'));
const HostSchema = z
  .string()
  .min(1, 'expected a host name or address')
  .regex(/^[A-Za-z0-9.:[\]%-]+$/, 'expected a host name or address such as 127.0.0.1');
const TimeScaleSchema = z
  .string()
  .transform(Number)
  .pipe(z.number({ error: 'expected a number such as 0.1' }).positive('the time scale must be above 0').max(1000).finite());
const DirSchema = z.string().min(1, 'expected a directory');
const ExoUrlSchema = z.string().transform((raw, ctx) => {
  const normalized = normalizeExoUrl(raw);
  if (normalized.ok) return normalized.url;
  ctx.addIssue({ code: 'custom', message: normalized.error });
  return z.NEVER;
});

const SERVE_USAGE = `usage: exobar serve [--port N] [--host H] [--data-dir D] [--sim-time-scale X] [--exo URL] [--exo-start [--exo-command CMD]] [--log-format F]

Runs the exobar node and its local API: OpenAI-compatible endpoints under /v1, the
control API under /api (bearer token) and the page at /.

  --port N            port to listen on (default ${DEFAULT_API_PORT}; 0 picks a free port)
  --host H            address to bind (default ${DEFAULT_API_HOST}; anything else exposes the API)
  --data-dir D        token, settings and runner logs (default ~/.exobar or $EXOBAR_DATA_DIR)
  --sim-time-scale X  multiply every simulated duration by X (default 1 = calibrated)
  --exo URL           attach to the exo node at URL (e.g. http://127.0.0.1:52415) for this
                      run: its models, runners, queues and warnings join the page and /api/state
${EXO_SERVE_USAGE}
  --log-format F      pretty (one human line per request) or json (default: pretty in a
                      terminal, json otherwise; also $EXOBAR_LOG_FORMAT)
  -h, --help          show this help

Prints "exobar listening on http://HOST:PORT" once it accepts connections, then the
address to open in a browser. Ctrl-C (SIGINT) or SIGTERM stops every runner, and the
exo exobar started (never one it did not start). The log goes to stderr at
$EXOBAR_LOG_LEVEL (default info; docs/operations.md).`;

/** How long a clean stop may take before the runners' process groups are killed. */
const STOP_DEADLINE_MS = 15_000;

export const serveCommand: CliCommand = {
  name: 'serve',
  summary: 'run the node and the local API (OpenAI-compatible /v1, control /api, page at /)',
  usage: SERVE_USAGE,
  async run(argv, io) {
    const flags = parseFlags(argv, {
      port: { type: 'string' },
      host: { type: 'string' },
      'data-dir': { type: 'string' },
      'sim-time-scale': { type: 'string' },
      exo: { type: 'string' },
      'log-format': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      ...EXO_SERVE_FLAGS,
    });
    if (flags.help) {
      io.out(SERVE_USAGE);
      return 0;
    }
    const port = flags.port === undefined ? undefined : flagValue('port', PortSchema, flags.port);
    const host = flags.host === undefined ? DEFAULT_API_HOST : flagValue('host', HostSchema, flags.host);
    const simTimeScale = flags['sim-time-scale'] === undefined ? undefined : flagValue('sim-time-scale', TimeScaleSchema, flags['sim-time-scale']);
    const exoUrl = flags.exo === undefined ? undefined : flagValue('exo', ExoUrlSchema, flags.exo);
    const dataDir = resolveDataDir(flags['data-dir'] === undefined ? null : flagValue('data-dir', DirSchema, flags['data-dir']), io.env);
    let format: ReturnType<typeof resolveLogFormat>;
    let level: ReturnType<typeof resolveLogLevel>;
    try {
      format = resolveLogFormat({ flag: flags['log-format'], env: io.env, isTTY: process.stderr.isTTY === true });
      level = resolveLogLevel(io.env);
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
    // --exo-start starts this Mac's exo (else the setting exo.start decides); progress goes to stderr.
    const exoRequest = exoServeRequest(flags, (message) => new UsageError(message));
    // One server per data directory: a second would start its own copies of the models
    // and would have to replace the first one's records (server.json, runners.json).
    const running = await readServerRecord(dataDir);
    if (running.found) {
      io.err(
        `exobar serve: ${dataDir} is already served by the exobar at ${running.record.url} (pid ${running.record.pid}); ` +
          `stop it first, or give another --data-dir (if that pid is not an exobar, remove ${serverRecordPath(dataDir)})`,
      );
      return 1;
    }
    // Also into <dataDir>/exobar.log: the page's log view follows it as the source "exobar".
    const logger: Logger = createTerminalLogger({ format, level, ownLog: ownLogPath(dataDir) });

    let core: RunningCore;
    try {
      core = await startCore({
        dataDir,
        host,
        port,
        simTimeScale,
        exoUrl,
        exoProcess: { ...(exoRequest ? { start: true, command: exoRequest.command } : {}), log: io.err },
        logger,
      });
    } catch (error) {
      io.err(`exobar serve: ${(error as Error).message}`);
      return 1;
    }
    io.out(`exobar listening on ${core.url}`);
    // The token goes in the fragment: browsers never send it to the server, so it
    // cannot reach a server log; the page moves it to session storage.
    io.out(`open ${core.url}/#token=${core.token}`);
    if (exoUrl) io.out(`attached to exo at ${exoUrl}`);
    if (host !== DEFAULT_API_HOST && host !== 'localhost' && host !== '::1') {
      io.err(`exobar serve: warning: bound to ${host}; the OpenAI-compatible API (/v1) needs no token and is reachable from other machines`);
    }

    return new Promise<number>((resolve) => {
      let stopping = false;
      const onSignal = (signal: NodeJS.Signals): void => {
        if (stopping) {
          io.err(`exobar serve: ${signal} again: killing the runners now`);
          killRunnerGroups(core.node.runnerPids());
          core.exoProcess.killNow();
          resolve(130);
          return;
        }
        stopping = true;
        io.err(`exobar serve: ${signal}: stopping every runner (press Ctrl-C again to force)`);
        const deadline = setTimeout(
          () => {
            io.err('exobar serve: the runners did not stop in time: killing them');
            killRunnerGroups(core.node.runnerPids());
            core.exoProcess.killNow();
            resolve(1);
          },
          // exo's own stop (SIGINT, SIGTERM, SIGKILL, then its runners) may take longer than the runners'.
          Math.max(STOP_DEADLINE_MS, core.exoProcess.ownsProcess ? core.exoProcess.stopBudgetMs : 0),
        );
        deadline.unref();
        core.stop().then(
          () => {
            clearTimeout(deadline);
            io.err('exobar serve: stopped');
            resolve(0);
          },
          (error: unknown) => {
            clearTimeout(deadline);
            io.err(`exobar serve: stop failed: ${(error as Error).message}`);
            killRunnerGroups(core.node.runnerPids());
            core.exoProcess.killNow();
            resolve(1);
          },
        );
      };
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      process.on('SIGHUP', onSignal);
    });
  },
};
