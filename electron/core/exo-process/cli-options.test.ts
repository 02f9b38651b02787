import { describe, expect, it } from 'vitest';
import { FAKE_EXO_COMMAND, makeFakeExoDirs } from '../../../test/support/fake-exo-exe/harness';
import { processAlive } from '../../../test/support/process-alive';
import { exoServeSettings, startServeExo } from './cli-options';
import { freePort } from '../../../test/support/free-port';

const processSettings = { command: 'exo', args: ['-v'], env: { EXO_OFFLINE: 'true' } };
const settings = { ...processSettings, url: null, hold: true };

describe('exoServeSettings', () => {
  it('starts nothing without --exo-start, and takes --exo-command over exo.command', () => {
    expect(exoServeSettings({}, settings)).toBeNull();
    // Only how to start exo: the attach address and the hold are not the process's.
    expect(exoServeSettings({ 'exo-start': true }, settings)).toEqual(processSettings);
    expect(exoServeSettings({ 'exo-start': true, 'exo-command': '/opt/exo/bin/exo' }, settings)).toEqual({ ...processSettings, command: '/opt/exo/bin/exo' });
  });

  it('rejects --exo-command alone or empty, with the error the caller makes', () => {
    class UsageError extends Error {}
    expect(() => exoServeSettings({ 'exo-command': 'exo' }, settings, (m) => new UsageError(m))).toThrow(UsageError);
    expect(() => exoServeSettings({ 'exo-command': 'exo' }, settings)).toThrow('--exo-command needs --exo-start');
    expect(() => exoServeSettings({ 'exo-start': true, 'exo-command': ' ' }, settings)).toThrow(/--exo-command: expected a command/);
  });
});

describe('startServeExo', () => {
  it('starts exo, says so line by line, and stops it on shutdown', async () => {
    const dirs = makeFakeExoDirs();
    const lines: string[] = [];
    const manager = await startServeExo({
      dataDir: dirs.dataDir,
      apiPort: await freePort(),
      settings: { command: FAKE_EXO_COMMAND, args: [], env: { HOME: dirs.home } },
      defaultFastSynch: 'auto',
      log: (line) => lines.push(line),
    });
    try {
      const pid = manager.state().pid!;
      expect(manager.state().status).toBe('running');
      expect(lines[0]).toBe('exo: starting: checking that port ' + manager.state().apiPort + ' is free');
      expect(lines).toContain(`exo: running (pid ${pid})`);
      expect(lines.at(-1)).toBe(
        "exo: fast synch off (nothing planned yet: off, the value ring instances need (every single-Mac instance is ring)); exo's own log says OFF",
      );
      await manager.shutdown();
      expect(processAlive(pid)).toBe(false);
      expect(lines.at(-1)).toMatch(/^exo: stopped: stopped by exobar \(SIGINT, graceful\)/);
    } finally {
      await manager.shutdown();
      dirs.remove();
    }
  });
});
