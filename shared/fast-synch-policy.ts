/**
 * The fast-synch policy: pure functions used by main to enforce it and by the renderer
 * to preview it.
 *
 * Why: MLX_METAL_FAST_SYNCH=1 makes MLX spin on shared memory instead of waiting on
 * Metal shared events. With more than one MLX process on one GPU the spin can wait
 * forever: throughput collapses or the GPU stays wedged until reboot (exo's fix turned
 * it off for ring instances). JACCL instances run collectives on the CPU and need the
 * fast CPU-GPU hop, so they keep it on.
 */
import type { FastSynchOverride, InstanceType, Warning } from './snapshot';

export interface FastSynchDecision {
  enabled: boolean;
  reason: string;
}

/**
 * Decides a runner's fast-synch value. An instance's own override wins, then the
 * global default from settings, then the instance type's rule.
 */
export function decideFastSynch(instanceType: InstanceType, override: FastSynchOverride, globalDefault: FastSynchOverride = 'auto'): FastSynchDecision {
  if (override === 'on') return { enabled: true, reason: 'forced on by user' };
  if (override === 'off') return { enabled: false, reason: 'forced off by user' };
  if (globalDefault === 'on') return { enabled: true, reason: 'forced on by settings default' };
  if (globalDefault === 'off') return { enabled: false, reason: 'forced off by settings default' };
  return instanceType === 'ring' ? { enabled: false, reason: 'ring instance' } : { enabled: true, reason: 'JACCL instance' };
}

/**
 * The environment that carries a decision to the runner. Both variables are set, and
 * consistently: MLX reads MLX_METAL_FAST_SYNCH once as an integer, and exo's runner
 * bootstrap overrides it from EXO_FAST_SYNCH ("false" turns it off).
 */
export function fastSynchEnv(enabled: boolean): { MLX_METAL_FAST_SYNCH: '0' | '1'; EXO_FAST_SYNCH: 'true' | 'false' } {
  return enabled ? { MLX_METAL_FAST_SYNCH: '1', EXO_FAST_SYNCH: 'true' } : { MLX_METAL_FAST_SYNCH: '0', EXO_FAST_SYNCH: 'false' };
}

/** What the warning rules need to know of each instance placed on one GPU. */
export interface PlacedInstance {
  id: string;
  model: string;
  instanceType: InstanceType;
  fastSynch: boolean;
}

/**
 * Warnings for the instances sharing one GPU (all instances of one node share it).
 * `two_ring_fast_synch`: two or more ring instances and any of them with fast synch on.
 * `two_jaccl_shared_gpu`: two or more JACCL instances on one GPU, never tested upstream.
 */
export function sharedGpuWarnings(instances: readonly PlacedInstance[]): Warning[] {
  const warnings: Warning[] = [];
  const ring = instances.filter((i) => i.instanceType === 'ring');
  const ringWithFastSynch = ring.filter((i) => i.fastSynch);
  if (ring.length >= 2 && ringWithFastSynch.length > 0) {
    const names = ringWithFastSynch.map((i) => i.model).join(', ');
    warnings.push({
      code: 'two_ring_fast_synch',
      instanceIds: ring.map((i) => i.id),
      title: `Fast synch is on for ${names} while ${ring.length} ring models share the GPU`,
      risk:
        'With MLX_METAL_FAST_SYNCH=1 and more than one MLX process on one GPU, the GPU wait can spin forever: ' +
        'throughput collapses, or the GPU stays wedged at 100% until the Mac is rebooted (killing the process may not free it).',
      fix: 'Relaunch the affected runners with fast synch off (MLX_METAL_FAST_SYNCH=0), the rule for ring instances.',
    });
  }
  const jaccl = instances.filter((i) => i.instanceType === 'jaccl');
  const jacclWithFastSynch = jaccl.filter((i) => i.fastSynch);
  // One ring runner forced on beside a JACCL runner (which keeps it on): still two
  // processes spinning on one GPU, the hazard's condition, though no rule above names it.
  if (ring.length === 1 && ringWithFastSynch.length === 1 && jacclWithFastSynch.length > 0) {
    const forced = ringWithFastSynch[0]!;
    warnings.push({
      code: 'ring_fast_synch_beside_jaccl',
      instanceIds: [forced.id],
      title: `Fast synch is on for ring model ${forced.model} beside a JACCL model on the same GPU`,
      risk:
        'Two MLX processes with MLX_METAL_FAST_SYNCH=1 share the GPU: the GPU wait can spin forever, collapsing throughput ' +
        'or wedging the GPU until the Mac is rebooted.',
      fix: 'Relaunch the ring runner with fast synch off (MLX_METAL_FAST_SYNCH=0); the JACCL runner keeps it on for its collectives.',
    });
  }
  if (jaccl.length >= 2) {
    warnings.push({
      code: 'two_jaccl_shared_gpu',
      instanceIds: jaccl.map((i) => i.id),
      title: `${jaccl.length} JACCL models share one GPU`,
      risk:
        'JACCL instances keep fast synch on for speed, and two of them on one GPU have never been tested upstream: ' +
        'the same spin can collapse throughput or wedge the GPU until reboot.',
      fix: 'Run one JACCL model per Mac, or relaunch one of them with fast synch off and accept slower collectives.',
    });
  }
  return warnings;
}

/**
 * True when placing `candidate` beside `existing` makes it part of a two_ring_fast_synch
 * situation: the control API then asks for `acknowledgeRisk` before going ahead.
 */
export function wouldCreateRingFastSynchRisk(existing: readonly PlacedInstance[], candidate: PlacedInstance): boolean {
  if (candidate.instanceType !== 'ring') return false;
  return sharedGpuWarnings([...existing, candidate]).some((w) => w.code === 'two_ring_fast_synch');
}
