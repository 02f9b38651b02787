/**
 * The node's recent events in a bounded ring buffer, kept all the time so a
 * diagnostic bundle exported after a stall still holds what led to it.
 */
import type { NewNodeEvent, NodeEvent } from '../events/node-event';

export class EventLog {
  private readonly events: NodeEvent[] = [];
  private readonly listeners = new Set<(event: NodeEvent) => void>();

  constructor(private readonly capacity = 20_000) {}

  /** Appends one entry, stamped with the monotonic clock. */
  record(event: NewNodeEvent): void {
    const entry = { t: performance.now(), ...event } as NodeEvent;
    this.events.push(entry);
    if (this.events.length > this.capacity) this.events.splice(0, this.events.length - this.capacity);
    for (const listener of this.listeners) listener(entry);
  }

  /** Hears every entry as it is recorded (the metrics count from it); returns the unsubscribe. */
  subscribe(listener: (event: NodeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  all(): NodeEvent[] {
    return [...this.events];
  }
}
