/**
 * The check's own requests, timed: every event's moment in `performance.now()` ms, and
 * a registry so a cancelled check ends all of them. They go through a channel: the
 * node's supervisor for local runners (`nodeChannel`), or exobar's own
 * `/v1/chat/completions` for an attached exo (proxy-channel.ts), so exo's requests are
 * measured and held as any client's.
 */
import { randomBytes } from 'node:crypto';
import type { ChatMessage } from '../../../shared/runner-protocol';
import { makePrompt } from '../../../shared/token-count';
import type { ExobarNode } from '../node/node-types';

/** What the check hears of a request: the node's events, or the proxy's stream read back. */
export type CheckEvent =
  | { type: 'acknowledged' }
  | { type: 'prefill_progress' }
  | { type: 'token' }
  | { type: 'finished' }
  | { type: 'cancelled' }
  | { type: 'failed'; message: string };

/** Where the check's requests go. */
export interface CheckChannel {
  submit(model: string, messages: ChatMessage[], maxTokens: number, onEvent: (event: CheckEvent) => void): { id: string; cancel(): void };
}

/** The node's supervisor: the local runners. */
export function nodeChannel(node: ExobarNode): CheckChannel {
  return {
    submit(model, messages, maxTokens, onEvent) {
      const handle = node.submit({ model, messages, maxTokens, temperature: 0, arrivedAt: performance.now() }, (event) => {
        // The check sends no tools: a tool call cannot come, and would say nothing about timing.
        if (event.type === 'tool_calls') return;
        onEvent(event.type === 'failed' ? { type: 'failed', message: event.error.message } : { type: event.type });
      });
      return { id: handle.id, cancel: () => node.cancel(handle.id) };
    },
  };
}

/** One request as the check saw it. */
export interface TimedRequest {
  handle: { id: string; cancel(): void };
  submittedAt: number;
  acknowledgedAt: number | null;
  firstProgressAt: number | null;
  /** Every token's arrival. */
  tokenTimes: number[];
  endedAt: number | null;
  outcome: 'finished' | 'cancelled' | 'failed' | null;
  error: string | null;
  /** Settles at the end, whatever it was. */
  done: Promise<void>;
  /** Resolves at the first token (or the end). */
  firstToken: Promise<void>;
  /** Resolves at the acknowledgement (or the end). */
  acknowledged: Promise<void>;
}

/** A prompt of about `tokens` tokens no earlier prompt shares a prefix with (no prefix cache hit). */
export function uniquePrompt(tokens: number): ChatMessage[] {
  return makePrompt(tokens, `check-${randomBytes(4).toString('hex')}`);
}

export class CheckRequests {
  private readonly live = new Set<TimedRequest>();

  constructor(private readonly channel: CheckChannel) {}

  submit(model: string, messages: ChatMessage[], maxTokens: number): TimedRequest {
    let resolveDone!: () => void;
    let resolveFirst!: () => void;
    let resolveAck!: () => void;
    const r: TimedRequest = {
      handle: undefined as never,
      submittedAt: performance.now(),
      acknowledgedAt: null,
      firstProgressAt: null,
      tokenTimes: [],
      endedAt: null,
      outcome: null,
      error: null,
      done: new Promise((res) => (resolveDone = res)),
      firstToken: new Promise((res) => (resolveFirst = res)),
      acknowledged: new Promise((res) => (resolveAck = res)),
    };
    r.handle = this.channel.submit(model, messages, maxTokens, (event) => {
      const now = performance.now();
      if (event.type === 'acknowledged') {
        r.acknowledgedAt = now;
        resolveAck();
      } else if (event.type === 'prefill_progress') r.firstProgressAt ??= now;
      else if (event.type === 'token') {
        r.tokenTimes.push(now);
        if (r.tokenTimes.length === 1) resolveFirst();
      } else {
        r.endedAt = now;
        r.outcome = event.type;
        r.error = event.type === 'failed' ? event.message : null;
        this.live.delete(r);
        resolveAck();
        resolveFirst();
        resolveDone();
      }
    });
    this.live.add(r);
    return r;
  }

  cancel(r: TimedRequest): void {
    if (r.endedAt === null) r.handle.cancel();
  }

  /** Cancels every request of the check still in flight and waits for their ends. */
  async cancelAll(): Promise<void> {
    const left = [...this.live];
    for (const r of left) this.cancel(r);
    await Promise.all(left.map((r) => r.done));
  }
}

/** Time to first token in seconds, null without one. */
export const ttftS = (r: TimedRequest): number | null => (r.tokenTimes.length > 0 ? (r.tokenTimes[0]! - r.submittedAt) / 1000 : null);
