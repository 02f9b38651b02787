/**
 * What the exo proxy's dialect tests (OpenAI chat, Anthropic Messages, OpenAI Responses,
 * Ollama) set up the same way: one proxy rig per test file, prompts of a given size, JSON
 * posted to exobar, and the steps their cancel and hold cases share, which only the
 * dialect's request and its `api` name tell apart.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { makePrompt } from '../../shared/token-count';
import type { ProxiedRequest } from '../../electron/core/exo/proxy/exo-traffic';
import { eventually } from './eventually';
import { startProxyRig, type ProxyRig, type ProxyRigOptions } from './exo-proxy-rig';

/** The text of a user message of exactly `tokens` prompt tokens; `salt` keeps prompts apart. */
export const promptText = (tokens: number, salt: string): string => makePrompt(tokens, salt)[0]!.content;

/** The `data:` payloads of an event stream (Anthropic's or Responses'), in order. */
export const dataEvents = (lines: string[]) =>
  lines.filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)) as { type: string; [k: string]: unknown });

/** The hold case of one dialect: how it sends a request to the model and what a finished answer shows. */
export interface HoldCase<A> {
  model: string;
  /** The dialect's name in the request log. */
  api: string;
  /** What the dialect calls a request ("message", "chat"…), for the waits' messages. */
  what: string;
  /** The prompts are salted `<salt>-a` (the first request) and `<salt>-b`. */
  salt: string;
  /** Sends one request and reads its whole answer. */
  send: (promptTokens: number, salt: string) => Promise<A>;
  expectFinished: (answer: A) => void;
}

export interface DialectTestRig {
  /** The proxy rig, read inside tests (before the file's first test it has not started). */
  p: ProxyRig;
  /** POSTs `body` as JSON to exobar's `path`. */
  post: (path: string, body: Record<string, unknown>, signal?: AbortSignal) => Promise<Response>;
  /** The request of dialect `api` once exo has it: exobar has learned its command id. */
  requestAtExo(api: string, what: string): Promise<ProxiedRequest>;
  /**
   * Runs `body` while the fake exo holds every prefill of `model` after its first chunk, so
   * a request stays at exo as long as the case needs; released when `body` ends, failed or
   * not (`body` may release earlier itself).
   */
  whilePrefillsHeld<T>(model: string, body: (release: () => void) => Promise<T>): Promise<T>;
  /** The client of `record`'s request goes away: exobar records the request cancelled, and exo's command ends (exo took the cancel). */
  leaveAndExpectCancelAtExo(record: ProxiedRequest, abort: AbortController, res: Response): Promise<void>;
  /**
   * A first request prefilling at exo, a second one meanwhile waits in exobar's hold
   * (recorded under the dialect's `api`), and both finish once exo's prefill goes on.
   * Returns the held request's record.
   */
  expectSecondHeldUntilFirstToken<A>(hold: HoldCase<A>): Promise<ProxiedRequest>;
}

/**
 * One proxy rig for the whole test file, started before its first test and closed after
 * its last, with the steps the dialect tests share. `p` stands for the rig, so tests read
 * `p.serving` and `p.rig.url` as from the rig itself; read before the rig started
 * (outside a test), it says so.
 */
export function dialectTestRig(options: ProxyRigOptions): DialectTestRig {
  let started: ProxyRig | null = null;
  beforeAll(async () => {
    started = await startProxyRig(options);
  });
  afterAll(async () => {
    await started?.close();
  });
  const p = new Proxy({} as ProxyRig, {
    get(_target, key) {
      if (!started) throw new Error(`the proxy rig's ${String(key)} was read before the rig started: read it inside a test`);
      return started[key as keyof ProxyRig];
    },
  });

  const requestAtExo = (api: string, what: string): Promise<ProxiedRequest> =>
    eventually(() => p.serving.traffic.active().find((r) => r.api === api && r.commandId), 20_000, what);

  async function whilePrefillsHeld<T>(model: string, body: (release: () => void) => Promise<T>): Promise<T> {
    const release = p.exo.worker.holdPrefills(model);
    try {
      return await body(release);
    } finally {
      release();
    }
  }

  return {
    p,
    post: (path, body, signal) =>
      fetch(`${p.rig.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ...(signal ? { signal } : {}),
      }),
    requestAtExo,
    whilePrefillsHeld,
    async leaveAndExpectCancelAtExo(record, abort, res) {
      abort.abort();
      await res.body?.cancel().catch(() => undefined);
      await eventually(() => p.serving.traffic.find(record.commandId!)?.phase === 'cancelled' || undefined, 20_000, 'the cancel');
      await eventually(() => !p.exo.worker.openCommands().some((c) => c.commandId === record.commandId) || undefined, 20_000, "exo's command ended");
    },
    expectSecondHeldUntilFirstToken: (hold) =>
      whilePrefillsHeld(hold.model, async (release) => {
        const first = hold.send(20_000, `${hold.salt}-a`);
        await requestAtExo(hold.api, `the first ${hold.what} at exo`);
        const second = hold.send(100, `${hold.salt}-b`);
        const held = await eventually(() => p.serving.traffic.active().find((r) => r.phase === 'held'), 20_000, `a held ${hold.what}`);
        expect(held.api).toBe(hold.api);
        release();
        hold.expectFinished(await first);
        hold.expectFinished(await second);
        return p.serving.traffic.find(held.id)!;
      }),
  };
}
