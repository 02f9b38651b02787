/**
 * `exobar check sharing` beside a running exobar of the same data directory: the check
 * runs in that exobar, through its control API (`POST /api/checks/sharing`, then
 * `GET /api/checks/{id}` for progress and the result, `DELETE` on Ctrl-C), as the page's
 * "Check GPU sharing" does. Its models are the ones that server runs; the CLI starts no
 * runner and writes none of that server's records. When the server cannot be asked
 * (no token, refused, not answering, a check already running) the command refuses in
 * words rather than start a second exobar on the same data directory.
 */
import { UnreadableAnswerError } from '../../shared/action-client';
import type { CheckStatus, SharingCheckOptions } from '../../shared/sharing-check';
import { noTokenMessage, serverClient, ServerUnreachableError, type ExobarServer } from './server-client';
import type { CliIo } from './cli-command';

/** How often the command asks the server for the check's progress. */
const POLL_MS = 500;

/** A call's failure in words; an answer this CLI cannot read most likely comes from another version. */
function failureWords(error: unknown, server: ExobarServer, what: string): string {
  if (error instanceof UnreadableAnswerError) return `exobar at ${server.url} ${what} this exobar does not understand (another version?)`;
  return error instanceof Error ? error.message : String(error);
}

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
  const client = serverClient(server);
  let started: CheckStatus;
  try {
    started = await client.call('startSharingCheck', request);
  } catch (error) {
    return refuse(failureWords(error, server, 'started a check'));
  }
  const { id } = started;
  io.err(`running the check in ${server.source} at ${server.url} (check ${id})`);

  let cancelling = false;
  const onSignal = (): void => {
    if (cancelling) return;
    cancelling = true;
    io.err('exobar check sharing: cancelling the check (the server puts its instances back as they were)');
    // Answered once the instances are back as they were, which may take a while.
    void serverClient(server, 120_000).call('cancelCheck', id).catch(() => undefined);
  };
  process.on('SIGINT', onSignal);
  try {
    let lastStep = '';
    for (;;) {
      let now: CheckStatus;
      try {
        now = await client.call('getCheck', id);
      } catch (error) {
        const unknown = error instanceof ServerUnreachableError ? "; the check's outcome is unknown" : '';
        io.err(`exobar check sharing: ${failureWords(error, server, 'sent a check status')}${unknown}`);
        return 1;
      }
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
