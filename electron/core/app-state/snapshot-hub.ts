/**
 * The one place the snapshot every view reads is assembled. Each part of the core that
 * owns some of what the views show registers it here, and says when it changed:
 *
 * - a *section*: a function that returns its fields of the snapshot (the node its
 *   instances, the attached exo its section, offer and instances, the MLX service its
 *   runtime, the launch its progress...). Instances from several sections are listed
 *   in the order the sections were registered; any other field is the last section's
 *   that gives it, and the empty snapshot's (shared/snapshot.ts) when none does.
 * - a *warning provider*: a function that returns the warnings it raises now.
 *
 * On every change the hub takes every provider's warnings through the one warning diff
 * (`warning_raised` / `warning_cleared` into the event log the diagnosis reads), local
 * and exo warnings alike, and bumps the snapshot's version; the broadcaster builds each
 * version once and throttles it to the subscribers.
 */
import { emptySnapshot, type InstanceSnapshot, type Snapshot, type Warning } from '../../../shared/snapshot';
import { SnapshotBroadcaster } from './snapshot-broadcaster';
import { WarningDiff, type WarningEvent } from './warning-diff';

/** The fields the hub itself fills: the version's number, time and the app's version, and the merged warnings. */
type HubField = 'seq' | 'at' | 'version' | 'warnings';

/** What one section gives: any snapshot fields beyond the hub's own; its instances are added to the others'. */
export type SnapshotSection = Partial<Omit<Snapshot, HubField | 'instances'>> & { instances?: readonly InstanceSnapshot[] };

/**
 * A registration: `changed()` says its part changed: a new version follows, and every
 * warning provider is read again (an owner with a section and warnings says it once).
 * `remove()` takes it out.
 */
export interface Registration {
  changed(): void;
  remove(): void;
}

/** What an owner of some state registers with; a part is given this much of the hub. */
export interface SnapshotSections {
  /** Registers a section under a unique name (a duplicate name is a bug: it throws). */
  section(name: string, read: () => SnapshotSection): Registration;
  /** Registers a warning provider under a unique name. */
  warnings(name: string, read: () => readonly Warning[]): Registration;
}

export interface SnapshotHubOptions {
  /** The app's version, said in every snapshot. */
  version?: string;
  /** Where the warning diff records `warning_raised` and `warning_cleared` (the node's event log). */
  record: (event: WarningEvent) => void;
}

export class SnapshotHub implements SnapshotSections {
  private readonly sections = new Map<string, () => SnapshotSection>();
  private readonly providers = new Map<string, () => readonly Warning[]>();
  private readonly diff: WarningDiff;
  private readonly broadcaster = new SnapshotBroadcaster((seq) => this.build(seq));

  constructor(private readonly options: SnapshotHubOptions) {
    this.diff = new WarningDiff(options.record);
  }

  section(name: string, read: () => SnapshotSection): Registration {
    return this.register(this.sections, 'section', name, read);
  }

  warnings(name: string, read: () => readonly Warning[]): Registration {
    return this.register(this.providers, 'warning provider', name, read);
  }

  /** A new version: the warnings (and their events) follow it now, read or not. */
  changed(): void {
    this.broadcaster.changed();
    this.diff.update([...this.providers.values()].flatMap((read) => read()));
  }

  /** The snapshot of the current version, built once and shared. */
  snapshot(): Snapshot {
    return this.broadcaster.current();
  }

  /** Snapshots on change, at most one per `throttleMs` (default 100 ms); returns the unsubscribe. */
  subscribe(listener: (snapshot: Snapshot) => void, throttleMs?: number): () => void {
    return this.broadcaster.subscribe(listener, throttleMs);
  }

  /** Stops every pending send; registrations stay readable. */
  close(): void {
    this.broadcaster.close();
  }

  private register<T>(into: Map<string, T>, what: string, name: string, read: T): Registration {
    if (into.has(name)) throw new Error(`a ${what} named "${name}" is already registered`);
    into.set(name, read);
    this.changed();
    return {
      changed: () => {
        if (into.get(name) === read) this.changed();
      },
      remove: () => {
        if (into.get(name) !== read) return;
        into.delete(name);
        this.changed();
      },
    };
  }

  private build(seq: number): Snapshot {
    const snapshot: Snapshot = { ...emptySnapshot(), seq, at: Date.now(), version: this.options.version ?? '0.0.0', warnings: [...this.diff.warnings] };
    const instances: InstanceSnapshot[] = [];
    for (const read of this.sections.values()) {
      const { instances: own, ...fields } = read();
      if (own) instances.push(...own);
      Object.assign(snapshot, fields);
    }
    snapshot.instances = instances;
    return snapshot;
  }
}
