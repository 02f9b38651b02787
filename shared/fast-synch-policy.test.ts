/**
 * Table-driven tests of the fast-synch policy (docs/domain.md, "Instance types and the
 * fast-synch policy"): ring instances off, JACCL on, user overrides first, then the
 * settings default; the environment that carries the decision; the shared-GPU warnings.
 */
import { describe, expect, it } from 'vitest';
import { decideFastSynch, fastSynchEnv, sharedGpuWarnings, wouldCreateRingFastSynchRisk, type PlacedInstance } from './fast-synch-policy';
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
  ['jaccl', 'auto', 'auto', true, 'JACCL instance'],
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
    expect(decideFastSynch('jaccl', 'auto')).toEqual({ enabled: true, reason: 'JACCL instance' });
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
    ['one ring (off) and one JACCL (on): the exo policy', [ring('a', false), jaccl('j')], []],
    [
      'one ring forced on beside a JACCL (on): two processes spinning',
      [ring('a', true), jaccl('j')],
      [{ code: 'ring_fast_synch_beside_jaccl', instanceIds: ['a'] }],
    ],
    ['one ring forced on beside a JACCL forced off', [ring('a', true), jaccl('j', false)], []],
    ['one JACCL alone', [jaccl('j')], []],
    ['two JACCL', [jaccl('j1'), jaccl('j2')], [{ code: 'two_jaccl_shared_gpu', instanceIds: ['j1', 'j2'] }]],
    [
      'two JACCL, both forced off (never tested upstream either)',
      [jaccl('j1', false), jaccl('j2', false)],
      [{ code: 'two_jaccl_shared_gpu', instanceIds: ['j1', 'j2'] }],
    ],
    ['three: two ring all off and one JACCL', [ring('a', false), ring('b', false), jaccl('j')], []],
    [
      'three: two ring with one on and one JACCL (the JACCL is not named)',
      [ring('a', true), jaccl('j'), ring('b', false)],
      [{ code: 'two_ring_fast_synch', instanceIds: ['a', 'b'] }],
    ],
    [
      'three ring, one on: names all three ring instances',
      [ring('a', false), ring('b', false), ring('c', true)],
      [{ code: 'two_ring_fast_synch', instanceIds: ['a', 'b', 'c'] }],
    ],
    [
      'three: one ring on and two JACCL',
      [ring('a', true), jaccl('j1'), jaccl('j2')],
      [
        { code: 'ring_fast_synch_beside_jaccl', instanceIds: ['a'] },
        { code: 'two_jaccl_shared_gpu', instanceIds: ['j1', 'j2'] },
      ],
    ],
    [
      'four: both situations at once',
      [ring('a', true), ring('b', false), jaccl('j1'), jaccl('j2')],
      [
        { code: 'two_ring_fast_synch', instanceIds: ['a', 'b'] },
        { code: 'two_jaccl_shared_gpu', instanceIds: ['j1', 'j2'] },
      ],
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

describe('wouldCreateRingFastSynchRisk', () => {
  const CASES: Array<[string, PlacedInstance[], PlacedInstance, boolean]> = [
    ['first ring instance with fast synch on, GPU empty', [], ring('c', true), false],
    ['ring off beside ring off (the safe pair)', [ring('a', false)], ring('c', false), false],
    ['ring on beside ring off', [ring('a', false)], ring('c', true), true],
    ['ring off beside ring on', [ring('a', true)], ring('c', false), true],
    ['ring on beside a JACCL only', [jaccl('j')], ring('c', true), false],
    ['ring off joining an existing risky pair (it becomes part of it)', [ring('a', true), ring('b', false)], ring('c', false), true],
    ['JACCL candidate is never gated by the ring rule', [ring('a', true), ring('b', true)], jaccl('j'), false],
    ['JACCL beside JACCL: warned, not gated by this rule', [jaccl('j1')], jaccl('j2'), false],
  ];

  it.each(CASES)('%s -> %s', (_name, existing, candidate, expected) => {
    expect(wouldCreateRingFastSynchRisk(existing, candidate)).toBe(expected);
  });
});
