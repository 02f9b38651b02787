/**
 * The sharing check's requests to an attached exo, through exobar's own
 * `/v1/chat/completions` (the proxy, docs/exo-proxy.md) as any client sends them: so
 * they are recorded, measured and held by exobar like every other, and the check
 * measures what an operator's clients get. The stream is read back into the check's
 * events: exo's first `: prefill_progress` comment is the moment its runner took the
 * request (the check's "acknowledged": a request exobar holds is not), each `data:`
 * chunk with content is a token, `[DONE]` the end, exo's error variant a failure.
 * Cancel closes the connection, which makes exobar cancel the request at exo.
 *
 * Hand-read SSE rather than an OpenAI client: the check needs exo's comment lines,
 * which clients drop.
 */
import type { CheckChannel, CheckEvent } from './check-requests';

interface Chunk {
  error?: { message?: unknown };
  choices?: Array<{ delta?: { content?: unknown; tool_calls?: unknown }; finish_reason?: unknown }>;
}

/** `baseUrl`: exobar's own address (`http://127.0.0.1:port`), read at each request. */
export function proxyChannel(baseUrl: () => string | null): CheckChannel {
  let counter = 0;
  return {
    submit(model, messages, maxTokens, onEvent) {
      const abort = new AbortController();
      const id = `check-${++counter}`;
      let ended = false;
      let acknowledged = false;
      let cancelled = false;
      const emit = (event: CheckEvent) => {
        if (ended) return;
        if (event.type === 'finished' || event.type === 'cancelled' || event.type === 'failed') ended = true;
        onEvent(event);
      };
      const ack = () => {
        if (acknowledged) return;
        acknowledged = true;
        emit({ type: 'acknowledged' });
      };
      const onLine = (line: string) => {
        if (line.startsWith(': prefill_progress')) {
          ack();
          emit({ type: 'prefill_progress' });
          return;
        }
        if (!line.startsWith('data:')) return;
        const data = line.slice(5).trim();
        if (data === '[DONE]') return emit(cancelled ? { type: 'cancelled' } : { type: 'finished' });
        let chunk: Chunk;
        try {
          chunk = JSON.parse(data) as Chunk;
        } catch {
          return;
        }
        if (chunk.error) return emit({ type: 'failed', message: String(chunk.error.message ?? 'exo reported an error') });
        const choice = chunk.choices?.[0];
        if (choice?.finish_reason === 'cancelled') cancelled = true;
        if ((typeof choice?.delta?.content === 'string' && choice.delta.content !== '') || choice?.delta?.tool_calls) {
          ack();
          emit({ type: 'token' });
        }
      };
      void (async () => {
        const url = baseUrl();
        if (!url) return emit({ type: 'failed', message: "exobar's own address is not known yet (its server is not listening)" });
        try {
          const res = await fetch(`${url}/v1/chat/completions`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ model, messages, max_tokens: maxTokens, temperature: 0, stream: true }),
            signal: abort.signal,
          });
          if (res.status !== 200 || !res.body) {
            const text = await res.text().catch(() => '');
            return emit({ type: 'failed', message: `exobar answered ${res.status}: ${text.slice(0, 300)}` });
          }
          const decoder = new TextDecoder();
          let buffered = '';
          for await (const bytes of res.body) {
            buffered += decoder.decode(bytes as Uint8Array, { stream: true });
            let nl: number;
            while ((nl = buffered.indexOf('\n')) >= 0) {
              onLine(buffered.slice(0, nl).replace(/\r$/, ''));
              buffered = buffered.slice(nl + 1);
            }
          }
          emit(cancelled ? { type: 'cancelled' } : { type: 'failed', message: 'the stream ended without [DONE]' });
        } catch (error) {
          emit(abort.signal.aborted ? { type: 'cancelled' } : { type: 'failed', message: (error as Error).message });
        }
      })();
      return {
        id,
        cancel: () => {
          cancelled = true;
          abort.abort();
        },
      };
    },
  };
}
