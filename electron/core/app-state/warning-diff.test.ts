/**
 * The one warning diff: an exo warning (the attachment's, registered with the node's hub
 * beside the node's own) is recorded `warning_raised` and `warning_cleared` in the node's
 * event log as a local one is, and so reaches the diagnosis's policy report. It used to
 * be only appended to the snapshot, so no exo_* warning ever reached the log.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Warning } from '../../../shared/snapshot';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { buildPolicyReport } from '../diagnostics/policy-report';
import { isEventOf } from '../events/node-event';
import { ExoAttachment } from '../exo/attach/exo-attachment';
import { demoCluster, startFakeExo, type FakeExo } from '../../../test/support/fake-exo';
import { WarningDiff, type WarningEvent } from './warning-diff';

const lost: Warning = {
  code: 'exo_node_lost',
  instanceIds: ['exo:mlx-community/Llama-3.2-1B-Instruct-4bit'],
  title: 'studio-b left the cluster',
  risk: 'its runners are gone',
  fix: 'bring it back',
};

let fixture: NodeFixture | null = null;
let fake: FakeExo | null = null;
let attachment: ExoAttachment | null = null;
afterEach(async () => {
  await attachment?.stop();
  await fake?.close();
  await fixture?.cleanup();
  attachment = fake = fixture = null;
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

  it("takes a real attachment's exo warning into the node's event log and the diagnosis's policy report", async () => {
    fixture = createNodeFixture();
    const { node } = fixture;
    fake = await startFakeExo({ cluster: demoCluster() });
    attachment = new ExoAttachment({ hub: node.hub, saveUrl: async () => undefined, exoLogDir: null, offerUrl: null });
    await attachment.attach(fake.url);
    await expect.poll(() => node.snapshot().exo?.connected).toBe(true);

    // One failed poll: exo is unreachable for a round, then answers again.
    fake.inject('status500', { path: '/state/tasks', times: 1 });
    const codes = (kind: 'warning_raised' | 'warning_cleared') =>
      node
        .recentEvents()
        .filter(isEventOf(kind))
        .map((e) => e.data.code);
    await expect.poll(() => codes('warning_raised'), { timeout: 15_000 }).toContain('exo_unreachable');
    await expect.poll(() => codes('warning_cleared'), { timeout: 15_000 }).toContain('exo_unreachable');

    const report = buildPolicyReport(node.snapshot(), node.recentEvents());
    expect(report.warningEvents.filter((e) => e.code === 'exo_unreachable').map((e) => e.kind)).toEqual(['warning_raised', 'warning_cleared']);
    expect(report.warnings.map((w) => w.code)).not.toContain('exo_unreachable');
  });
});
