/**
 * What exobar itself asked of exo: the instances it created (`POST /instance`) and
 * deleted (`DELETE /instance/{id}`). exo's state never says who placed or deleted an
 * instance, so the cluster events tell "through exobar" from "by someone else" here.
 *
 * One journal per process: every call exobar makes to exo goes through `exoCall`
 * (launch/exo-cluster-api.ts), which notes the writes that exo accepted. exo's
 * instance ids are random UUIDs, so one journal serves any number of attachments.
 */

export type ExoOwnActionKind = 'place' | 'delete';

interface Entry {
  kind: ExoOwnActionKind;
  instanceId: string;
  at: number;
}

/** Long enough for a deletion to reach exobar's next poll, short enough to stay small. */
const KEEP_MS = 10 * 60_000;
const KEEP_ENTRIES = 1_000;

export class ExoOwnActions {
  private readonly entries: Entry[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  record(kind: ExoOwnActionKind, instanceId: string): void {
    const at = this.now();
    this.entries.push({ kind, instanceId, at });
    while (this.entries.length > 0 && at - this.entries[0]!.at > KEEP_MS) this.entries.shift();
    if (this.entries.length > KEEP_ENTRIES) this.entries.splice(0, this.entries.length - KEEP_ENTRIES);
  }

  /** True when exobar asked exo for this (placing or deleting that instance). */
  did(kind: ExoOwnActionKind, instanceId: string): boolean {
    return this.entries.some((e) => e.kind === kind && e.instanceId === instanceId);
  }

  /**
   * Notes a call exo accepted when it is one of the instance writes: `POST /instance`
   * (the instance's id is in the body) or `DELETE /instance/{id}`.
   */
  noteCall(method: string, path: string, body: unknown, status: number): void {
    if (status !== 200) return;
    const bare = path.split('?')[0] ?? path;
    if (method === 'POST' && bare === '/instance') {
      const id = taggedInstanceId((body as { instance?: unknown } | null)?.instance);
      if (id) this.record('place', id);
    } else if (method === 'DELETE' && bare.startsWith('/instance/')) {
      this.record('delete', decodeURIComponent(bare.slice('/instance/'.length)));
    }
  }
}

/** The instanceId inside exo's tagged Instance `{"MlxRingInstance": {"instanceId": ...}}`. */
function taggedInstanceId(tagged: unknown): string | null {
  if (tagged === null || typeof tagged !== 'object') return null;
  const body = Object.values(tagged)[0] as { instanceId?: unknown; instance_id?: unknown } | undefined;
  const id = body?.instanceId ?? body?.instance_id;
  return typeof id === 'string' ? id : null;
}

/** The process's journal (see the module's note). */
export const exoOwnActions = new ExoOwnActions();
