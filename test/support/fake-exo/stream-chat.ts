/**
 * One streaming chat completion with a prompt of about `tokens` tokens, read to its end:
 * the traffic the exo tests send through exobar or straight to the fake exo. Resolves
 * with the stream's text, or null when the request failed or was aborted (tests abort
 * their streams when they are done).
 */
import { makePrompt } from '../../../shared/token-count';

export function streamChatText(base: string, model: string, tokens: number, salt: string, signal?: AbortSignal): Promise<string | null> {
  return (
    fetch(`${base}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: makePrompt(tokens, salt), max_tokens: 2, stream: true }),
      // Not passed at all when absent: jsdom's AbortSignal is one Node's fetch refuses.
      ...(signal ? { signal } : {}),
    })
      .then((r) => r.text())
      // An abort can land while the body is read, after the response came: null too.
      .catch(() => null)
  );
}
