/**
 * Runner processes recorded in the data directory (runners.json: pid and start time of
 * each live runner), so a runner left behind by an exobar that crashed is found and
 * stopped at the next start. Never by name, and never a pid whose start time differs
 * from the one recorded: such a pid belongs to another process now. The file belongs to
 * the exobar that owns it while that one runs: a second exobar on the same data
 * directory never writes it (nor the runners it launches), so the owner's runners stay
 * recorded for the next start after a crash.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { stopLeftovers, type LeftoverResult } from '../process/leftover-runners';
import { processStartTime, type ProcessIdentity } from '../process/process-identity';

const IdentitySchema = z.object({ pid: z.number().int().positive(), startTime: z.string().min(1) });
const RegistryFileSchema = z.object({
  /** The exobar that wrote the file: while it runs, its runners are not orphans. */
  owner: IdentitySchema.nullable().default(null),
  runners: z.array(z.object({ pid: z.number().int().positive(), startTime: z.string().min(1), instanceId: z.string() })),
});
type RegistryEntry = z.infer<typeof RegistryFileSchema>['runners'][number];

export const RUNNER_REGISTRY_FILE = 'runners.json';

/** SIGTERM, then SIGKILL: the same timing exobar gives its own runners. */
const ORPHAN_TIMING = { termGraceMs: 2000, killWaitMs: 5000, pollMs: 100 };

export class RunnerRegistry {
  private readonly file: string;
  private entries: RegistryEntry[] = [];
  private owner: ProcessIdentity | null = null;
  /** `guest`: another exobar that runs owns the file; undecided until stopOrphans has looked. */
  private role: 'undecided' | 'owner' | 'guest' = 'undecided';
  /** What the previous exobar left in the file, taken over at construction. */
  private readonly previous: { owner: ProcessIdentity | null; runners: ProcessIdentity[] };

  constructor(dataDir: string) {
    this.file = join(dataDir, RUNNER_REGISTRY_FILE);
    this.previous = readEntries(this.file);
  }

  /**
   * Stops the runners the previous exobar recorded that still run with the same start
   * time; one result per record (gone, reused, exited, killed, survived). Nothing is
   * stopped while that exobar itself still runs (a second one on the same data directory):
   * its runners are not orphans.
   */
  async stopOrphans(): Promise<LeftoverResult[]> {
    const startTime = await processStartTime(process.pid);
    this.owner = startTime === null ? null : { pid: process.pid, startTime };
    const { owner } = this.previous;
    const ownerRuns = owner !== null && owner.pid !== process.pid && (await processStartTime(owner.pid)) === owner.startTime;
    this.role = ownerRuns ? 'guest' : 'owner';
    // The runners recorded before this point (launched while it looked) go in with this write.
    this.write();
    if (ownerRuns) return [];
    return stopLeftovers(this.previous.runners, ORPHAN_TIMING);
  }

  /** Records a runner just spawned (its start time read from the system). */
  async started(instanceId: string, pid: number): Promise<void> {
    const startTime = await processStartTime(pid);
    if (startTime === null) return; // Already gone.
    this.entries = [...this.entries.filter((e) => e.pid !== pid), { pid, startTime, instanceId }];
    this.write();
  }

  /** Forgets a runner that exited. */
  ended(pid: number): void {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => e.pid !== pid);
    if (this.entries.length !== before) this.write();
  }

  private write(): void {
    if (this.role !== 'owner') return;
    // Write then rename: a crash mid-write never leaves half a file.
    const temp = `${this.file}.tmp`;
    try {
      writeFileSync(temp, `${JSON.stringify({ owner: this.owner, runners: this.entries }, null, 2)}\n`);
      renameSync(temp, this.file);
    } catch {
      // The record is a safety net for the next start, not part of serving: a data
      // directory that is gone (removed at shutdown) or read-only never fails a runner.
    }
  }
}

/**
 * The exobar that owns `dataDir`'s runners while it still runs (the same pid with the same
 * start time), else null: a command must not start runners of its own in a data
 * directory another exobar serves, nor take its record over.
 */
export async function liveRegistryOwner(dataDir: string): Promise<ProcessIdentity | null> {
  const { owner } = readEntries(join(dataDir, RUNNER_REGISTRY_FILE));
  if (owner === null || owner.pid === process.pid) return null;
  return (await processStartTime(owner.pid)) === owner.startTime ? owner : null;
}

function readEntries(file: string): { owner: ProcessIdentity | null; runners: ProcessIdentity[] } {
  const none = { owner: null, runners: [] };
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return none;
  }
  try {
    const parsed = RegistryFileSchema.safeParse(JSON.parse(text));
    if (!parsed.success) return none;
    return { owner: parsed.data.owner, runners: parsed.data.runners.map(({ pid, startTime }) => ({ pid, startTime })) };
  } catch {
    return none;
  }
}
