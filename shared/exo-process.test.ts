import { describe, expect, it } from 'vitest';
import { exoFastSynchMismatchWarning, thisMacFastSynch } from './exo-process';

describe('exoFastSynchMismatchWarning', () => {
  it('warns only when exo logged the other value', () => {
    const set = { enabled: false, reason: 'ring only (1 instance): off' };
    expect(exoFastSynchMismatchWarning({ fastSynch: null })).toBeNull();
    expect(exoFastSynchMismatchWarning({ fastSynch: { ...set, observed: null, mismatch: false } })).toBeNull();
    expect(exoFastSynchMismatchWarning({ fastSynch: { ...set, observed: false, mismatch: false } })).toBeNull();
    const warning = exoFastSynchMismatchWarning({ fastSynch: { ...set, observed: true, mismatch: true } });
    expect(warning).toMatchObject({ code: 'exo_fast_synch_mismatch', instanceIds: [], title: 'exo runs with fast synch on, but exobar started it with fast synch off' });
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
