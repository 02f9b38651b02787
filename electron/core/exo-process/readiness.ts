/**
 * exo is ready when its API answers, not when it prints its banner (printed before
 * the server binds): `/node_id` first (the node id, a new one on every start), then
 * `/state` (the replica exists). Each answer is validated; a wrong one is retried.
 */
import { z } from 'zod';

const NodeIdSchema = z.string().min(1).max(200);
const StateSchema = z.looseObject({ topology: z.looseObject({ nodes: z.array(z.unknown()) }) });

export interface ReadinessOptions {
  port: number;
  signal: AbortSignal;
  intervalMs: number;
  /** Called with the step in words as it changes. */
  onProgress(step: string): void;
}

async function getJson(url: string, signal: AbortSignal): Promise<unknown> {
  // One controller per request, unhooked afterwards: polling must not pile listeners on `signal`.
  const request = new AbortController();
  const abort = (): void => request.abort(signal.reason);
  signal.addEventListener('abort', abort, { once: true });
  const timer = setTimeout(() => request.abort(new Error('timeout')), 5000);
  try {
    const response = await fetch(url, { signal: request.signal });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return await response.json();
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', abort);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function poll<T>(url: string, schema: z.ZodType<T>, options: ReadinessOptions): Promise<T> {
  for (;;) {
    try {
      const parsed = schema.safeParse(await getJson(url, options.signal));
      if (parsed.success) return parsed.data;
    } catch {
      // Not listening yet, or not answering yet: poll again, unless the start was called off.
      if (options.signal.aborted) throw options.signal.reason;
    }
    await sleep(options.intervalMs, options.signal);
  }
}

/** Resolves with exo's node id once `/node_id` and then `/state` answer; rejects when `signal` aborts. */
export async function waitForExoApi(options: ReadinessOptions): Promise<string> {
  const base = `http://127.0.0.1:${options.port}`;
  options.onProgress(`waiting for exo's API (${base}/node_id)`);
  const nodeId = await poll(`${base}/node_id`, NodeIdSchema, options);
  options.onProgress(`node ${nodeId.slice(0, 8)} answers; waiting for /state`);
  await poll(`${base}/state`, StateSchema, options);
  return nodeId;
}
