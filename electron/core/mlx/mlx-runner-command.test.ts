import { describe, expect, it } from 'vitest';
import { defaultMlxRunnerScript, mlxRunnerCommand } from './mlx-runner-command';

describe('mlxRunnerCommand', () => {
  const base = { python: '/venv/bin/python3', model: '/models/Llama-3.2-1B-Instruct-4bit' };

  it('runs python on runner.py with the model, engine and exo defaults left to the runner', () => {
    const command = mlxRunnerCommand({ ...base, fastSynch: false, baseEnv: { PATH: '/usr/bin' } });
    expect(command.command).toBe('/venv/bin/python3');
    expect(command.args).toEqual([defaultMlxRunnerScript(), '--model', base.model, '--engine', 'mlx']);
    expect(command.args[0]).toMatch(/electron\/runners\/mlx\/runner\.py$/);
  });

  it('carries the fast-synch decision in both variables and never an inherited one', () => {
    const inherited = { MLX_METAL_FAST_SYNCH: '1', EXO_FAST_SYNCH: 'true', PATH: '/usr/bin' };
    const off = mlxRunnerCommand({ ...base, fastSynch: false, baseEnv: inherited }).env;
    expect(off).toMatchObject({ MLX_METAL_FAST_SYNCH: '0', EXO_FAST_SYNCH: 'false', PATH: '/usr/bin' });
    const on = mlxRunnerCommand({ ...base, fastSynch: true, baseEnv: { MLX_METAL_FAST_SYNCH: '0' } }).env;
    expect(on).toMatchObject({ MLX_METAL_FAST_SYNCH: '1', EXO_FAST_SYNCH: 'true' });
    const unset = mlxRunnerCommand({ ...base, fastSynch: null, baseEnv: inherited }).env;
    expect(unset.MLX_METAL_FAST_SYNCH).toBeUndefined();
    expect(unset.EXO_FAST_SYNCH).toBeUndefined();
  });

  it('keeps the runner offline and writes no bytecode', () => {
    const env = mlxRunnerCommand({ ...base, fastSynch: false, baseEnv: { HF_HUB_OFFLINE: '0' } }).env;
    expect(env).toMatchObject({ HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1', PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' });
  });

  it('passes tuning and test-engine flags, and extraEnv last (undefined removes)', () => {
    const command = mlxRunnerCommand({
      ...base,
      runnerScript: '/app/Resources/runners/mlx/runner.py',
      engine: 'test',
      prefillChunk: 2048,
      maxBatch: 4,
      defaultMaxTokens: 256,
      timeScale: 0.1,
      testTimings: { prefillTokensPerS: 1590, totalLayers: 28 },
      fastSynch: false,
      baseEnv: { KEEP: '1', DROP: 'x' },
      extraEnv: { DROP: undefined, HF_HUB_CACHE: '/tmp/hub' },
    });
    expect(command.args).toEqual([
      '/app/Resources/runners/mlx/runner.py',
      '--model',
      base.model,
      '--engine',
      'test',
      '--prefill-chunk',
      '2048',
      '--max-batch',
      '4',
      '--default-max-tokens',
      '256',
      '--time-scale',
      '0.1',
      '--prefill-tps',
      '1590',
      '--total-layers',
      '28',
    ]);
    expect(command.env).toMatchObject({ KEEP: '1', HF_HUB_CACHE: '/tmp/hub' });
    expect('DROP' in command.env).toBe(false);
  });

  it('uses the packaged runner directory when the app sets it', () => {
    expect(defaultMlxRunnerScript({ EXOBAR_MLX_RUNNER_DIR: '/Apps/exobar.app/Contents/Resources/runners/mlx' })).toBe(
      '/Apps/exobar.app/Contents/Resources/runners/mlx/runner.py',
    );
  });

  it('rejects bad options with a readable error', () => {
    expect(() => mlxRunnerCommand({ ...base, python: '', fastSynch: false })).toThrow(/invalid MLX runner options/);
    expect(() => mlxRunnerCommand({ ...base, maxBatch: 0, fastSynch: false })).toThrow(/maxBatch/);
    expect(() => mlxRunnerCommand({ ...base, timeScale: 0.1, fastSynch: false })).toThrow(/only apply to the test engine/);
  });
});
