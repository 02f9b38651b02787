/**
 * The sharing policy the node reads (`sharingPolicy` getter): the operator's setting
 * `sharing.policy`, unless a check has set one for a run. The check's experiment 2
 * compares `off` with `decode_first` in one run; the override never touches the saved
 * settings, and its undo hands the decision back to the operator's setting.
 */
import { SharingPolicySchema, type SharingPolicy } from '../../../shared/sharing-policy';

export interface PolicyOverride {
  /** The policy in force now: the override while one is set, else the operator's. */
  current(): SharingPolicy;
  /** Sets `policy` until the returned undo is called (unknown names are refused). */
  apply(policy: string): Promise<() => Promise<void>>;
}

/** `operator` is read at every decision, so a settings change applies once the override is undone. */
export function createPolicyOverride(operator: () => SharingPolicy): PolicyOverride {
  let override: SharingPolicy | null = null;
  return {
    current: () => override ?? operator(),
    apply(policy) {
      const parsed = SharingPolicySchema.safeParse(policy);
      if (!parsed.success) return Promise.reject(new Error(`unknown sharing policy "${policy}"; known: ${SharingPolicySchema.options.join(', ')}`));
      // Nested runs undo in order: each gives back what was in force before it.
      const previous = override;
      override = parsed.data;
      return Promise.resolve(() => {
        override = previous;
        return Promise.resolve();
      });
    },
  };
}
