/**
 * GPU sharing on an attached exo, for the traffic exobar proxies: each exo instance's
 * phase (from its proxied requests: prefilling from the first prefill progress to the
 * first token, then decoding) and, per exo instance, its decode alone and beside each
 * instance that shares one of its Macs, named by Mac. exo publishes no token times, so
 * only requests through exobar count (`observed: "proxied"`); exo tasks exobar did not
 * send leave a neighbour looking idle.
 */
import type { InstanceSharing } from '../../../shared/sharing';
import { isActive, type ExoStateSource, type ExoTraffic, type ProxiedRequest } from '../exo/proxy/exo-traffic';
import type { TokenGap } from './decode-timing';
import { InstancePhases, phaseOf } from './instance-phases';
import { SharingStats, type BusyNeighbour } from './sharing-stats';

export class ExoSharing {
  private readonly phases = new Map<string, InstancePhases>();
  private readonly stats = new Map<string, SharingStats>();

  constructor(
    private readonly traffic: ExoTraffic,
    private readonly source: () => ExoStateSource | null,
    private readonly now: () => number = Date.now,
  ) {
    traffic.onChange((record) => this.trackPhase(record));
    traffic.onGap((record, gap) => this.fileGap(record, gap));
  }

  /** The `sharing` object of one exo instance, as of now. */
  snapshot(exoInstanceId: string): InstanceSharing {
    return this.statsOf(exoInstanceId).snapshot(this.now());
  }

  /** The phase tracker of one exo instance (created idle on first use). */
  phasesOf(exoInstanceId: string): InstancePhases {
    let phases = this.phases.get(exoInstanceId);
    if (!phases) this.phases.set(exoInstanceId, (phases = new InstancePhases(this.now())));
    return phases;
  }

  private statsOf(exoInstanceId: string): SharingStats {
    let stats = this.stats.get(exoInstanceId);
    if (!stats) this.stats.set(exoInstanceId, (stats = new SharingStats('proxied')));
    return stats;
  }

  private trackPhase(record: ProxiedRequest): void {
    const instanceId = this.traffic.instanceOf(record);
    if (!instanceId) return;
    const live = this.traffic.active().filter((r) => isActive(r) && this.traffic.instanceOf(r) === instanceId);
    const phase = phaseOf(live.map((r) => ({ admitted: r.firstProgressAt !== null || r.firstTokenAt !== null, decoding: r.firstTokenAt !== null })));
    this.phasesOf(instanceId).set(phase, this.now());
  }

  private fileGap(record: ProxiedRequest, gap: TokenGap): void {
    const instanceId = this.traffic.instanceOf(record);
    const reading = this.source()?.reading;
    if (!instanceId || !reading?.instances) return;
    const mine = reading.instances.get(instanceId);
    if (!mine) return;
    const busy: BusyNeighbour[] = [];
    for (const shard of mine.shards) {
      if (!shard.nodeId) continue;
      for (const other of reading.instances.values()) {
        if (other.instanceId === instanceId || !other.shards.some((s) => s.nodeId === shard.nodeId)) continue;
        const phase = this.phases.get(other.instanceId)?.phaseDuring(gap.at - gap.gapMs, gap.at) ?? 'idle';
        if (phase === 'idle') continue;
        const node = reading.nodes?.get(shard.nodeId)?.name ?? shard.nodeId;
        busy.push({ instanceId: other.instanceId, model: other.modelId, modelName: other.modelId.split('/').pop() ?? other.modelId, phase, node });
      }
    }
    this.statsOf(instanceId).add(gap, busy);
  }
}
