/**
 * `exobar status`: a terminal glance of the running exobar (as `ollama ps` or `lms ps`),
 * found through the record it keeps in its data directory (server-client.ts).
 * Exit 0 when exobar answers with its state, 3 when it does not, whatever the reason
 * (scripts test for it): no server recorded, nothing listening, no token, a refused one.
 */
import { z } from 'zod';
import { SnapshotSchema } from '../../shared/snapshot';
import { resolveDataDir } from '../core/data-dir';
import { askServer, findServer, noTokenMessage, refusalMessage, type ExobarServer } from './server-client';
import { statusReport, statusText, type StatusReport } from './status/status-report';
import { flagValue, parseFlags, type CliCommand, type CliIo } from './cli-command';

/** exobar did not answer with its state: nothing recorded, nothing listening, no reply in time, no token or a refused one. */
export const EXIT_NOT_ANSWERING = 3;
/** How long one look waits for the server. */
const TIMEOUT_MS = 3000;

const USAGE = `usage: exobar status [--json] [--watch] [--data-dir D] [--url URL]

A glance at the running exobar: each model's state in plain words, its queue, requests
in flight, time to first token (p50), tokens per second and fast synch; the warnings;
the exo it reads.

  --json          the same as JSON
  --watch         redraw every second (Ctrl-C ends)
  --data-dir D    the data directory (default ~/.exobar or $EXOBAR_DATA_DIR)
  --url URL       the server (default: the one recorded in <data-dir>/server.json)
  -h, --help      show this help

Exit status: 0 when exobar answers, 3 when it does not, whatever the reason (no server
recorded in the data directory, nothing listening, no control token, a token refused),
2 for a bad invocation. The control token comes from $EXOBAR_TOKEN or <data-dir>/token.`;

const DirSchema = z.string().min(1, 'expected a path');
const UrlSchema = z.url({ protocol: /^https?$/, error: 'expected an http URL such as http://127.0.0.1:52416' });

type Look = { ok: true; report: StatusReport } | { ok: false; message: string };

/** One look at the data directory's server: its snapshot as a report, or why there is none. */
async function look(dataDir: string, explicitUrl: string | null, env: NodeJS.ProcessEnv): Promise<Look> {
  // Found again on every look: a server restarted on another port is followed.
  const found = await findServer(dataDir, explicitUrl, env);
  if (!found.found) return { ok: false, message: `no exobar is running for ${dataDir}: ${found.reason}` };
  const server: ExobarServer = found.server;
  if (!server.token) return { ok: false, message: noTokenMessage(server) };
  const reply = await askServer(server, 'GET', '/api/state', { timeoutMs: TIMEOUT_MS });
  if (!reply.answered) return { ok: false, message: reply.message };
  if (reply.status !== 200) return { ok: false, message: refusalMessage(server, reply) };
  const parsed = SnapshotSchema.safeParse(reply.body);
  if (!parsed.success) return { ok: false, message: `exobar at ${server.url} sent a state this exobar does not understand (another version?)` };
  return { ok: true, report: statusReport(parsed.data, server.url, server.pid) };
}

function show(result: Look, json: boolean, io: CliIo): void {
  if (json) io.out(JSON.stringify(result.ok ? result.report : { error: result.message }, null, 2));
  else if (result.ok) for (const line of statusText(result.report)) io.out(line);
  if (!result.ok) io.err(`exobar status: ${result.message}`);
}

export const statusCommand: CliCommand = {
  name: 'status',
  summary: 'a glance at the running exobar: models, queues, TTFT, tokens/s, fast synch, warnings',
  usage: USAGE,
  async run(argv, io) {
    const flags = parseFlags(argv, {
      json: { type: 'boolean' },
      watch: { type: 'boolean' },
      'data-dir': { type: 'string' },
      url: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    });
    if (flags.help) {
      io.out(USAGE);
      return 0;
    }
    const dataDir = resolveDataDir(flags['data-dir'] === undefined ? null : flagValue('data-dir', DirSchema, flags['data-dir']), io.env);
    const explicitUrl = flags.url === undefined ? null : flagValue('url', UrlSchema, flags.url);
    const once = (): Promise<Look> => look(dataDir, explicitUrl, io.env);
    if (!flags.watch) {
      const result = await once();
      show(result, flags.json === true, io);
      return result.ok ? 0 : EXIT_NOT_ANSWERING;
    }
    let last: Look = await once();
    let stop: (() => void) | null = null;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const onSignal = (): void => stop?.();
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    try {
      for (;;) {
        // Clear the screen and draw from the top, as `watch` does.
        if (!flags.json) io.out('\x1b[2J\x1b[H');
        show(last, flags.json === true, io);
        const next = await Promise.race([new Promise<'tick'>((r) => setTimeout(() => r('tick'), 1000)), stopped.then(() => 'stop' as const)]);
        if (next === 'stop') break;
        last = await once();
      }
    } finally {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    }
    return last.ok ? 0 : EXIT_NOT_ANSWERING;
  },
};
