/**
 * A cluster split in two, seen from the attached node: a Mac this cluster had leaves
 * (a `node_left` event) but its exo still answers on an address exo published for it,
 * in a cluster of its own (nodes that stop seeing each other each elect themselves
 * master: exo #2271, #2197, #2094). exo's state says only that the Mac left; asking
 * the Mac's own exo (`/node_id`, then `/state`) tells "gone" from "split off".
 *
 * Never in the poller's way: its own timer, a short timeout, at most one probe in
 * flight per Mac. Probes go only to addresses exo published for that Mac (read from
 * the attached node's `/state/nodeNetwork` while the Mac was still there), on exo's API
 * port (the attached node's unless `apiPort` says otherwise). A Mac stops being
 * probed once it rejoins or no published address answers.
 */
import { Agent } from 'node:http';
import { EXO_API_PORT } from '../../../../shared/addresses';
import type { ExoClusterEvent, ExoEventNode } from '../../../../shared/exo-cluster-events';
import type { ClusterChange } from '../cluster-events/diff-cluster-states';
import { exoAgent, getExoJson, type ExoHttpOptions } from '../attach/exo-http';
import { NodeIdSchema } from '../attach/exo-probe';
import type { ExoWarning } from '../attach/exo-view';
import { parseNodeAddresses, SplitStateSchema } from './split-schemas';
import { splitEvent, splitWarning, type SplitMac } from './split-words';

export interface ClusterSplitOptions {
  /** Probe rounds (default 5 s). */
  intervalMs?: number;
  /** How often the published addresses are read again (default 30 s; at once when a new Mac shows up). */
  addressesEveryMs?: number;
  /** Longest wait for one probe request (default 1.5 s). */
  timeoutMs?: number;
  /** exo's API port on a Mac when it is known not to be the attached node's (undefined: the attached node's). */
  apiPort?: (nodeId: string) => number | undefined;
  /** False never probes (default true). */
  enabled?: boolean;
}

export interface ClusterSplitHooks {
  now: () => number;
  /** Keeps a cluster event (the event log's add). */
  addEvent: (change: ClusterChange) => void;
  /** Something the snapshot shows changed. */
  onChange: () => void;
}

interface Watched {
  node: ExoEventNode;
  inFlight: boolean;
  /** The node id its exo answered with (a new one if exo restarted there). */
  answeredId: string | null;
  split: SplitMac | null;
}

const PROBE_HTTP: Omit<ExoHttpOptions, 'timeoutMs'> = { maxBytes: 16 * 1024 * 1024, maxDepth: 64 };

export class ClusterSplitWatch {
  private readonly base: URL;
  private readonly attachedAgent: Agent;
  /** Probes open a connection each: a departed Mac is asked every few seconds at most. */
  private readonly probeAgent = new Agent({ keepAlive: false });
  private readonly addresses = new Map<string, string[]>();
  private readonly watched = new Map<string, Watched>();
  private present = new Set<string>();
  private attachedNodeId: string | null = null;
  private addressesAt = -Infinity;
  private addressesRead: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly addressesEveryMs: number;
  private readonly timeoutMs: number;
  private readonly enabled: boolean;

  constructor(
    attachedUrl: string,
    private readonly options: ClusterSplitOptions,
    private readonly hooks: ClusterSplitHooks,
  ) {
    this.base = new URL(attachedUrl);
    this.attachedAgent = exoAgent(this.base);
    this.intervalMs = options.intervalMs ?? 5_000;
    this.addressesEveryMs = options.addressesEveryMs ?? 30_000;
    this.timeoutMs = options.timeoutMs ?? 1_500;
    this.enabled = options.enabled ?? true;
  }

  start(): void {
    if (this.timer || !this.enabled) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.stopped = true;
    await this.addressesRead;
    this.attachedAgent.destroy();
    this.probeAgent.destroy();
  }

  /** Takes in a reading of the node sections and the events it published: Macs that left start being watched, Macs back stop. */
  observe(nodeIds: Iterable<string>, attachedNodeId: string | null, published: ExoClusterEvent[]): void {
    if (!this.enabled) return;
    this.present = new Set(nodeIds);
    this.attachedNodeId = attachedNodeId;
    if ([...this.present].some((id) => !this.addresses.has(id))) this.addressesAt = -Infinity;
    for (const event of published) {
      if (event.kind !== 'node_left') continue;
      const node = event.nodes[0];
      if (node && (this.addresses.get(node.nodeId)?.length ?? 0) > 0) this.watched.set(node.nodeId, { node, inFlight: false, answeredId: null, split: null });
    }
    let changed = false;
    for (const [id, w] of this.watched) {
      if (!this.present.has(id) && !(w.answeredId !== null && this.present.has(w.answeredId))) continue;
      this.watched.delete(id);
      changed ||= w.split !== null;
    }
    if (changed) this.hooks.onChange();
  }

  /** The Macs split off now. */
  splitMacs(): SplitMac[] {
    return [...this.watched.values()].flatMap((w) => (w.split ? [w.split] : []));
  }

  warnings(): ExoWarning[] {
    return this.splitMacs().map(splitWarning);
  }

  /**
   * One round: the published addresses when due, and a probe of every watched Mac not
   * already being probed. Resolves when the round's requests are done (the timer does
   * not wait on it; tests do).
   */
  async tick(): Promise<void> {
    if (!this.enabled || this.stopped) return;
    await this.readAddressesIfDue();
    await Promise.all([...this.watched.entries()].filter(([, w]) => !w.inFlight).map(([id, w]) => this.probe(id, w)));
  }

  private readAddressesIfDue(): Promise<void> {
    if (this.addressesRead) return this.addressesRead;
    if (this.hooks.now() - this.addressesAt < this.addressesEveryMs) return Promise.resolve();
    this.addressesRead = (async () => {
      const result = await getExoJson(this.base, '/state/nodeNetwork', this.attachedAgent, { ...PROBE_HTTP, timeoutMs: this.timeoutMs * 2 });
      if (!result.ok) return;
      this.addressesAt = this.hooks.now();
      // Merged, never replaced: a Mac that left keeps the addresses it had.
      for (const [id, ips] of parseNodeAddresses(result.value)) if (ips.length > 0) this.addresses.set(id, ips);
    })().finally(() => {
      this.addressesRead = null;
    });
    return this.addressesRead;
  }

  private portOf(nodeId: string): string {
    const port = this.options.apiPort?.(nodeId);
    return String(port ?? (this.base.port || EXO_API_PORT));
  }

  private async probe(nodeId: string, w: Watched): Promise<void> {
    w.inFlight = true;
    try {
      const found = await this.ask(nodeId);
      if (this.stopped || this.watched.get(nodeId) !== w) return; // detached, or it rejoined meanwhile
      if (!found) {
        // No published address answers: the Mac is down (node_left and exo_node_lost say it), not split.
        this.watched.delete(nodeId);
        if (w.split) this.hooks.onChange();
        return;
      }
      w.answeredId = found.nodeId;
      if (found.nodes.includes(this.attachedNodeId ?? '')) return; // it still sees this cluster: on its way back
      const sees = found.nodes.length;
      if (w.split && w.split.sees === sees) return;
      const first = w.split === null;
      w.split = { node: w.node, at: w.split?.at ?? this.hooks.now(), sees, address: found.address };
      if (first) this.hooks.addEvent(splitEvent(w.split));
      this.hooks.onChange();
    } finally {
      w.inFlight = false;
    }
  }

  /** The first published address where an exo other than this cluster's Macs answers, with what it sees. */
  private async ask(nodeId: string): Promise<{ nodeId: string; nodes: string[]; address: string } | null> {
    const http = { ...PROBE_HTTP, timeoutMs: this.timeoutMs };
    for (const ip of this.addresses.get(nodeId) ?? []) {
      const address = `${ip.includes(':') ? `[${ip}]` : ip}:${this.portOf(nodeId)}`;
      const base = new URL(`http://${address}`);
      const id = await getExoJson(base, '/node_id', this.probeAgent, http);
      const parsedId = id.ok ? NodeIdSchema.safeParse(id.value) : null;
      // Another Mac of this cluster at that address (the attached one, on loopback) is not the Mac that left.
      if (!parsedId?.success || this.present.has(parsedId.data)) continue;
      const state = await getExoJson(base, '/state', this.probeAgent, http);
      const parsed = state.ok ? SplitStateSchema.safeParse(state.value) : null;
      if (!parsed?.success) continue;
      return { nodeId: parsedId.data, nodes: parsed.data.topology.nodes, address };
    }
    return null;
  }
}
