import { describe, expect, it } from 'vitest';
import { SIM_MODELS } from '../../../shared/catalog';
import type { FitModelEstimate } from '../../../shared/fit-check';
import { checkFit } from './check-fit';
import { fitForLaunch } from './fit-for-launch';
import { defaultWiredLimit, readGpuWiredLimit, wiredLimitFromSysctl } from './gpu-wired-limit';

const GiB = 1024 ** 3;
const est = (model: string, needed: number): FitModelEstimate => ({
  model,
  weightsBytes: needed,
  kvCacheBytes: 0,
  contextTokens: 8192,
  neededBytes: needed,
  weightsSource: 'catalog',
});

describe('checkFit', () => {
  it('fits and says it in words: "needs 6.1 GiB; 18.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 16.0 GiB usable"', () => {
    const fit = checkFit([est('a', 6.1 * GiB)], { freeBytes: 18 * GiB, gpuLimitBytes: null });
    expect(fit.fits).toBe(true);
    expect(fit.summary).toBe('needs 6.1 GiB; 18.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 16.0 GiB usable');
    expect(fit.problems).toEqual([]);
    expect(fit.risk).toBeNull();
  });

  it('refuses past free memory less headroom, with the figures and the risk', () => {
    const fit = checkFit([est('a', 5 * GiB), est('b', 2 * GiB)], { freeBytes: 8 * GiB, gpuLimitBytes: null });
    expect(fit.fits).toBe(false);
    expect(fit.neededBytes).toBe(7 * GiB);
    expect(fit.problems).toEqual(['Not enough memory: needs 7.0 GiB; 8.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 6.0 GiB usable.']);
    expect(fit.risk).toMatch(/swap/);
  });

  it('on a Mac, refuses past the GPU wired limit beside the models already on it', () => {
    const fit = checkFit([est('a', 6 * GiB)], { freeBytes: 40 * GiB, gpuLimitBytes: 16 * GiB, gpuInUseBytes: 12 * GiB });
    expect(fit.fits).toBe(false);
    expect(fit.summary).toBe("needs 6.0 GiB; 40.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 38.0 GiB usable; 4.0 GiB of the GPU's 16.0 GiB limit left");
    expect(fit.problems[0]).toMatch(/^Over the GPU's wired limit: needs 6.0 GiB, 4.0 GiB of its 16.0 GiB left/);
  });

  it("says when a model's KV cache is unknown", () => {
    const fit = checkFit([{ ...est('m', GiB), kvCacheBytes: null }], { freeBytes: 18 * GiB, gpuLimitBytes: null });
    expect(fit.summary).toContain('KV cache unknown for m');
  });
});

describe('the GPU wired limit', () => {
  it("is macOS's default (2/3 up to 36 GB, 3/4 above) when sysctl says 0, else what it says", () => {
    expect(defaultWiredLimit(24 * GiB)).toBe(16 * GiB);
    expect(defaultWiredLimit(64 * GiB)).toBe(48 * GiB);
    expect(wiredLimitFromSysctl('0\n', 64 * GiB)).toBe(48 * GiB);
    expect(wiredLimitFromSysctl('57344\n', 64 * GiB)).toBe(56 * GiB);
    expect(wiredLimitFromSysctl(null, 24 * GiB)).toBe(16 * GiB);
  });

  it('is null off a Mac', async () => {
    expect(await readGpuWiredLimit(64 * GiB, { platform: 'linux' })).toBeNull();
    expect(await readGpuWiredLimit(24 * GiB, { platform: 'darwin', runSysctl: () => Promise.reject(new Error('unknown oid')) })).toBe(16 * GiB);
  });
});

describe('fitForLaunch', () => {
  it('the sim safe pair at 8192 tokens on a 16 GB Mac with 9 GB free: needs 5.9 GiB, fits', async () => {
    const fit = await fitForLaunch({
      models: SIM_MODELS,
      running: [],
      readMemory: async () => ({ totalBytes: 16 * GiB, freeBytes: 9 * GiB, source: 'vm_stat' }),
      readGpuLimit: async (total) => defaultWiredLimit(total),
    });
    expect(fit.neededBytes / GiB).toBeCloseTo(1.4 + 0.25 + 3.4 + 0.875, 6);
    expect(fit.summary).toBe("needs 5.9 GiB; 9.0 GiB free, of which 2.0 GiB is kept free for macOS and other apps: 7.0 GiB usable; 10.7 GiB of the GPU's 10.7 GiB limit left");
    expect(fit.fits).toBe(true);
  });

  it('counts the running models against the GPU limit', async () => {
    const fit = await fitForLaunch({
      models: [SIM_MODELS[1]!],
      running: [SIM_MODELS[0]!, SIM_MODELS[1]!],
      readMemory: async () => ({ totalBytes: 12 * GiB, freeBytes: 9 * GiB, source: 'vm_stat' }),
      readGpuLimit: async (total) => defaultWiredLimit(total),
    });
    expect(fit.gpuInUseBytes / GiB).toBeCloseTo(5.925, 6);
    // 9 GB free is enough, but a 12 GB Mac's GPU limit (8 GB) leaves 2.1 GiB beside the two running.
    expect(fit.fits).toBe(false);
    expect(fit.problems).toEqual(["Over the GPU's wired limit: needs 4.3 GiB, 2.1 GiB of its 8.0 GiB left beside the models on it."]);
  });
});
