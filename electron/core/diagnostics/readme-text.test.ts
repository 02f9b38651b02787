/**
 * The bundle README's words for one of a kind: "1 request examined", "1 byte", "1 finding
 * points at a bug" (never "1 requests", "finding(s)").
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_DIAGNOSIS_OPTIONS, type Diagnosis } from './diagnosis-types';
import { readmeText } from './readme-text';
import { REDACTION_KINDS, type RedactionCounts } from './redaction';

const noRedactions = Object.fromEntries(REDACTION_KINDS.map((k) => [k, 0])) as RedactionCounts;

function diagnosis(overrides: Partial<Diagnosis>): Diagnosis {
  return {
    options: DEFAULT_DIAGNOSIS_OPTIONS,
    examinedRequests: 1,
    findings: [],
    decodeFindings: [],
    summary: {},
    runnerIncidents: [],
    soloReference: [],
    fastSynchOn: [],
    pacing: [],
    ...overrides,
  };
}

const input = (d: Diagnosis | null) => ({
  version: '0.1.0',
  exportedAt: '2026-12-03T20:00:00.000Z',
  source: 'running node' as const,
  files: [
    { name: 'README.txt', bytes: null },
    { name: 'snapshot.json', bytes: 1 },
    { name: 'timeline.csv', bytes: 2048 },
  ],
  redactions: noRedactions,
  truncated: [],
  diagnosis: d,
});

describe('the bundle README', () => {
  it('lists itself without a size and the others with theirs, "1 byte" in the singular', () => {
    const text = readmeText(input(null));
    expect(text).toMatch(/^README\.txt: this file$/m);
    expect(text).toContain('snapshot.json (1 byte):');
    expect(text).toContain('timeline.csv (2048 bytes):');
  });

  it('says "1 request examined" and "1 finding points at a bug … report it"', () => {
    const finding = { requestId: 'chatcmpl-a', model: 'm', cause: 'node_dispatch_delay', explanation: 'held back.', bugToReport: true };
    const text = readmeText(input(diagnosis({ findings: [finding] as unknown as Diagnosis['findings'], summary: { node_dispatch_delay: 1 } })));
    expect(text).toContain('1 request examined.');
    expect(text).toContain('1 finding points at a bug in exobar itself (node_dispatch_delay): please report it.');
    expect(text).not.toContain('(s)');
    expect(readmeText(input(diagnosis({ examinedRequests: 1 })))).toContain('1 request examined; no time to first token');
  });
});
