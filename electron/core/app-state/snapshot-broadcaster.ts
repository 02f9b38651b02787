/**
 * The snapshot as a value per state version, and the one throttle on the way to
 * its readers.
 *
 * `changed()` is called wherever the state changes; it bumps the version (the
 * snapshot's `seq`). The snapshot of a version is built at most once, on first read,
 * and that one object is shared by every reader and subscriber: reading is pure.
 *
 * Subscribers hear of changes at most once per their throttle (100 ms by default).
 * Events can arrive thousands of times a second (16 streams of tokens); views need
 * ~10 Hz. This is the only throttle between the node and a view: doing it at the source
 * bounds every consumer's work at once (serialising for SSE and IPC, the tray, the
 * page's renders), so the renderer applies what arrives as it arrives. The last change
 * is never dropped: a trailing send follows every burst.
 */
import type { Snapshot } from '../../../shared/snapshot';

interface Subscriber {
  listener: (snapshot: Snapshot) => void;
  throttleMs: number;
  lastSentAt: number;
  lastSentSeq: number;
  timer: NodeJS.Timeout | null;
}

export class SnapshotBroadcaster {
  private readonly subscribers = new Set<Subscriber>();
  private version = 0;
  private cached: Snapshot | null = null;

  /** `build(seq)` makes the snapshot of the current state, numbered `seq`. */
  constructor(private readonly build: (seq: number) => Snapshot) {}

  /** The state's version: the `seq` of the snapshot `current()` returns. */
  get seq(): number {
    return this.version;
  }

  /** The snapshot of the current version, built once and then shared. */
  current(): Snapshot {
    this.cached ??= this.build(this.version);
    return this.cached;
  }

  /** Marks the state changed: a new version; listeners hear of it within their throttle. */
  changed(): void {
    this.version += 1;
    this.cached = null;
    for (const subscriber of this.subscribers) this.schedule(subscriber);
  }

  subscribe(listener: (snapshot: Snapshot) => void, throttleMs = 100): () => void {
    const subscriber: Subscriber = { listener, throttleMs, lastSentAt: Number.NEGATIVE_INFINITY, lastSentSeq: -1, timer: null };
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
      if (!this.subscribers.has(subscriber) || subscriber.lastSentSeq === this.version) return;
      subscriber.lastSentAt = performance.now();
      subscriber.lastSentSeq = this.version;
      try {
        subscriber.listener(this.current());
      } catch {
        // One faulty view must not stop the others from hearing.
      }
    }, wait);
  }
}
