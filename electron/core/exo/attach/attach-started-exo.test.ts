/**
 * The exo exobar runs is attached to as soon as its API answers: the real core starts
 * the fake exo command (a real child process, the setting `exo.start` as
 * `--exo-start` sets it) with no `exo.url`, and the snapshot shows the cluster.
 */
import { describe, expect, it } from 'vitest';
import { exoCoreRig } from '../../../../test/support/fake-exo-exe/core-fixture';
import { EXO_START_MS } from '../../../../test/support/fake-exo-exe/harness';
import { loadSettings } from '../../settings/settings-store';
import { eventually, sleep } from '../../../../test/support/eventually';

describe('the exo exobar starts', () => {
  it('is attached once its API answers, without an exo address, and the address is not saved', async () => {
    const { rig, apiPort, snapshot } = await exoCoreRig({ start: true });
    expect(rig.core.settings.exo.url).toBeNull();
    await eventually(async () => (await snapshot()).exo?.connected === true, EXO_START_MS, 'the cluster in the snapshot');
    const shown = await snapshot();
    const nodeId = rig.core.exoProcess.state().nodeId;
    expect(shown.exoProcess).toMatchObject({ status: 'running', ownsProcess: true });
    expect(shown.exo).toMatchObject({ url: `http://127.0.0.1:${apiPort}`, connected: true, nodeId });
    expect(shown.exo?.nodes.map((n) => [n.nodeId, n.isAttachedNode])).toEqual([[nodeId, true]]);
    // Attached, so nothing is offered.
    expect(shown.exoOffer).toBeNull();
    expect(rig.core.exo.url).toBe(`http://127.0.0.1:${apiPort}`);
    expect((await loadSettings(rig.core.dataDir)).settings.exo.url).toBeNull();
  });

  it('is not attached while it is not started', async () => {
    const { rig, snapshot } = await exoCoreRig();
    await sleep(300);
    expect((await snapshot()).exo).toBeNull();
    expect(rig.core.exo.url).toBeNull();
  });
});
