/**
 * exo's stream for a proxied request, relayed byte for byte as it arrives (exo's
 * comments included), with back-pressure; a tap reads the same bytes after the client
 * got them, for the record (progress, tokens, usage, exo's errors, `[DONE]`). How the
 * stream stopped and the request's state decide its last words: a cancel's ending, an
 * OpenAI-shaped error, or nothing.
 */
import { ApiError } from '../../api/api-error';
import type { ExoTraffic } from './exo-traffic';
import type { RelayedAnswer } from './proxied-call';
import type { StreamStop } from './proxied-request-state';

/** Relays exo's stream to the client until it ends or its connection closes. */
export function relayStream(traffic: ExoTraffic, answer: RelayedAnswer): void {
  const { ctx, record, life, res, idle } = answer;
  const tap = answer.dialect.tap({
    progress: (p, t) => traffic.progress(record, p, t),
    token: (id, content) => {
      if (content) traffic.token(record, id);
      // The stream's own id is exo's command id: it corrects a guess from exo's task list.
      else if (id && record.commandId !== id) traffic.claim(record, id);
    },
    usage: (p, c) => traffic.usage(record, p, c),
    error: (message) => life.sawStreamError(message),
    stats: (stats) => traffic.generationStats(record, stats),
    done: () => life.sawStreamDone(),
  });
  ctx.res.writeHead(200, { 'Content-Type': String(res.headers['content-type']), 'Cache-Control': 'no-cache, no-transform', 'X-Accel-Buffering': 'no' });
  ctx.res.flushHeaders();
  // The state says how it ends: a request exobar cancelled ends as a cancel, whether
  // exo's stream closes before or after exo answers the cancel.
  const stopped = (stop: StreamStop) => {
    clearTimeout(idle);
    answer.done();
    res.removeAllListeners('data');
    const last = life.streamStopped(
      stop,
      { code: 'exo_stream_incomplete', message: `exo's stream for ${record.model} ended without [DONE]; the answer is incomplete` },
      { code: 'exo_connection_lost', message: `the exo node at ${record.upstreamUrl} closed the connection mid-stream` },
    );
    if (!ctx.res.destroyed && !ctx.res.writableEnded) {
      if (last.kind === 'cancelled') ctx.res.write(answer.dialect.cancelledStreamEnding(record));
      else if (last.kind === 'error') ctx.res.write(answer.dialect.streamError(new ApiError(502, last.failure.code, last.failure.message)));
    }
    if (!ctx.res.writableEnded) ctx.res.end();
  };
  res.on('data', (chunk: Buffer) => {
    idle.refresh();
    // The client's bytes first, unchanged; the record reads them after.
    if (!ctx.res.write(chunk)) {
      res.pause();
      ctx.res.once('drain', () => res.resume());
    }
    tap.feed(chunk);
  });
  res.on('end', () => stopped('end'));
  res.on('close', () => stopped('close'));
}
