/** The check's policy override: it wins while set, its undo gives the operator's setting back, and it refuses unknown names. */
import { describe, expect, it } from 'vitest';
import type { SharingPolicy } from '../../../shared/sharing-policy';
import { createPolicyOverride } from './policy-override';

describe('createPolicyOverride', () => {
  it('overrides the operator policy until undone, then follows the setting as it is then', async () => {
    let setting: SharingPolicy = 'decode_first';
    const policy = createPolicyOverride(() => setting);
    expect(policy.current()).toBe('decode_first');
    const undo = await policy.apply('off');
    expect(policy.current()).toBe('off');
    // The operator changes the setting during the check: the check's run keeps its policy.
    setting = 'off';
    const undoInner = await policy.apply('decode_first');
    expect(policy.current()).toBe('decode_first');
    await undoInner();
    expect(policy.current()).toBe('off');
    await undo();
    setting = 'decode_first';
    expect(policy.current()).toBe('decode_first');
  });

  it('refuses a policy it does not know and leaves the current one', async () => {
    const policy = createPolicyOverride(() => 'off');
    await expect(policy.apply('fastest')).rejects.toThrow();
    expect(policy.current()).toBe('off');
  });
});
