/**
 * Attach mode reads exo's log where the exo exobar runs keeps it: an EXO_HOME in the
 * settings' `exo.env` moves it, and attach mode follows (read at each attach).
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotHub } from '../../app-state/snapshot-hub';
import { startFakeExo, type FakeExo, demoCluster } from '../../../../test/support/fake-exo';
import { ExoAttachment } from './exo-attachment';

let fake: FakeExo | null = null;
let attachment: ExoAttachment | null = null;
let home: string | null = null;
afterEach(async () => {
  await attachment?.stop();
  await fake?.close();
  if (home) await rm(home, { recursive: true, force: true });
  attachment = fake = home = null;
});

describe("exo's log in attach mode", () => {
  it("follows EXO_HOME from exo.env: the fast-synch line is read there, and the bundle's log folder is that one", async () => {
    home = await mkdtemp(join(tmpdir(), 'exobar-exo-home-'));
    const logDir = join(home, 'exo-b', 'exo_log');
    await mkdir(logDir, { recursive: true });
    await writeFile(join(logDir, 'exo.log'), 'Starting EXO\nFAST_SYNCH forced OFF\n');
    fake = await startFakeExo({ cluster: demoCluster() });
    const settingsEnv: Record<string, string> = {};
    const hub = new SnapshotHub({ record: () => undefined });
    attachment = new ExoAttachment({
      hub,
      saveUrl: async () => undefined,
      offerUrl: null,
      // exobar's environment has no EXO_HOME; the settings' exo.env gets one before the attach.
      exoEnv: () => ({ HOME: home!, ...settingsEnv }),
    });
    settingsEnv.EXO_HOME = 'exo-b';
    await attachment.attach(fake.url);
    const attached = () => hub.snapshot().exo?.nodes.find((n) => n.nodeId === fake!.cluster.nodeId);
    await expect.poll(() => attached()?.fastSynch, { timeout: 15_000 }).toEqual({ enabled: false, source: 'exo_log' });
    expect(attachment.bundleSource()?.logDir).toBe(logDir);
  });
});
