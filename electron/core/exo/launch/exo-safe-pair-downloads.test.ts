/**
 * Models exo finished downloading are what the safe pair on exo picks from (with the
 * settings at their built-in pair): a completed download counts, an ongoing or a failed
 * one does not.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../../../shared/api';
import {
  FakeExoCluster,
  startFakeDownload,
  GPT_OSS_20B,
  LLAMA_1B,
  LLAMA_3B,
  QWEN_30B,
  startServingExo,
  type ServingExo,
} from '../../../../test/support/fake-exo';
import { planExoSafePair } from './exo-safe-pair';

const GB = 1024 ** 3;
let exo: ServingExo | null = null;
afterEach(async () => {
  await exo?.close();
  exo = null;
});

describe('the safe pair on exo and downloads', () => {
  it('offers the models whose download completed, not one still downloading or failed', async () => {
    const cluster = new FakeExoCluster();
    cluster.addNode({ name: 'studio-a', ramGb: 96 });
    cluster.nodes[0]!.downloadCards = 123;
    const small = startFakeDownload(cluster, 'studio-a', LLAMA_1B, 0.7 * GB);
    const medium = startFakeDownload(cluster, 'studio-a', LLAMA_3B, 1.8 * GB);
    startFakeDownload(cluster, 'studio-a', GPT_OSS_20B, 12 * GB).fail('Not enough disk space');
    startFakeDownload(cluster, 'studio-a', QWEN_30B, 16 * GB).progress(4 * GB, 8e7);
    exo = await startServingExo({ cluster });
    const plan = () => planExoSafePair({ url: exo!.url, settings: defaultSettings(), fastSynchOf: () => ({ enabled: false, assumed: false }) });

    small.progress(0.3 * GB, 5e7);
    medium.progress(1 * GB, 5e7);
    const before = await plan();
    expect(before.exo.placements).toEqual([]);
    expect(before.blockers.join(' ')).toMatch(/fewer than two downloaded text models/);

    small.complete();
    medium.complete();
    const after = await plan();
    expect(after.exo.placements.map((p) => p.model)).toEqual([LLAMA_1B, LLAMA_3B]);
    expect(after.blockers).toEqual([]);
  });
});
