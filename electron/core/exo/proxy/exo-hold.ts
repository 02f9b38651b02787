/**
 * The hold: while a model's runner prefills a proxied request, further proxied
 * requests to that model wait in exobar's own queue and go to exo at that prefill's
 * first token.
 *
 * Why: stock exo's worker has one plan loop per Mac that awaits each runner's
 * acknowledgement, and a runner mid-prefill acknowledges only after the prefill. A
 * second request sent to a prefilling model therefore stops exo from planning anything
 * else on that Mac (every other model's requests wait) until the prefill ends (exo PR
 * 2348 fixes it in exo). At the first token the runner reads new tasks again, so a
 * request sent then is acknowledged within one step: nothing is lost by waiting here.
 *
 * A model whose runner still generates a cancelled request (exo deleted the task before
 * its runner heard of the cancel) is busy too, until the runner is ready again: a
 * request sent then would only wait behind that ghost inside exo.
 *
 * Only streams count as prefilling: a non-streaming answer shows no first token, so
 * exobar cannot tell when its prefill ends (docs/exo-proxy.md, limits).
 *
 * The hold moves the request's own state machine (held, then dispatched as it is let go,
 * or cancelled): the traffic's record follows it.
 */
import type { CancelledBy } from '../../../../shared/request-record';
import { ExoTraffic, type ProxiedRequest } from './exo-traffic';
import type { ProxiedRequestState } from './proxied-request-state';

interface Waiter {
  record: ProxiedRequest;
  life: ProxiedRequestState;
  release: () => void;
  cancel: (reason: string) => void;
}

/** Thrown to a held request that was cancelled before it was sent. */
export class HeldCancelled extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'HeldCancelled';
  }
}

export class ExoHold {
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(
    private readonly traffic: ExoTraffic,
    /** The setting: false sends every request at once. */
    private readonly enabled: () => boolean,
    /** exo is busy with the model for something exobar did not send (a cancelled request its runner keeps generating). */
    private readonly busyAtExo: (model: string) => boolean = () => false,
  ) {
    traffic.onChange((record) => this.pump(record.model));
  }

  /**
   * Resolves when `record` may go to exo: at once unless another proxied stream to the
   * same model is sent or prefilling; rejects with {@link HeldCancelled} if it is
   * cancelled while held.
   */
  admit(record: ProxiedRequest, life: ProxiedRequestState): Promise<void> {
    if (!this.enabled() || !this.blocked(record.model, record)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const queue = this.waiting.get(record.model) ?? [];
      this.waiting.set(record.model, queue);
      queue.push({ record, life, release: resolve, cancel: (reason) => reject(new HeldCancelled(reason)) });
      life.to('held', 'the hold keeps it while its model prefills another stream');
    });
  }

  /** Cancels a held request at once, by whom it says; false when it is not held. */
  cancel(record: ProxiedRequest, by: CancelledBy, reason: string): boolean {
    const queue = this.waiting.get(record.model);
    const index = queue?.findIndex((w) => w.record === record) ?? -1;
    if (!queue || index < 0) return false;
    const [waiter] = queue.splice(index, 1);
    waiter!.life.cancel(by, reason);
    waiter!.cancel(reason);
    return true;
  }

  /** exo's state changed (a runner ready again) or the setting did: held requests that may go, go now. */
  recheck(): void {
    this.settingChanged();
  }

  /** The setting changed: with the hold off, every held request goes to exo now. */
  settingChanged(): void {
    for (const [model, queue] of this.waiting) {
      while (queue.length > 0 && (!this.enabled() || !this.blocked(model, queue[0]!.record))) this.pump(model);
    }
  }

  /** Held requests, per model. */
  heldCount(model: string): number {
    return this.waiting.get(model)?.length ?? 0;
  }

  private blocked(model: string, except: ProxiedRequest): boolean {
    if (this.busyAtExo(model)) return true;
    return this.traffic.active().some((r) => r !== except && r.model === model && r.stream && (r.phase === 'sent' || r.phase === 'prefilling'));
  }

  /** Sends the next held request of `model` once nothing of that model is prefilling. */
  private pump(model: string): void {
    const queue = this.waiting.get(model);
    if (!queue || queue.length === 0) return;
    if (this.enabled() && this.blocked(model, queue[0]!.record)) return;
    const waiter = queue.shift()!;
    // Sent now: from here the record counts as prefilling and holds the next one.
    this.traffic.sent(waiter.record);
    waiter.life.to('dispatched', 'sent to exo: the hold let it go');
    waiter.release();
  }
}
