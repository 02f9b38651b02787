/**
 * The check's own requests through the node, timed: every event's moment in
 * `performance.now()` ms, and a registry so a cancelled check ends all of them.
 */
import { randomBytes } from 'node:crypto';
import type { ChatMessage } from '../../../shared/runner-protocol';
import { makePrompt } from '../../../shared/token-count';
import type { ExobarNode, RequestHandle } from '../node/node-types';

/** One request as the check saw it. */
export interface TimedRequest {
  handle: RequestHandle;
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

  constructor(private readonly node: ExobarNode) {}

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
    r.handle = this.node.submit({ model, messages, maxTokens, temperature: 0, arrivedAt: r.submittedAt }, (event) => {
      const now = performance.now();
      if (event.type === 'acknowledged') {
        r.acknowledgedAt = now;
        resolveAck();
      } else if (event.type === 'prefill_progress') r.firstProgressAt ??= now;
      else if (event.type === 'token') {
        r.tokenTimes.push(now);
        if (r.tokenTimes.length === 1) resolveFirst();
      } else if (event.type !== 'tool_calls') {
        r.endedAt = now;
        r.outcome = event.type;
        r.error = event.type === 'failed' ? event.error.message : null;
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
    if (r.endedAt === null) this.node.cancel(r.handle.id);
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
