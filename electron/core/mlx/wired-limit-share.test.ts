import { describe, expect, it } from 'vitest';
import { mlxRunnerCommand } from './mlx-runner-command';
import { mlxWiredLimitShares } from './wired-limit-share';

const GB = 1024 ** 3;

describe('mlxWiredLimitShares', () => {
  it('splits the working set by model size, never more than all of it', () => {
    const shares = mlxWiredLimitShares({
      recommendedWorkingSetBytes: 48 * GB,
      runners: [
        { id: 'llama-8b', modelBytes: 4 * GB },
        { id: 'qwen-32b', modelBytes: 18 * GB },
      ],
    });
    expect(shares.map((s) => s.id)).toEqual(['llama-8b', 'qwen-32b']);
    expect(shares[0]!.wiredLimitBytes).toBe(Math.floor((48 * GB * 4) / 22));
    expect(shares.reduce((sum, s) => sum + s.wiredLimitBytes, 0)).toBeLessThanOrEqual(48 * GB);
    expect(shares.every((s) => !s.overCommitted)).toBe(true);
  });

  it('a lone runner gets the whole working set; models too big together are flagged', () => {
    expect(mlxWiredLimitShares({ recommendedWorkingSetBytes: 10, runners: [{ id: 'a', modelBytes: 3 }] })).toEqual([
      { id: 'a', wiredLimitBytes: 10, overCommitted: false },
    ]);
    const tight = mlxWiredLimitShares({
      recommendedWorkingSetBytes: 10,
      runners: [
        { id: 'a', modelBytes: 8 },
        { id: 'b', modelBytes: 8 },
      ],
    });
    expect(tight.map((s) => [s.wiredLimitBytes, s.overCommitted])).toEqual([
      [5, true],
      [5, true],
    ]);
  });

  it('rejects input it cannot split', () => {
    expect(() => mlxWiredLimitShares({ recommendedWorkingSetBytes: 0, runners: [] })).toThrow(/invalid wired-limit input/);
  });

  it('reaches the runner as --wired-limit-bytes, for the mlx engine only', () => {
    const command = mlxRunnerCommand({ python: 'python3', model: '/m', fastSynch: false, wiredLimitBytes: 5 * GB });
    expect(command.args.slice(-2)).toEqual(['--wired-limit-bytes', String(5 * GB)]);
    expect(() => mlxRunnerCommand({ python: 'python3', model: '/m', engine: 'test', fastSynch: false, wiredLimitBytes: 1 })).toThrow(
      /wiredLimitBytes only applies to the mlx engine/,
    );
  });
});
