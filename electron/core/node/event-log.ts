/**
 * The node's recent events in a bounded ring buffer, kept all the time so a
 * diagnostic bundle exported after a stall still holds what led to it.
 */
import type { NewNodeEvent, NodeEvent } from './node-event';

export class EventLog {
  private readonly events: NodeEvent[] = [];

  constructor(private readonly capacity = 20_000) {}

  /** Appends one entry, stamped with the monotonic clock. */
  record(event: NewNodeEvent): void {
    this.events.push({ t: performance.now(), ...event } as NodeEvent);
    if (this.events.length > this.capacity) this.events.splice(0, this.events.length - this.capacity);
  }

  all(): NodeEvent[] {
    return [...this.events];
  }
}
