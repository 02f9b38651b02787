import { describe, expect, it } from 'vitest';
import { runSetupCli } from './setup-mlx-runtime-cli';

describe('setup-mlx-runtime-cli', () => {
  it('needs exactly one data directory', async () => {
    const lines: string[] = [];
    expect(await runSetupCli([], (l) => lines.push(l))).toBe(2);
    expect(await runSetupCli(['a', 'b'], (l) => lines.push(l))).toBe(2);
    expect(lines).toEqual(['usage: setup-mlx-runtime-cli.ts <dataDir>', 'usage: setup-mlx-runtime-cli.ts <dataDir>']);
  });
});
