import { describe, expect, it } from 'vitest';
import { decideExoFastSynch, ExoFastSynchPlanSchema, ExoRestartRequestSchema, type ExoPlannedInstance } from './exo-fast-synch';

const ring = (id: string, nodeCount = 2): ExoPlannedInstance => ({ id, model: `m-${id}`, instanceType: 'ring', nodeCount });
const jaccl = (id: string, nodeCount = 2): ExoPlannedInstance => ({ id, model: `m-${id}`, instanceType: 'jaccl', nodeCount });

describe('decideExoFastSynch', () => {
  const table: Array<{ name: string; instances: ExoPlannedInstance[]; override?: 'auto' | 'on' | 'off'; ack?: boolean; enabled: boolean; reason: RegExp }> = [
    { name: 'nothing planned', instances: [], enabled: false, reason: /nothing planned/ },
    { name: 'one ring', instances: [ring('a')], enabled: false, reason: /^ring only \(1 instance\)/ },
    { name: 'two ring', instances: [ring('a'), ring('b')], enabled: false, reason: /^ring only \(2 instances\)/ },
    { name: 'one JACCL across two Macs', instances: [jaccl('a')], enabled: true, reason: /^one JACCL instance alone on this Mac: on$/ },
    {
      name: 'two JACCL sharing this Mac',
      instances: [jaccl('a'), jaccl('b')],
      enabled: false,
      reason: /^JACCL only \(2 instances\) sharing this Mac's GPU: off/,
    },
    { name: 'a single-Mac JACCL counts as ring', instances: [jaccl('a', 1)], enabled: false, reason: /^ring only/ },
    { name: 'mixed', instances: [ring('a'), jaccl('b')], enabled: false, reason: /^mixed \(1 ring instance, 1 JACCL instance\).*JACCL instances run slower/ },
    { name: 'forced off beside JACCL', instances: [jaccl('a')], override: 'off', enabled: false, reason: /forced off by the operator/ },
    { name: 'forced on with one ring', instances: [ring('a')], override: 'on', enabled: true, reason: /^forced on by the operator$/ },
    { name: 'forced on, two ring, acknowledged', instances: [ring('a'), ring('b')], override: 'on', ack: true, enabled: true, reason: /risk acknowledged/ },
  ];
  for (const row of table) {
    it(`${row.name} → ${row.enabled ? 'on' : 'off'}`, () => {
      const decision = decideExoFastSynch({ instances: row.instances, override: row.override ?? 'auto', acknowledgeRisk: row.ack ?? false });
      expect(decision).toMatchObject({ ok: true, enabled: row.enabled, reason: expect.stringMatching(row.reason) });
    });
  }

  it('refuses to force fast synch on beside two instances of any kind without acknowledgeRisk, as a local launch does', () => {
    for (const instances of [
      [ring('a'), ring('b', 1)],
      [ring('a'), jaccl('b')],
      [jaccl('a'), jaccl('b')],
    ]) {
      const decision = decideExoFastSynch({ instances, override: 'on', acknowledgeRisk: false });
      expect(decision).toMatchObject({ ok: false, code: 'fast_synch_shared_gpu', message: expect.stringMatching(/2 instances.*acknowledgeRisk/) });
    }
  });
});

describe('request schemas', () => {
  it('fill the defaults, and refuse unknown fields and bad kinds', () => {
    expect(ExoFastSynchPlanSchema.parse({ instances: [ring('a')] })).toEqual({ instances: [ring('a')], override: 'auto', acknowledgeRisk: false });
    expect(ExoRestartRequestSchema.parse({})).toEqual({ consent: false, spanningInstances: [] });
    expect(ExoFastSynchPlanSchema.safeParse({ instances: [{ ...ring('a'), instanceType: 'tensor' }] }).success).toBe(false);
    expect(ExoRestartRequestSchema.safeParse({ consent: true, force: true }).success).toBe(false);
  });
});
