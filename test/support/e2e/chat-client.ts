/**
 * Streams chat completions against the OpenAI-compatible API the way a client would,
 * and keeps what the test needs: the completion id (to cancel), the end, the outcome.
 */
import { makePrompt } from '../../../shared/token-count';

export interface StreamingChat {
  /** The completion id, once the first chunk arrived. */
  id: Promise<string>;
  /** Resolves with the last finish_reason seen (null if none), or the error text. */
  done: Promise<{ finishReason: string | null; error: string | null }>;
  abort(): void;
}

export function streamChat(baseUrl: string, model: string, promptTokens: number, maxTokens: number): StreamingChat {
  const controller = new AbortController();
  let resolveId!: (id: string) => void;
  const id = new Promise<string>((r) => (resolveId = r));
  const done = (async () => {
    let finishReason: string | null = null;
    try {
      const res = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model, stream: true, max_tokens: maxTokens, messages: makePrompt(promptTokens, `e2e-${Math.random()}`) }),
        signal: controller.signal,
      });
      if (!res.ok || !res.body) return { finishReason, error: `HTTP ${res.status}: ${await res.text()}` };
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buffer += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl).trim();
          buffer = buffer.slice(nl + 1);
          if (!line.startsWith('data:') || line === 'data: [DONE]') continue;
          const chunk = JSON.parse(line.slice(5)) as { id?: string; choices?: { finish_reason?: string | null }[]; error?: { message: string } };
          if (chunk.error) return { finishReason, error: chunk.error.message };
          if (chunk.id) resolveId(chunk.id);
          finishReason = chunk.choices?.[0]?.finish_reason ?? finishReason;
        }
      }
      return { finishReason, error: null };
    } catch (error) {
      return { finishReason, error: (error as Error).message };
    }
  })();
  return { id, done, abort: () => controller.abort() };
}

/**
 * A streaming request whose body is only read, not parsed: for load, where the test
 * process must not compete with the browser for the CPU it measures.
 */
export function drainChat(baseUrl: string, model: string, promptTokens: number, maxTokens: number): { abort(): void; done: Promise<number> } {
  const controller = new AbortController();
  const done = (async () => {
    let bytes = 0;
    try {
      const res = await fetch(`${baseUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ model, stream: true, max_tokens: maxTokens, messages: makePrompt(promptTokens, `load-${Math.random()}`) }),
        signal: controller.signal,
      });
      const reader = res.body?.getReader();
      for (;;) {
        const chunk = await reader?.read();
        if (!chunk || chunk.done) break;
        bytes += chunk.value.length;
      }
    } catch {
      // aborted at the end of the measurement
    }
    return bytes;
  })();
  return { abort: () => controller.abort(), done };
}
