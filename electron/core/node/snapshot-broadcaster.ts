/**
 * Sends snapshots to listeners on change, each at most once per its throttle. Events
 * can arrive thousands of times a second (16 streams of tokens); views need ~10 Hz.
 * The last change is never dropped: a trailing send follows every burst.
 */
import type { Snapshot } from '../../../shared/snapshot';

interface Subscriber {
  listener: (snapshot: Snapshot) => void;
  throttleMs: number;
  lastSentAt: number;
  lastSentVersion: number;
  timer: NodeJS.Timeout | null;
}

export class SnapshotBroadcaster {
  private readonly subscribers = new Set<Subscriber>();
  private version = 0;

  constructor(private readonly build: () => Snapshot) {}

  /** Marks the state changed; listeners hear of it within their throttle. */
  changed(): void {
    this.version += 1;
    for (const subscriber of this.subscribers) this.schedule(subscriber);
  }

  subscribe(listener: (snapshot: Snapshot) => void, throttleMs = 100): () => void {
    const subscriber: Subscriber = { listener, throttleMs, lastSentAt: 0, lastSentVersion: -1, timer: null };
    this.subscribers.add(subscriber);
    this.schedule(subscriber);
    return () => {
      if (subscriber.timer) clearTimeout(subscriber.timer);
      this.subscribers.delete(subscriber);
    };
  }

  close(): void {
    for (const subscriber of this.subscribers) if (subscriber.timer) clearTimeout(subscriber.timer);
    this.subscribers.clear();
  }

  private schedule(subscriber: Subscriber): void {
    if (subscriber.timer) return;
    const wait = Math.max(0, subscriber.lastSentAt + subscriber.throttleMs - performance.now());
    subscriber.timer = setTimeout(() => {
      subscriber.timer = null;
      if (!this.subscribers.has(subscriber) || subscriber.lastSentVersion === this.version) return;
      subscriber.lastSentAt = performance.now();
      subscriber.lastSentVersion = this.version;
      try {
        subscriber.listener(this.build());
      } catch {
        // One faulty view must not stop the others from hearing.
      }
    }, wait);
  }
}
