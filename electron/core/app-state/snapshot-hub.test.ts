/**
 * The snapshot hub: sections registered by their owners make the snapshot, each change is
 * a new version, and every provider's warnings go through the one diff into the event log.
 */
import { describe, expect, it } from 'vitest';
import type { ExoInstanceSnapshot, Warning } from '../../../shared/snapshot';
import { buildPolicyReport } from '../diagnostics/policy-report';
import { EventLog } from '../node/event-log';
import { isEventOf } from '../events/node-event';
import { SnapshotHub } from './snapshot-hub';

const lost: Warning = { code: 'exo_node_lost', instanceIds: ['exo:1'], title: 'studio-b left the cluster', risk: 'its runners are gone', fix: 'bring it back' };

function hubWithLog(): { hub: SnapshotHub; log: EventLog } {
  const log = new EventLog();
  return { hub: new SnapshotHub({ version: '9.9.9', record: (event) => log.record(event) }), log };
}

describe('the snapshot hub', () => {
  it('builds the snapshot from the registered sections: instances added in order, other fields from their owner, the rest empty', () => {
    const { hub } = hubWithLog();
    const local = { id: 'local-1' } as unknown as ExoInstanceSnapshot;
    const remote = { id: 'exo:1' } as unknown as ExoInstanceSnapshot;
    hub.section('node', () => ({ instances: [local], rejectedInputs: { http: 2 } }));
    hub.section('exo', () => ({ instances: [remote], exoOffer: { url: 'http://127.0.0.1:52415', nodeId: 'n', foundAt: 0 } }));
    const snapshot = hub.snapshot();
    expect(snapshot.instances.map((i) => i.id)).toEqual(['local-1', 'exo:1']);
    expect(snapshot.rejectedInputs).toEqual({ http: 2 });
    expect(snapshot.exoOffer?.url).toBe('http://127.0.0.1:52415');
    expect(snapshot).toMatchObject({ version: '9.9.9', launch: null, exo: null, exoProcess: null, apiBaseUrl: null, warnings: [] });
  });

  it("a section's change is a new version, built once and shared; a removed section leaves the snapshot", () => {
    const { hub } = hubWithLog();
    let url: string | null = null;
    const api = hub.section('api', () => ({ apiBaseUrl: url }));
    const before = hub.snapshot();
    expect(hub.snapshot()).toBe(before);
    url = 'http://127.0.0.1:52416/v1';
    api.changed();
    const after = hub.snapshot();
    expect(after.seq).toBeGreaterThan(before.seq);
    expect(after.apiBaseUrl).toBe(url);
    api.remove();
    expect(hub.snapshot().apiBaseUrl).toBeNull();
    // A removed registration's later changes are nobody's: no new version.
    const seq = hub.snapshot().seq;
    api.changed();
    expect(hub.snapshot().seq).toBe(seq);
  });

  it('refuses a second registration under a name already taken', () => {
    const { hub } = hubWithLog();
    hub.section('launch', () => ({}));
    expect(() => hub.section('launch', () => ({}))).toThrow(/already registered/);
    hub.warnings('exo', () => []);
    expect(() => hub.warnings('exo', () => [])).toThrow(/already registered/);
  });

  it("an exo warning is raised and cleared in the event log as a local one is, and reaches the diagnosis's policy report", () => {
    const { hub, log } = hubWithLog();
    let exoWarnings: Warning[] = [];
    const exo = hub.warnings('exo', () => exoWarnings);
    exoWarnings = [lost];
    exo.changed();
    expect(hub.snapshot().warnings).toEqual([lost]);
    expect(
      log
        .all()
        .filter(isEventOf('warning_raised'))
        .map((e) => e.data),
    ).toEqual([{ code: 'exo_node_lost', instanceIds: lost.instanceIds }]);
    // Another change elsewhere raises nothing again.
    hub.changed();
    exoWarnings = [];
    exo.changed();
    const report = buildPolicyReport(hub.snapshot(), log.all());
    expect(report.warningEvents.map((e) => [e.kind, e.code])).toEqual([
      ['warning_raised', 'exo_node_lost'],
      ['warning_cleared', 'exo_node_lost'],
    ]);
    expect(report.warnings).toEqual([]);
  });
});
