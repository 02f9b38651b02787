/**
 * The diagnostic bundle of a core that runs this Mac's exo (the fake exo command as a
 * real child process): exo's stdout and stderr tails as `exo/exo-stdout.log` and
 * `exo/exo-stderr.log`, redacted, and the process state in snapshot.json; and from a
 * data directory alone, the same files read from `<data>/exo/`.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExoProcessStateSchema } from '../../../shared/exo-process';
import { exoCoreRig } from '../../../test/support/fake-exo-exe/core-fixture';
import { ExoProcessManager } from '../exo-process';
import { collectBundle } from './bundle-files';
import { eventually } from '../../../test/support/eventually';

describe('the diagnostic bundle with exo run by exobar', () => {
  it("holds exo's redacted output tails and its state in the snapshot", async () => {
    // The user name reaches exo's command line (and exobar's "starting: …" note) through --namespace.
    const { rig, state } = await exoCoreRig({ args: ['-v', '--namespace', 'zelda-qa'] });
    const preview = await rig.control('GET', '/api/diagnostics/preview');
    expect(preview.body.files.map((f: { name: string }) => f.name)).not.toContain('exo/exo-stderr.log');

    expect((await rig.control('POST', '/api/exo/process/start?wait=done')).body.status).toBe('running');
    await eventually(async () => (await state()).lastLines.some((l) => l.includes('Spawned runner 0')), 20_000, "exo's runner line");
    // Through the API: the route's bundle has exo's files.
    const listed = (await rig.control('GET', '/api/diagnostics/preview')).body.files.map((f: { name: string }) => f.name);
    expect(listed).toEqual(expect.arrayContaining(['exo/exo-stdout.log', 'exo/exo-stderr.log']));

    const bundle = await collectBundle({
      node: rig.node,
      exoProcess: rig.core.exoProcess,
      dataDir: rig.core.dataDir,
      settings: rig.core.settings,
      version: 'test',
      identity: { userName: 'zelda-qa', hostName: null, homeDir: null },
    });
    const text = (name: string) => bundle.files.find((f) => f.name === name)?.data.toString('utf8') ?? null;
    const stderr = text('exo/exo-stderr.log')!;
    expect(stderr).toMatch(/FAST_SYNCH forced OFF/);
    expect(stderr).toMatch(/Spawned runner 0 pid=\d+/);
    expect(stderr).toMatch(/starting: .* --namespace \[redacted:user\]/);
    expect(stderr).not.toContain('zelda-qa');
    expect(text('exo/exo-stdout.log')).not.toBeNull();
    const snapshot = JSON.parse(text('snapshot.json')!) as { exoProcess: unknown };
    const shown = ExoProcessStateSchema.parse(snapshot.exoProcess);
    expect(shown).toMatchObject({ status: 'running', ownsProcess: true, fastSynch: { enabled: false, observed: false } });
    expect(JSON.stringify(shown.command)).not.toContain('zelda-qa');
  });
});

describe('the diagnostic bundle from a data directory (no exobar running)', () => {
  it("reads exo's logs from <data>/exo/, rotated part first, redacted and cut at the cap with a marker", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'exobar-diag-exo-'));
    try {
      const context = { node: null, dataDir, settings: null, version: 'test', identity: { userName: 'zelda-qa', hostName: null, homeDir: null } };
      // No exo logs: no exo files.
      expect((await collectBundle(context)).files.map((f) => f.name).filter((n) => n.startsWith('exo/'))).toEqual([]);

      await mkdir(join(dataDir, 'exo'), { recursive: true });
      const older = Array.from({ length: 40 }, (_, i) => `[ INFO ] older line ${i} from zelda-qa`).join('\n');
      await writeFile(join(dataDir, 'exo', 'exo-stderr.log.1'), `${older}\n`);
      await writeFile(join(dataDir, 'exo', 'exo-stderr.log'), '[ CRITICAL ] EXO terminated due to unhandled exception (user zelda-qa)\n');
      await writeFile(join(dataDir, 'exo', 'exo-stdout.log'), '');
      const bundle = await collectBundle({ ...context, limits: { maxLogBytesPerFile: 300 } });
      const stderr = bundle.files.find((f) => f.name === 'exo/exo-stderr.log')!.data.toString('utf8');
      expect(stderr).toMatch(/^\[exobar diagnostics: the first \d+ bytes of this log are not in the bundle\]\n/);
      expect(stderr).toMatch(/older line 39 from \[redacted:user\]\n\[ CRITICAL \] EXO terminated due to unhandled exception \(user \[redacted:user\]\)\n$/);
      expect(stderr).not.toContain('zelda-qa');
      expect(bundle.truncated.map((t) => t.name)).toContain('exo/exo-stderr.log');
      expect(bundle.files.find((f) => f.name === 'exo/exo-stdout.log')?.data.toString('utf8')).toBe('');

      // exobar running again without having started exo yet: the last run's files still count.
      const idle = new ExoProcessManager({ dataDir });
      try {
        const again = await collectBundle({ ...context, exoProcess: idle, limits: { maxLogBytesPerFile: 300 } });
        expect(again.files.find((f) => f.name === 'exo/exo-stderr.log')?.data.toString('utf8')).toBe(stderr);
      } finally {
        await idle.shutdown();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
