/**
 * The node's recent events in a bounded ring buffer, kept all the time so a
 * diagnostic bundle exported after a stall still holds what led to it.
 */
import type { NodeEvent } from '../node-types';

export class EventLog {
  private readonly events: NodeEvent[] = [];

  constructor(private readonly capacity = 20_000) {}

  record(kind: NodeEvent['kind'], fields: Omit<NodeEvent, 't' | 'kind'> = {}): void {
    this.events.push({ t: performance.now(), kind, ...fields });
    if (this.events.length > this.capacity) this.events.splice(0, this.events.length - this.capacity);
  }

  all(): NodeEvent[] {
    return [...this.events];
  }
}
