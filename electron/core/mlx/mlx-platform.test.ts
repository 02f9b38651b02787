import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveMlxRunnerDir } from '../runner-entry';
import { LLGUIDANCE_VERSION, MLX_LM_VERSION, MLX_VERSION, mlxPlatform } from './mlx-platform';

describe('mlxPlatform', () => {
  it('is Metal on Apple silicon, the CPU on Linux, nothing elsewhere', () => {
    expect(mlxPlatform('darwin', 'arm64')).toMatchObject({ supported: true, device: 'metal', packages: ['mlx==0.32.4', 'mlx-lm==0.32.2', 'llguidance==1.9.1'] });
    expect(mlxPlatform('linux', 'x64')).toMatchObject({ supported: true, device: 'cpu', packages: ['mlx[cpu]==0.32.4', 'mlx-lm==0.32.2', 'llguidance==1.9.1'] });
    expect(mlxPlatform('linux', 'arm64')).toMatchObject({ supported: true, device: 'cpu' });
    expect(mlxPlatform('darwin', 'x64')).toMatchObject({ supported: false, reason: expect.stringMatching(/Rosetta/) });
    expect(mlxPlatform('win32', 'x64')).toMatchObject({ supported: false });
  });

  it('pins the versions the runner’s requirements files pin', () => {
    const dir = resolveMlxRunnerDir({});
    const requirements = readFileSync(join(dir, 'requirements.txt'), 'utf8');
    expect(requirements).toContain(`mlx==${MLX_VERSION}\n`);
    expect(requirements).toContain(`mlx-lm==${MLX_LM_VERSION}\n`);
    expect(requirements).toContain(`llguidance==${LLGUIDANCE_VERSION}\n`);
    expect(readFileSync(join(dir, 'requirements-cpu.txt'), 'utf8')).toContain(`mlx[cpu]==${MLX_VERSION}\n`);
    const versions = readFileSync(join(dir, 'exobar_mlx', 'versions.py'), 'utf8');
    expect(versions).toContain(`mlx ${MLX_VERSION}, mlx-lm ${MLX_LM_VERSION}`);
  });
});
