/**
 * The fast-synch policy: pure functions used by main to enforce it and by the renderer
 * to preview it.
 *
 * Why: MLX_METAL_FAST_SYNCH=1 makes MLX spin on shared memory instead of waiting on
 * Metal shared events. With more than one MLX process on one GPU the spin can wait
 * forever: throughput collapses or the GPU stays wedged until reboot (exo's fix turned
 * it off for ring instances). JACCL instances run collectives on the CPU and want the
 * fast CPU-GPU hop, so they keep it on, but only while no other model shares their GPU:
 * MLX now documents the flag as unreliable "in any cross-stream workload"
 * (ml-explore/mlx PR #4005, merged 2026-08-06), and #3830 reports the wedge on one Mac
 * with four models. So two models on one GPU with fast synch on warn, whatever their
 * types, and creating that situation needs the operator's acknowledgement.
 */
import type { FastSynchOverride, InstanceType, Warning } from './snapshot';

export interface FastSynchDecision {
  enabled: boolean;
  reason: string;
}

/**
 * Decides a runner's fast-synch value. An instance's own override wins, then the
 * global default from settings, then the instance type's rule: ring off; JACCL on
 * only while it is alone on its GPU (`sharesGpu` false), off beside another model.
 */
export function decideFastSynch(
  instanceType: InstanceType,
  override: FastSynchOverride,
  globalDefault: FastSynchOverride = 'auto',
  sharesGpu = false,
): FastSynchDecision {
  if (override === 'on') return { enabled: true, reason: 'forced on by user' };
  if (override === 'off') return { enabled: false, reason: 'forced off by user' };
  if (globalDefault === 'on') return { enabled: true, reason: 'forced on by settings default' };
  if (globalDefault === 'off') return { enabled: false, reason: 'forced off by settings default' };
  if (instanceType === 'ring') return { enabled: false, reason: 'ring instance' };
  return sharesGpu
    ? { enabled: false, reason: 'JACCL instance sharing its GPU with another model' }
    : { enabled: true, reason: 'JACCL instance alone on its GPU' };
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
 * Warnings for the instances sharing one GPU (all instances of one node share it):
 * two or more models there with fast synch on for any of them, whatever their types.
 * One code per mix, so each names its own way out:
 * `two_ring_fast_synch`: ring models only;
 * `ring_fast_synch_beside_jaccl`: ring and JACCL models together;
 * `two_jaccl_shared_gpu`: JACCL models only (never tested upstream).
 */
export function sharedGpuWarnings(instances: readonly PlacedInstance[]): Warning[] {
  const withFastSynch = instances.filter((i) => i.fastSynch);
  if (instances.length < 2 || withFastSynch.length === 0) return [];
  const names = withFastSynch.map((i) => i.model).join(', ');
  const ring = instances.filter((i) => i.instanceType === 'ring');
  const jaccl = instances.filter((i) => i.instanceType === 'jaccl');
  const spin =
    'With MLX_METAL_FAST_SYNCH=1 and more than one MLX process on one GPU, the GPU wait can spin forever: ' +
    'throughput collapses, or the GPU stays wedged at 100% until the Mac is rebooted (killing the process may not free it).';
  const code = sharedGpuWarningCode(instances.map((i) => i.instanceType));
  if (code === 'two_ring_fast_synch') {
    return [
      {
        code: 'two_ring_fast_synch',
        instanceIds: ring.map((i) => i.id),
        title: `Fast synch is on for ${names} while ${ring.length} ring models share the GPU`,
        risk: spin,
        fix: 'Relaunch the affected runners with fast synch off (MLX_METAL_FAST_SYNCH=0), the rule for ring instances.',
      },
    ];
  }
  if (code === 'two_jaccl_shared_gpu') {
    return [
      {
        code: 'two_jaccl_shared_gpu',
        instanceIds: jaccl.map((i) => i.id),
        title: `Fast synch is on for ${names} while ${jaccl.length} JACCL models share one GPU`,
        risk: `${spin} Two JACCL models on one GPU have never been tested upstream.`,
        fix: 'Run one JACCL model per Mac, or relaunch the JACCL runners with fast synch off and accept slower collectives.',
      },
    ];
  }
  return [
    {
      code: 'ring_fast_synch_beside_jaccl',
      instanceIds: withFastSynch.map((i) => i.id),
      title: `Fast synch is on for ${names} while ${instances.length} models (ring and JACCL) share the GPU`,
      risk: spin,
      fix: 'Relaunch the runners that have fast synch on with it off (MLX_METAL_FAST_SYNCH=0): a JACCL model keeps it on only while it is alone on its GPU.',
    },
  ];
}

/** The shared-GPU warning's code for the instance types on one GPU: which mix it is. */
export function sharedGpuWarningCode(types: readonly InstanceType[]): 'two_ring_fast_synch' | 'ring_fast_synch_beside_jaccl' | 'two_jaccl_shared_gpu' {
  if (!types.includes('jaccl')) return 'two_ring_fast_synch';
  return types.includes('ring') ? 'ring_fast_synch_beside_jaccl' : 'two_jaccl_shared_gpu';
}

/**
 * True when placing `candidate` beside `existing` puts two or more models on one GPU
 * with fast synch on (the candidate's or one already running): the control API then
 * asks for `acknowledgeRisk` before going ahead.
 */
export function wouldShareGpuWithFastSynch(existing: readonly PlacedInstance[], candidate: PlacedInstance): boolean {
  return sharedGpuWarnings([...existing, candidate]).length > 0;
}
