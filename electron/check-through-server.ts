/**
 * `exobar check sharing` beside a running exobar of the same data directory: the check
 * runs in that exobar, through its control API (`POST /api/checks/sharing`, then
 * `GET /api/checks/{id}` for progress and the result, `DELETE` on Ctrl-C), as the page's
 * "Check GPU sharing" does. Its models are the ones that server runs; the CLI starts no
 * runner and writes none of that server's records. When the server cannot be asked
 * (no token, refused, not answering, a check already running) the command refuses in
 * words rather than start a second exobar on the same data directory.
 */
import { z } from 'zod';
import { CheckStatusSchema, type CheckStatus, type SharingCheckOptions } from '../shared/sharing-check';
import { askServer, noTokenMessage, refusalMessage, type ExobarServer } from './server-client';
import type { CliIo } from './cli-command';

/** How often the command asks the server for the check's progress. */
const POLL_MS = 500;

const StartedSchema = z.object({ id: z.string().min(1) });

/** Prints a finished check (the markdown, or the result with --json) and returns the exit code. */
export function reportCheckEnd(end: CheckStatus | null, json: boolean, checksDir: string, io: CliIo): number {
  if (!end || end.state !== 'done' || !end.result) {
    io.err(`exobar check sharing: ${end?.state ?? 'failed'}${end?.error ? `: ${end.error}` : ''}`);
    return end?.state === 'cancelled' ? 130 : 1;
  }
  io.out(json ? JSON.stringify(end.result, null, 2) : end.markdown!);
  io.err(`kept in ${checksDir}/${end.id}.json and .md`);
  return 0;
}

export async function checkThroughServer(
  server: ExobarServer,
  request: SharingCheckOptions,
  options: { json: boolean; dataDir: string; checksDir: string },
  io: CliIo,
): Promise<number> {
  const refuse = (why: string): number => {
    io.err(
      `exobar check sharing: refused: ${why}. The exobar at ${server.url} serves ${options.dataDir}; ` +
        'a second one there would start its own copies of the models, so the check runs through it or not at all.',
    );
    return 1;
  };
  if (!server.token) return refuse(noTokenMessage(server));
  const started = await askServer(server, 'POST', '/api/checks/sharing', { body: request });
  if (!started.answered) return refuse(started.message);
  if (started.status !== 202) return refuse(refusalMessage(server, started));
  const startedBody = StartedSchema.safeParse(started.body);
  if (!startedBody.success) return refuse(`exobar at ${server.url} started a check this exobar does not understand (another version?)`);
  const { id } = startedBody.data;
  io.err(`running the check in ${server.source} at ${server.url} (check ${id})`);
  const path = `/api/checks/${encodeURIComponent(id)}`;

  let cancelling = false;
  const onSignal = (): void => {
    if (cancelling) return;
    cancelling = true;
    io.err('exobar check sharing: cancelling the check (the server puts its instances back as they were)');
    void askServer(server, 'DELETE', path, { timeoutMs: 120_000 });
  };
  process.on('SIGINT', onSignal);
  try {
    let lastStep = '';
    for (;;) {
      const reply = await askServer(server, 'GET', path);
      if (!reply.answered) {
        io.err(`exobar check sharing: ${reply.message}; the check's outcome is unknown`);
        return 1;
      }
      if (reply.status !== 200) {
        io.err(`exobar check sharing: ${refusalMessage(server, reply)}`);
        return 1;
      }
      const status = CheckStatusSchema.safeParse(reply.body);
      if (!status.success) {
        io.err(`exobar check sharing: exobar at ${server.url} sent a check status this exobar does not understand (another version?)`);
        return 1;
      }
      const now = status.data;
      if (now.state !== 'running') return reportCheckEnd(now, options.json, options.checksDir, io);
      if (now.step !== lastStep) {
        lastStep = now.step;
        io.err(`[${Math.round(now.progress * 100)} %] ${now.step}`);
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  } finally {
    process.off('SIGINT', onSignal);
  }
}
