/**
 * The one warning diff: an exo warning (set by the attachment through the node) is
 * recorded `warning_raised` and `warning_cleared` in the node's event log as a local one
 * is, and so reaches the diagnosis's policy report. It used to be only appended to the
 * snapshot, so no exo_* warning ever reached the log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Warning } from '../../../shared/snapshot';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { buildPolicyReport } from '../diagnostics/policy-report';
import { isEventOf } from '../node/node-event';
import { NO_EXO } from '../node/node-types';
import { WarningDiff, type WarningEvent } from './warning-diff';

const lost: Warning = {
  code: 'exo_node_lost',
  instanceIds: ['exo:mlx-community/Llama-3.2-1B-Instruct-4bit'],
  title: 'studio-b left the cluster',
  risk: 'its runners are gone',
  fix: 'bring it back',
};

let fixture: NodeFixture | null = null;
afterEach(async () => {
  await fixture?.cleanup();
  fixture = null;
});

describe('the warning diff', () => {
  it('records a warning once when it appears and once when it goes, by code and instances', () => {
    const events: WarningEvent[] = [];
    const diff = new WarningDiff((e) => events.push(e));
    diff.update([lost]);
    diff.update([lost]);
    diff.update([{ ...lost, instanceIds: ['other'] }]);
    diff.update([]);
    expect(events.map((e) => [e.kind, e.data.instanceIds[0]])).toEqual([
      ['warning_raised', lost.instanceIds[0]],
      ['warning_raised', 'other'],
      ['warning_cleared', lost.instanceIds[0]],
      ['warning_cleared', 'other'],
    ]);
    expect(diff.warnings).toEqual([]);
  });

  it("takes exo's warnings into the node's event log and the diagnosis's policy report", () => {
    fixture = createNodeFixture();
    const { node } = fixture;
    node.setExoView({ ...NO_EXO, warnings: [lost] });
    expect(node.snapshot().warnings).toEqual([lost]);
    const raised = node.recentEvents().filter(isEventOf('warning_raised'));
    expect(raised.map((e) => e.data)).toEqual([{ code: 'exo_node_lost', instanceIds: lost.instanceIds }]);

    node.setExoView(NO_EXO);
    const report = buildPolicyReport(node.snapshot(), node.recentEvents());
    expect(report.warningEvents.map((e) => [e.kind, e.code])).toEqual([
      ['warning_raised', 'exo_node_lost'],
      ['warning_cleared', 'exo_node_lost'],
    ]);
    expect(report.warnings).toEqual([]);
  });
});
