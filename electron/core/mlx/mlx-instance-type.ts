/**
 * Which instance types the local MLX runner can serve.
 *
 * The runner is one process that never joins a JACCL group, so a `jaccl` instance of it
 * would only turn fast synch on (the policy's rule for JACCL) with nothing to gain:
 * the configuration of the single-machine wedge reported in mlx#3830. It is refused
 * with a clear error instead; `ring` (fast synch off by default) is what it runs as.
 */
import type { InstanceType } from '../../../shared/snapshot';

/** Why the local MLX runner cannot serve this instance type, or null when it can. */
export function mlxInstanceTypeProblem(instanceType: InstanceType): string | null {
  if (instanceType === 'jaccl') {
    return (
      'the local MLX runner is a single process and never joins a JACCL group, so a jaccl instance ' +
      'would only turn fast synch on with nothing to gain (the wedge of mlx#3830); create it as a ring instance'
    );
  }
  return null;
}
