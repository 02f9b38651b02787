/**
 * Table-driven tests of the fast-synch policy (docs/domain.md, "Instance types and the
 * fast-synch policy"): ring instances off, JACCL on only while alone on its GPU, user
 * overrides first, then the settings default; the environment that carries the
 * decision; the shared-GPU warnings (any two models on one GPU with fast synch on).
 */
import { describe, expect, it } from 'vitest';
import { decideFastSynch, fastSynchEnv, sharedGpuWarnings, wouldShareGpuWithFastSynch, type PlacedInstance } from './fast-synch-policy';
import { effectiveFastSynch } from './runner-protocol';
import type { FastSynchOverride, InstanceType } from './snapshot';

const TYPES: InstanceType[] = ['ring', 'jaccl'];
const OVERRIDES: FastSynchOverride[] = ['auto', 'on', 'off'];

/** The expected decision for every combination, written out rather than derived. */
const DECISIONS: Array<[InstanceType, FastSynchOverride, FastSynchOverride, boolean, string]> = [
  // type,   override, default, enabled, reason
  ['ring', 'auto', 'auto', false, 'ring instance'],
  ['ring', 'auto', 'on', true, 'forced on by settings default'],
  ['ring', 'auto', 'off', false, 'forced off by settings default'],
  ['ring', 'on', 'auto', true, 'forced on by user'],
  ['ring', 'on', 'on', true, 'forced on by user'],
  ['ring', 'on', 'off', true, 'forced on by user'],
  ['ring', 'off', 'auto', false, 'forced off by user'],
  ['ring', 'off', 'on', false, 'forced off by user'],
  ['ring', 'off', 'off', false, 'forced off by user'],
  ['jaccl', 'auto', 'auto', true, 'JACCL instance alone on its GPU'],
  ['jaccl', 'auto', 'on', true, 'forced on by settings default'],
  ['jaccl', 'auto', 'off', false, 'forced off by settings default'],
  ['jaccl', 'on', 'auto', true, 'forced on by user'],
  ['jaccl', 'on', 'on', true, 'forced on by user'],
  ['jaccl', 'on', 'off', true, 'forced on by user'],
  ['jaccl', 'off', 'auto', false, 'forced off by user'],
  ['jaccl', 'off', 'on', false, 'forced off by user'],
  ['jaccl', 'off', 'off', false, 'forced off by user'],
];

describe('decideFastSynch', () => {
  it('has a row for every instance type x override x global default', () => {
    const keys = new Set(DECISIONS.map(([t, o, d]) => `${t}/${o}/${d}`));
    expect(keys.size).toBe(TYPES.length * OVERRIDES.length * OVERRIDES.length);
  });

  it.each(DECISIONS)('%s, override %s, default %s -> enabled %s (%s)', (type, override, globalDefault, enabled, reason) => {
    expect(decideFastSynch(type, override, globalDefault)).toEqual({ enabled, reason });
  });

  it('treats a missing global default as auto', () => {
    expect(decideFastSynch('ring', 'auto')).toEqual({ enabled: false, reason: 'ring instance' });
    expect(decideFastSynch('jaccl', 'auto')).toEqual({ enabled: true, reason: 'JACCL instance alone on its GPU' });
  });

  it('turns a JACCL instance off while another model shares its GPU (MLX: unreliable in any cross-stream workload)', () => {
    expect(decideFastSynch('jaccl', 'auto', 'auto', true)).toEqual({ enabled: false, reason: 'JACCL instance sharing its GPU with another model' });
    // The operator's and the settings' choices still win; ring is off either way.
    expect(decideFastSynch('jaccl', 'on', 'auto', true)).toEqual({ enabled: true, reason: 'forced on by user' });
    expect(decideFastSynch('jaccl', 'auto', 'on', true)).toEqual({ enabled: true, reason: 'forced on by settings default' });
    expect(decideFastSynch('ring', 'auto', 'auto', true)).toEqual({ enabled: false, reason: 'ring instance' });
  });
});

describe('fastSynchEnv', () => {
  it.each([true, false])('enabled=%s: both variables together make the runner see the same value', (enabled) => {
    const env = fastSynchEnv(enabled);
    expect(effectiveFastSynch(env)).toBe(enabled);
  });

  it.each([true, false])('enabled=%s: MLX_METAL_FAST_SYNCH alone (a runner on MLX directly) sees the same value', (enabled) => {
    const { MLX_METAL_FAST_SYNCH } = fastSynchEnv(enabled);
    expect(effectiveFastSynch({ MLX_METAL_FAST_SYNCH })).toBe(enabled);
    expect(effectiveFastSynch({ MLX_METAL_FAST_SYNCH, EXO_FAST_SYNCH: null })).toBe(enabled);
  });

  it.each([true, false])('enabled=%s: EXO_FAST_SYNCH alone (exo bootstrap) sees the same value', (enabled) => {
    const { EXO_FAST_SYNCH } = fastSynchEnv(enabled);
    expect(effectiveFastSynch({ EXO_FAST_SYNCH })).toBe(enabled);
  });

  it('uses the integer form MLX parses ("true" would count as 0)', () => {
    expect(fastSynchEnv(true).MLX_METAL_FAST_SYNCH).toBe('1');
    expect(fastSynchEnv(false).MLX_METAL_FAST_SYNCH).toBe('0');
  });

  it.each(DECISIONS)('decision for %s/%s/%s carried by the env reaches the runner', (type, override, globalDefault) => {
    const decision = decideFastSynch(type, override, globalDefault);
    expect(effectiveFastSynch(fastSynchEnv(decision.enabled))).toBe(decision.enabled);
  });

  it('overrides whatever the parent environment held, because EXO_FAST_SYNCH wins in exo bootstrap', () => {
    // A parent shell with MLX_METAL_FAST_SYNCH=1 must not leak through when the policy says off.
    const env = { ...{ MLX_METAL_FAST_SYNCH: '1', EXO_FAST_SYNCH: 'true' }, ...fastSynchEnv(false) };
    expect(effectiveFastSynch(env)).toBe(false);
  });
});

const ring = (id: string, fastSynch: boolean): PlacedInstance => ({ id, model: `model-${id}`, instanceType: 'ring', fastSynch });
const jaccl = (id: string, fastSynch = true): PlacedInstance => ({ id, model: `model-${id}`, instanceType: 'jaccl', fastSynch });

describe('sharedGpuWarnings', () => {
  const CASES: Array<[string, PlacedInstance[], Array<{ code: string; instanceIds: string[] }>]> = [
    ['nothing placed', [], []],
    ['one ring alone with fast synch on (hazard needs two processes)', [ring('a', true)], []],
    ['one ring alone with fast synch off', [ring('a', false)], []],
    ['two ring, all off (the policy default)', [ring('a', false), ring('b', false)], []],
    ['two ring, one on', [ring('a', false), ring('b', true)], [{ code: 'two_ring_fast_synch', instanceIds: ['a', 'b'] }]],
    ['two ring, both on', [ring('a', true), ring('b', true)], [{ code: 'two_ring_fast_synch', instanceIds: ['a', 'b'] }]],
    ['one ring (off) and one JACCL (off beside it: the policy)', [ring('a', false), jaccl('j', false)], []],
    [
      'one ring (off) beside a JACCL still on (launched alone, then a model joined)',
      [ring('a', false), jaccl('j')],
      [{ code: 'ring_fast_synch_beside_jaccl', instanceIds: ['j'] }],
    ],
    [
      'one ring forced on beside a JACCL (on): two processes spinning',
      [ring('a', true), jaccl('j')],
      [{ code: 'ring_fast_synch_beside_jaccl', instanceIds: ['a', 'j'] }],
    ],
    ['one ring forced on beside a JACCL forced off', [ring('a', true), jaccl('j', false)], [{ code: 'ring_fast_synch_beside_jaccl', instanceIds: ['a'] }]],
    ['one JACCL alone', [jaccl('j')], []],
    ['two JACCL', [jaccl('j1'), jaccl('j2')], [{ code: 'two_jaccl_shared_gpu', instanceIds: ['j1', 'j2'] }]],
    ['two JACCL, one on', [jaccl('j1', false), jaccl('j2')], [{ code: 'two_jaccl_shared_gpu', instanceIds: ['j1', 'j2'] }]],
    ['two JACCL, both off (the policy beside another model)', [jaccl('j1', false), jaccl('j2', false)], []],
    ['three: two ring all off and one JACCL off', [ring('a', false), ring('b', false), jaccl('j', false)], []],
    [
      'three: two ring with one on and one JACCL off (a mixed GPU: one warning naming the one on)',
      [ring('a', true), jaccl('j', false), ring('b', false)],
      [{ code: 'ring_fast_synch_beside_jaccl', instanceIds: ['a'] }],
    ],
    [
      'three ring, one on: names all three ring instances',
      [ring('a', false), ring('b', false), ring('c', true)],
      [{ code: 'two_ring_fast_synch', instanceIds: ['a', 'b', 'c'] }],
    ],
    [
      'three: one ring on and two JACCL on',
      [ring('a', true), jaccl('j1'), jaccl('j2')],
      [{ code: 'ring_fast_synch_beside_jaccl', instanceIds: ['a', 'j1', 'j2'] }],
    ],
  ];

  it.each(CASES)('%s', (_name, instances, expected) => {
    const warnings = sharedGpuWarnings(instances);
    expect(warnings.map((w) => ({ code: w.code, instanceIds: w.instanceIds }))).toEqual(expected);
  });

  it('says what can happen and the fix, and names the models with fast synch on', () => {
    const [w] = sharedGpuWarnings([ring('a', false), ring('b', true)]);
    expect(w?.title).toContain('model-b');
    expect(w?.title).not.toContain('model-a');
    expect(w?.risk).toMatch(/throughput collapses/);
    expect(w?.risk).toMatch(/reboot/);
    expect(w?.fix).toMatch(/MLX_METAL_FAST_SYNCH=0/);
  });

  it('a mixed GPU names only the models with fast synch on, and says a JACCL model keeps it only alone', () => {
    const [w] = sharedGpuWarnings([ring('a', false), jaccl('j')]);
    expect(w?.title).toBe('Fast synch is on for model-j while 2 models (ring and JACCL) share the GPU');
    expect(w?.fix).toMatch(/alone on its GPU/);
  });

  it('JACCL warning says it was never tested upstream and how to avoid it', () => {
    const [w] = sharedGpuWarnings([jaccl('j1'), jaccl('j2')]);
    expect(w?.risk).toMatch(/never been tested/);
    expect(w?.risk).toMatch(/reboot/);
    expect(w?.fix).toMatch(/one JACCL model per Mac/);
  });

  it('does not depend on input order for which instances are named', () => {
    const a = sharedGpuWarnings([ring('b', true), ring('a', false)]);
    expect(new Set(a[0]?.instanceIds)).toEqual(new Set(['a', 'b']));
  });
});

describe('wouldShareGpuWithFastSynch', () => {
  const CASES: Array<[string, PlacedInstance[], PlacedInstance, boolean]> = [
    ['first ring instance with fast synch on, GPU empty', [], ring('c', true), false],
    ['first JACCL instance, GPU empty', [], jaccl('j'), false],
    ['ring off beside ring off (the safe pair)', [ring('a', false)], ring('c', false), false],
    ['ring on beside ring off', [ring('a', false)], ring('c', true), true],
    ['ring off beside ring on', [ring('a', true)], ring('c', false), true],
    ['ring on beside a JACCL', [jaccl('j')], ring('c', true), true],
    ['ring off beside a JACCL still on: the JACCL would share its GPU with fast synch on', [jaccl('j')], ring('c', false), true],
    ['ring off beside a JACCL off', [jaccl('j', false)], ring('c', false), false],
    ['ring off joining an existing risky pair (it becomes part of it)', [ring('a', true), ring('b', false)], ring('c', false), true],
    ['JACCL off joining two ring with fast synch on', [ring('a', true), ring('b', true)], jaccl('j', false), true],
    ['JACCL off (the policy beside a model) joining ring off', [ring('a', false)], jaccl('j', false), false],
    ['JACCL on beside JACCL', [jaccl('j1')], jaccl('j2'), true],
  ];

  it.each(CASES)('%s -> %s', (_name, existing, candidate, expected) => {
    expect(wouldShareGpuWithFastSynch(existing, candidate)).toBe(expected);
  });
});
