/**
 * The diagnostic bundle holds the latest GPU sharing checks (markdown and JSON), newest
 * first, redacted like every other file, also when exported with no node running.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SharingCheckResultSchema } from '../../../shared/sharing-check';
import { CheckStore, checksDir } from '../checks/check-store';
import { sharingReportMarkdown } from '../checks/sharing-report';
import { collectBundle } from './bundle-files';
import { LATEST_CHECKS } from './check-bundle-files';

const REAL_MLX = fileURLToPath(new URL('../../../docs/sharing-check-real-mlx.json', import.meta.url));
const identity = { userName: 'zelda-qa', hostName: 'zeldas-mbp.local', homeDir: '/Users/zelda-qa' };
let dataDir: string;

afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

describe('sharing checks in the diagnostic bundle', () => {
  it('includes the newest reports, markdown and JSON, with the home directory redacted', async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'exobar-diag-checks-'));
    const real = SharingCheckResultSchema.parse(JSON.parse(readFileSync(REAL_MLX, 'utf8')));
    const store = new CheckStore(checksDir(dataDir));
    const ids: string[] = [];
    for (let i = 0; i < LATEST_CHECKS + 1; i++) {
      const id = `sharing-test-${i}`;
      ids.push(id);
      // A model found in the operator's home: its id names the path.
      const models = real.models.map((m) => (m.role === 'A' ? { ...m, id: `mlx//Users/zelda-qa/models/a-${i}` } : m));
      const result = { ...real, id, startedAt: real.startedAt + i * 60_000, models };
      store.save(result, sharingReportMarkdown(result));
    }
    const bundle = await collectBundle({
      node: null,
      dataDir,
      settings: null,
      version: '0.0.0-test',
      identity,
      systemInfo: async () => ({
        platform: 'linux',
        arch: 'x64',
        osRelease: '6',
        kernelVersion: '6',
        cpu: { model: 'cpu', count: 2 },
        memory: { totalBytes: 1, freeBytes: 1, freeSource: 'os' },
        loadAverage: [0, 0, 0],
        systemUptimeS: 1,
        macos: null,
      }),
    });
    const names = bundle.files.map((f) => f.name).filter((n) => n.startsWith('checks/'));
    // The newest three, each as markdown and JSON; the oldest is left out.
    const newest = ids.slice(1).reverse();
    expect(names).toEqual(newest.flatMap((id) => [`checks/${id}.md`, `checks/${id}.json`]));
    const json = JSON.parse(bundle.files.find((f) => f.name === `checks/${newest[0]}.json`)!.data.toString('utf8')) as { models: Array<{ id: string }> };
    expect(json.models[0]!.id).not.toContain('zelda-qa');
    const md = bundle.files.find((f) => f.name === `checks/${newest[0]}.md`)!.data.toString('utf8');
    expect(md).toContain('# GPU sharing check');
    expect(md).not.toContain('zelda-qa');
    expect(bundle.files.find((f) => f.name === 'README.txt')?.data.toString('utf8') ?? '').toContain('checks/');
  });
});
