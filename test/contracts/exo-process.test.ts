import { describe, expect, it } from 'vitest';
import { exoSectionFixture } from '../support/exo-snapshot-fixture';
import { exoProcessState } from '../support/exo-process-fixture';
import { exoFastSynchMismatchWarning, thisMacFastSynch, withThisMacFastSynch } from '../../shared/exo-process';

describe('exoFastSynchMismatchWarning', () => {
  it('warns only when exo logged the other value', () => {
    const set = { enabled: false, reason: 'ring only (1 instance): off' };
    expect(exoFastSynchMismatchWarning({ fastSynch: null })).toBeNull();
    expect(exoFastSynchMismatchWarning({ fastSynch: { ...set, observed: null, mismatch: false } })).toBeNull();
    expect(exoFastSynchMismatchWarning({ fastSynch: { ...set, observed: false, mismatch: false } })).toBeNull();
    const warning = exoFastSynchMismatchWarning({ fastSynch: { ...set, observed: true, mismatch: true } });
    expect(warning).toMatchObject({
      code: 'exo_fast_synch_mismatch',
      instanceIds: [],
      title: 'exo runs with fast synch on, but exobar started it with fast synch off',
    });
    expect(warning?.risk).toMatch(/wedged until reboot/);
    expect(warning?.fix).toMatch(/exobar wants off: ring only/);
  });
});

describe('thisMacFastSynch', () => {
  const set = { enabled: false, reason: 'ring only (1 instance): off' };
  it("is exobar's value while exobar runs exo, exo's own when its log says otherwise", () => {
    expect(thisMacFastSynch({ ownsProcess: false, fastSynch: { ...set, observed: false, mismatch: false } })).toBeNull();
    expect(thisMacFastSynch({ ownsProcess: true, fastSynch: { ...set, observed: null, mismatch: false } })).toEqual({ enabled: false, source: 'exobar' });
    expect(thisMacFastSynch({ ownsProcess: true, fastSynch: { ...set, observed: true, mismatch: true } })).toEqual({ enabled: true, source: 'exo_log' });
  });
});

describe('withThisMacFastSynch', () => {
  // The section's node 12D3KooWB has exo's default assumed (on); exobar runs that node's exo with fast synch off.
  const section = exoSectionFixture();
  it("gives the node of the exo exobar runs exobar's value, and leaves the others", () => {
    const out = withThisMacFastSynch(section, exoProcessState({ nodeId: '12D3KooWB' }));
    expect(out.nodes.map((n) => [n.nodeId, n.fastSynch])).toEqual([
      ['12D3KooWA', { enabled: false, source: 'exobar' }],
      ['12D3KooWB', { enabled: false, source: 'exobar' }],
    ]);
    expect(section.nodes[1]!.fastSynch).toEqual({ enabled: true, source: 'assumed' });
  });

  it('changes nothing when exobar does not run exo, or runs another node', () => {
    expect(withThisMacFastSynch(section, null)).toBe(section);
    expect(withThisMacFastSynch(section, exoProcessState({ nodeId: '12D3KooWB', ownsProcess: false, status: 'stopped', pid: null }))).toBe(section);
    expect(withThisMacFastSynch(section, exoProcessState({ nodeId: 'someone-else' }))).toBe(section);
  });
});
