import { describe, expect, it } from 'vitest';
import { buildExoCommand } from './exo-command';

describe('buildExoCommand', () => {
  it('keeps the settings arguments but sets the API port and fast synch itself, over exo.env', () => {
    const built = buildExoCommand(
      {
        command: '/Applications/EXO.app/Contents/Resources/exo/exo',
        args: ['-v', '--api-port', '1234', '--fast-synch', '--namespace', 'lab', '--api-port=99'],
        env: { EXO_FAST_SYNCH: 'true', HF_TOKEN: 'x' },
      },
      52415,
      false,
      { PATH: '/usr/bin' },
    );
    expect(built.args).toEqual(['-v', '--namespace', 'lab', '--api-port', '52415', '--no-fast-synch']);
    expect(built.dropped).toEqual(['--api-port', '1234', '--fast-synch', '--api-port=99']);
    expect(built.env).toMatchObject({ PATH: '/usr/bin', HF_TOKEN: 'x', EXO_FAST_SYNCH: 'false', MLX_METAL_FAST_SYNCH: '0' });
  });

  it('turns fast synch on with the flag exo logs "FAST_SYNCH forced ON" for', () => {
    const built = buildExoCommand({ command: 'exo', args: [], env: {} }, 52415, true, {});
    expect(built.args).toEqual(['--api-port', '52415', '--fast-synch']);
    expect(built.env.EXO_FAST_SYNCH).toBe('true');
  });
});
