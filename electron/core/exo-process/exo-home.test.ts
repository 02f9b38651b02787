/**
 * Where exo keeps its files, by exo's own rules (exo 0.3.70, src/exo/shared/constants.py):
 * EXO_HOME first (relative to HOME), ~/.exo off Linux, the XDG cache folder on Linux.
 */
import { describe, expect, it } from 'vitest';
import { exoDataDir, exoHomeDir, exoLogDir, exoLogPath, exoModelsDir, exoPidfilePath } from './exo-home';
import { defaultExoLogDir } from '../exo/attach/exo-attachment';
import { defaultExoLogPath } from '../exo/attach/exo-log-fast-synch';

const HOME = '/home/ops';

describe('exoHomeDir', () => {
  it('is ~/.exo on macOS, whatever the XDG variables say', () => {
    expect(exoHomeDir({ HOME, XDG_CACHE_HOME: '/var/cache/ops' }, 'darwin')).toBe('/home/ops/.exo');
    expect(exoLogPath({ HOME }, 'darwin')).toBe('/home/ops/.exo/exo_log/exo.log');
    expect(exoPidfilePath({ HOME }, 'darwin')).toBe('/home/ops/.exo/exo.pid');
  });

  it('is the XDG cache folder on Linux: $XDG_CACHE_HOME/exo, else ~/.cache/exo', () => {
    expect(exoHomeDir({ HOME }, 'linux')).toBe('/home/ops/.cache/exo');
    expect(exoLogDir({ HOME, XDG_CACHE_HOME: '/var/cache/ops' }, 'linux')).toBe('/var/cache/ops/exo/exo_log');
    expect(exoPidfilePath({ HOME, XDG_CACHE_HOME: '/var/cache/ops' }, 'linux')).toBe('/var/cache/ops/exo/exo.pid');
    // Empty counts as unset.
    expect(exoHomeDir({ HOME, XDG_CACHE_HOME: '' }, 'linux')).toBe('/home/ops/.cache/exo');
  });

  it('honours EXO_HOME on every platform, relative to HOME (an absolute one wins)', () => {
    for (const platform of ['darwin', 'linux'] as const) {
      expect(exoHomeDir({ HOME, EXO_HOME: 'exo-b', XDG_CACHE_HOME: '/var/cache/ops' }, platform)).toBe('/home/ops/exo-b');
      expect(exoLogPath({ HOME, EXO_HOME: '/srv/exo' }, platform)).toBe('/srv/exo/exo_log/exo.log');
    }
  });

  it("attach mode reads exo's log where the process code finds it", () => {
    const env = { HOME, EXO_HOME: 'exo-b' };
    expect(defaultExoLogDir(env)).toBe(exoLogDir(env));
    expect(defaultExoLogPath(env)).toBe(exoLogPath(env));
    expect(defaultExoLogPath(env)).toBe('/home/ops/exo-b/exo_log/exo.log');
  });
});

describe('exoDataDir and exoModelsDir', () => {
  it("is exo's data folder: ~/.exo off Linux, the XDG data folder on Linux, EXO_HOME first; models below it unless EXO_DEFAULT_MODELS_DIR says", () => {
    expect(exoDataDir({ HOME }, 'darwin')).toBe('/home/ops/.exo');
    expect(exoDataDir({ HOME }, 'linux')).toBe('/home/ops/.local/share/exo');
    expect(exoDataDir({ HOME, XDG_DATA_HOME: '/srv/data' }, 'linux')).toBe('/srv/data/exo');
    expect(exoModelsDir({ HOME, EXO_HOME: 'exo-b' }, 'linux')).toBe('/home/ops/exo-b/models');
    expect(exoModelsDir({ HOME, EXO_DEFAULT_MODELS_DIR: '/models' }, 'darwin')).toBe('/models');
  });
});
