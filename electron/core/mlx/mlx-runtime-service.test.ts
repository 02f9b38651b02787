/**
 * The MLX engine wired into a real node: detection and the scan feed the catalog and
 * the snapshot, and an MLX model launches through the supervisor like a sim model (the
 * Python runner's deterministic test engine stands in for mlx-lm, which needs a Mac).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultSettings } from '../../../shared/api';
import { makePrompt } from '../../../shared/token-count';
import { createNode } from '../node/node';
import type { MlxRuntimeStatus } from './detect-mlx-runtime';
import { MlxRuntimeService } from './mlx-runtime-service';
import type { LocalMlxModel } from './scan-local-models';
import { MlxSetupError } from './setup-mlx-runtime';
import { localInstances } from '../../../shared/instance-state';

const GiB = 1024 ** 3;
const available: MlxRuntimeStatus = { available: true, python: 'python3', version: '0.30.1', reason: 'mlx-lm 0.30.1', candidates: [] };
const missing: MlxRuntimeStatus = { available: false, python: null, version: null, reason: 'no python with mlx-lm', candidates: [] };
const localModel: LocalMlxModel = {
  id: 'mlx/mlx-community/Llama-3.2-1B-Instruct-4bit',
  name: 'Llama-3.2-1B-Instruct-4bit',
  engine: 'mlx',
  simulated: false,
  memoryBytes: Math.round(0.8 * GiB),
  sizeClass: 'small',
  path: '/models/llama-3.2-1b-4bit',
  repoId: 'mlx-community/Llama-3.2-1B-Instruct-4bit',
  diskBytes: Math.round(0.7 * GiB),
  source: 'hf-cache',
};

describe('MlxRuntimeService', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function rig(options: Partial<ConstructorParameters<typeof MlxRuntimeService>[0]> = {}) {
    const dataDir = mkdtempSync(join(tmpdir(), 'exobar-mlx-'));
    const service = new MlxRuntimeService({
      dataDir,
      getSettings: defaultSettings,
      detect: async () => available,
      scan: async () => [localModel],
      runnerEngine: 'test',
      testTimeScale: 0.05,
      platform: 'darwin',
      arch: 'arm64',
      ...options,
    });
    const node = createNode({ dataDir, simTimeScale: 0.05, mlxSpawnSpec: (model) => service.spawnSpec(model), extraModels: () => service.localModels, whyModelAbsent: (id) => service.whyModelAbsent(id) });
    service.attach(node.hub);
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    cleanups.push(() => node.shutdown());
    return { service, node };
  }

  it('puts local MLX models in the catalog and launches one through the supervisor', async () => {
    const { service, node } = rig();
    await service.refresh();
    expect(node.models().map((m) => m.id)).toContain(localModel.id);
    expect(node.snapshot().mlx).toMatchObject({ available: true, supported: true, localModels: 1, python: 'python3' });

    const instance = await node.createInstance({ model: localModel.id, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await node.waitForReady(instance.id, 30_000);
    const snap = localInstances(node.snapshot())[0]!;
    expect(snap).toMatchObject({ engine: 'mlx', simulated: false });
    // The policy's decision reached the Python runner, which reported it back.
    expect(snap.fastSynch).toMatchObject({ enabled: false, reported: false });
    const handle = node.submit({ model: localModel.id, messages: makePrompt(30), maxTokens: 6 }, () => undefined);
    expect(await handle.done).toMatchObject({ type: 'finished', usage: { completionTokens: 6 } });
  });

  it('keeps MLX models out of the catalog while the runtime is missing, and says why a launch cannot run', async () => {
    const { service, node } = rig({ detect: async () => missing });
    await service.refresh();
    expect(node.models().some((m) => m.engine === 'mlx')).toBe(false);
    expect(node.snapshot().mlx).toMatchObject({ available: false, reason: 'no python with mlx-lm' });
    expect(service.spawnSpec(localModel)).toBeNull();
    // Asked for by id, the model's error says why it is absent: the probe's reason.
    await expect(node.createInstance({ model: localModel.id, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false })).rejects.toMatchObject({
      code: 'model_not_found',
      message: expect.stringContaining('MLX models need the MLX runtime, which is not available: no python with mlx-lm'),
    });
  });

  it('says of an mlx/ model the runtime did not find that it is not among the local ones, and nothing more of other unknown ids', async () => {
    const { service, node } = rig();
    await service.refresh();
    const launch = (model: string) => node.createInstance({ model, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await expect(launch('mlx/someone/absent-4bit')).rejects.toMatchObject({ message: expect.stringContaining('the MLX runtime found 1 local model and not this one') });
    await expect(launch('nonsense')).rejects.toMatchObject({ message: expect.stringMatching(/^unknown model "nonsense"; known models: /) });
  });

  it('shares one probe between refreshes asked while it runs, and probes again once it has answered', async () => {
    let probes = 0;
    let answer!: (status: MlxRuntimeStatus) => void;
    const { service, node } = rig({
      detect: () => {
        probes++;
        return new Promise<MlxRuntimeStatus>((resolve) => (answer = resolve));
      },
    });
    // The core's start looks, and `exobar check sharing` asks for the answer while it runs.
    const atStart = service.refresh();
    const byCommand = service.refresh();
    expect(probes).toBe(1);
    // Until it answers, the snapshot says it is looking, not that MLX is missing.
    expect(node.snapshot().mlx).toMatchObject({ checking: true, available: false, reason: 'not checked yet' });
    answer(available);
    expect(await byCommand).toMatchObject({ available: true, localModels: 1, checking: false });
    expect(node.snapshot().mlx).toMatchObject({ checking: false, available: true });
    expect(await atStart).toEqual(await byCommand);
    const later = service.refresh();
    expect(probes).toBe(2);
    answer(missing);
    expect(await later).toMatchObject({ available: false, reason: 'no python with mlx-lm', checking: false });
  });

  it('stops saying it is checking when a look fails', async () => {
    const { service, node } = rig({ detect: async () => Promise.reject(new Error('the interpreter vanished')) });
    await expect(service.refresh()).rejects.toThrow('the interpreter vanished');
    expect(node.snapshot().mlx).toMatchObject({ checking: false, reason: 'not checked yet' });
  });

  it('shows setup progress in the snapshot, then the runtime it installed', async () => {
    let detected = missing;
    const { service, node } = rig({
      detect: async () => detected,
      setup: async ({ onProgress }) => {
        onProgress({ step: 'create-venv', message: 'Creating the virtual environment' });
        onProgress({ step: 'install-mlx-lm', message: 'Installing mlx-lm', line: 'Collecting mlx-lm' });
        expect(node.snapshot().mlx?.setup).toMatchObject({ state: 'running', step: 'install-mlx-lm', outputTail: ['Collecting mlx-lm'] });
        detected = available;
        return available;
      },
    });
    await service.refresh();
    await service.startSetup();
    expect(node.snapshot().mlx).toMatchObject({ available: true, localModels: 1, setup: { state: 'done', error: null } });
  });

  it('reports a failed setup with the step and pip output', async () => {
    const { service, node } = rig({
      detect: async () => missing,
      setup: async () => {
        throw new MlxSetupError('install-mlx-lm', 'pip install mlx-lm failed (exit 1)', ['ERROR: No matching distribution found for mlx-lm']);
      },
    });
    await service.startSetup();
    expect(node.snapshot().mlx?.setup).toEqual({
      state: 'failed',
      step: 'install-mlx-lm',
      message: 'Setup failed',
      outputTail: ['ERROR: No matching distribution found for mlx-lm'],
      error: 'pip install mlx-lm failed (exit 1)',
    });
  });
});
