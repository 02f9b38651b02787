/**
 * `exobar status`: a terminal glance of the running exobar (as `ollama ps` or `lms ps`),
 * found through the record it keeps in its data directory (core/server-record.ts).
 * Exit 0 when exobar answers, 3 when it does not (no server recorded, or it is gone).
 */
import { z } from 'zod';
import { SnapshotSchema } from '../shared/snapshot';
import { resolveDataDir } from './core/data-dir';
import { findServer, readText, type ServerToAsk } from './diagnostics-command';
import { statusReport, statusText, type StatusReport } from './status/status-report';
import { flagValue, parseFlags, type CliCommand, type CliIo } from './cli-command';

/** exobar did not answer: nothing recorded, nothing listening, or no reply in time. */
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

Exit status: 0 when exobar answers, 3 when it does not, 1 when it refuses the token.
The control token comes from $EXOBAR_TOKEN or <data-dir>/token.`;

const DirSchema = z.string().min(1, 'expected a path');
const UrlSchema = z.url({ protocol: /^https?$/, error: 'expected an http URL such as http://127.0.0.1:52416' });

type Look = { ok: true; report: StatusReport } | { ok: false; code: number; message: string };

/** One look at the server: its snapshot as a report, or why there is none. */
async function look(server: ServerToAsk, token: string | null): Promise<Look> {
  if (!token) return { ok: false, code: 1, message: `no control token (set EXOBAR_TOKEN or check ${server.tokenPath})` };
  let response: Response;
  try {
    response = await fetch(`${server.url}/api/state`, { headers: { Authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    return { ok: false, code: EXIT_NOT_ANSWERING, message: `exobar is not answering at ${server.url} (${server.why}): ${(error as Error).message}` };
  }
  if (response.status === 401) return { ok: false, code: 1, message: `exobar at ${server.url} refused the token from ${server.tokenPath}` };
  if (!response.ok) return { ok: false, code: 1, message: `exobar at ${server.url} answered ${response.status}` };
  const parsed = SnapshotSchema.safeParse(await response.json().catch(() => null));
  if (!parsed.success) return { ok: false, code: 1, message: `exobar at ${server.url} sent a state this exobar does not understand (another version?)` };
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
    const once = async (): Promise<Look> => {
      // Found again on every look: a server restarted on another port is followed.
      const server = await findServer(dataDir, explicitUrl);
      return look(server, io.env.EXOBAR_TOKEN || (await readText(server.tokenPath)));
    };
    if (!flags.watch) {
      const result = await once();
      show(result, flags.json === true, io);
      return result.ok ? 0 : result.code;
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
    return last.ok ? 0 : last.code;
  },
};
