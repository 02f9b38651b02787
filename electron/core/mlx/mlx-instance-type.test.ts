import { describe, expect, it } from 'vitest';
import { decideFastSynch } from '../../../shared/fast-synch-policy';
import { mlxInstanceTypeProblem } from './mlx-instance-type';

describe('mlxInstanceTypeProblem', () => {
  it('refuses jaccl for the single-process runner, which would only get fast synch from it', () => {
    expect(decideFastSynch('jaccl', 'auto')).toMatchObject({ enabled: true });
    expect(mlxInstanceTypeProblem('jaccl')).toMatch(/never joins a JACCL group.*ring instance/);
  });

  it('serves ring, where the policy keeps fast synch off', () => {
    expect(mlxInstanceTypeProblem('ring')).toBeNull();
    expect(decideFastSynch('ring', 'auto')).toMatchObject({ enabled: false });
  });
});
