import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DiagnosticContext } from './bundle-context';
import { diagnosticBundleFileName, previewDiagnosticBundle, writeDiagnosticBundle } from './bundle-writer';
import type { SystemInfo } from './system-info';
import { parseBundle, readZip } from '../../../test/support/diagnostics/read-zip';
import { MEDIUM, SMALL, syntheticNode } from '../../../test/support/diagnostics/synthetic-node';

// What must never leave the machine. Distinctive strings, so a substring search finds any leak.
const SECRET_PROMPT = 'my-secret-prompt-about-the-merger';
const SECRET_COMPLETION = 'the-secret-completion-words';
const API_KEY = 'sk-proj-Zq8vN3xLr7TtKd02Hh';
const CONTROL_TOKEN = 'ctl_9fJx2LmQ7rVw4KpZ8sTb3nYc';
const SETTINGS_SECRET = 'settings-only-hunter2-value';
const identity = { userName: 'zelda-qa', hostName: 'zeldas-mbp.local', homeDir: '/Users/zelda-qa' };
const PRIVATE = [
  SECRET_PROMPT,
  SECRET_COMPLETION,
  API_KEY,
  CONTROL_TOKEN,
  SETTINGS_SECRET,
  'zelda-qa',
  'zeldas-mbp',
  '/Users/zelda-qa',
  '192.168.7.9',
  'fe80::1c2b:3aff:fe4d:5e6f',
];

const systemInfo = async (): Promise<SystemInfo> => ({
  platform: 'darwin',
  arch: 'arm64',
  osRelease: '24.3.0',
  kernelVersion: 'Darwin Kernel Version 24.3.0',
  cpu: { model: 'Apple M3 Ultra', count: 24 },
  memory: { totalBytes: 96 * 2 ** 30, freeBytes: 60 * 2 ** 30, freeSource: 'vm_stat' },
  loadAverage: [1.2, 1, 0.9],
  systemUptimeS: 3600,
  macos: { hardwareModel: 'Mac15,14', chip: 'Apple M3 Ultra', productVersion: '15.3', buildVersion: '24D60' },
});

const stdoutLog = [
  '{"type":"Hello","protocolVersion":1,"engine":"sim","model":"sim/llama-3.2-1b","pid":4242,"env":{"MLX_METAL_FAST_SYNCH":"0","EXO_FAST_SYNCH":"false"},"fastSynch":false}',
  `{"type":"ChunkGenerated","commandId":"chatcmpl-short","chunk":{"kind":"TokenChunk","text":"${SECRET_COMPLETION}","tokenId":11,"finishReason":null,"usage":null,"stats":null}}`,
  '',
].join('\n');
const stderrLog = [
  `{"level":30,"msg":"loading weights from /Users/zelda-qa/models/llama"}`,
  `[exobar] malformed runner line (not JSON): {"kind":"TextGeneration","params":{"messages":[{"role":"user","content":"${SECRET_PROMPT} and more`,
  `debug: OPENAI_API_KEY=${API_KEY} Authorization: Bearer ${CONTROL_TOKEN}`,
  'peer 192.168.7.9 via fe80::1c2b:3aff:fe4d:5e6f, local 127.0.0.1',
  'user zelda-qa on zeldas-mbp.local',
  '',
].join('\n');

let dataDir: string;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'exobar-diag-'));
  await writeFile(join(dataDir, 'token'), `${CONTROL_TOKEN}\n`);
  // A runner deleted before the export: its logs exist on disk only.
  await mkdir(join(dataDir, 'logs', 'gone-3'), { recursive: true });
  await writeFile(join(dataDir, 'logs', 'gone-3', 'stderr.log'), `crash in /Users/zelda-qa/x with prompt: ${SECRET_PROMPT}\n`);
});

afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

function context(extra: Partial<DiagnosticContext> = {}): DiagnosticContext {
  return {
    node: syntheticNode({
      logs: { [SMALL]: { stdout: stdoutLog, stderr: stderrLog }, [MEDIUM]: { stdout: '', stderr: `done for zelda-qa\n` } },
      events: [
        // A malformed line's reason quotes the start of the line, which can be a task with its prompt: it must lose it.
        {
          t: 200_000,
          kind: 'runner_malformed_line',
          instanceId: SMALL,
          data: { reason: `not JSON: {"kind":"TextGeneration","params":{"messages":[{"role":"user","content":"${SECRET_PROMPT} and more` },
        },
        { t: 200_001, kind: 'warning_raised', data: { code: 'two_ring_fast_synch', instanceIds: [SMALL, MEDIUM] } },
      ],
    }),
    dataDir,
    settings: {
      apiPort: 52416,
      defaultFastSynch: 'auto',
      startAtLogin: false,
      safePair: { small: 'sim/llama-3.2-1b', medium: 'sim/llama-3.2-3b' },
      mlxPython: '/Users/zelda-qa/venv/bin/python',
      remoteApiKey: SETTINGS_SECRET,
    },
    version: '0.1.0',
    identity,
    systemInfo,
    now: () => 130_000,
    ...extra,
  };
}

async function exportZip(ctx: DiagnosticContext) {
  const path = join(dataDir, 'bundle.zip');
  const written = await writeDiagnosticBundle(ctx, path);
  return { written, entries: await readZip(path) };
}

describe('diagnostic bundle', () => {
  it('holds exactly the listed files, and every one of them parses', async () => {
    const { written, entries } = await exportZip(context());
    const names = [...entries.keys()];
    expect(names).toEqual([
      'README.txt',
      'manifest.json',
      'snapshot.json',
      'events.jsonl',
      'timeline.csv',
      'policy.json',
      'system.json',
      'settings.json',
      `runners/${SMALL}/stdout.log`,
      `runners/${SMALL}/stderr.log`,
      `runners/${SMALL}/exit.json`,
      `runners/${MEDIUM}/stdout.log`,
      `runners/${MEDIUM}/stderr.log`,
      `runners/${MEDIUM}/exit.json`,
      'runners/gone-3/stdout.log',
      'runners/gone-3/stderr.log',
      'runners/gone-3/exit.json',
    ]);
    const parsed = parseBundle(entries);
    expect(written.files.map((f) => f.name)).toEqual(names);
    for (const file of written.files) expect(entries.get(file.name)!.length).toBe(file.bytes);
    // The README lists every file with its real size, and itself without one (not "README.txt (0 bytes)").
    const readme = entries.get('README.txt')!.toString();
    expect(readme).toMatch(/^README\.txt: this file$/m);
    expect(readme).toContain(`manifest.json (${entries.get('manifest.json')!.length} bytes)`);
    expect(readme).not.toContain('README.txt (');

    const manifest = parsed.json.get('manifest.json') as Record<string, unknown>;
    expect(manifest).toMatchObject({
      exobarVersion: '0.1.0',
      platform: process.platform,
      arch: process.arch,
      nodeVersion: process.versions.node,
      electronVersion: null,
      monotonicNowMs: 130_000,
      source: 'running node',
    });
    expect(typeof manifest.exportedAt).toBe('string');
    expect(typeof manifest.processUptimeS).toBe('number');

    expect(parsed.jsonl.get('events.jsonl')!.length).toBeGreaterThan(10);
    const rows = parsed.csv.get('timeline.csv')!;
    expect(rows.map((r) => r.request_id)).toEqual(['chatcmpl-long', 'chatcmpl-queued', 'chatcmpl-short']);
    expect(rows[1]).toMatchObject({ cause: 'queued_behind_same_model_prefill', dispatch_ms: '0.3' });
    expect(Number(rows[1]!.ack_wait_ms)).toBeGreaterThan(15_000);

    const policy = parsed.json.get('policy.json') as { runners: Array<Record<string, unknown>> };
    expect(policy.runners.find((r) => r.instanceId === SMALL)).toMatchObject({
      decision: 'off',
      reason: 'ring instance',
      reported: false,
      mismatch: false,
      warningsRaised: [{ t: 200_001, code: 'two_ring_fast_synch' }],
    });
    expect(parsed.json.get('system.json')).toMatchObject({ cpu: { count: 24 }, macos: { hardwareModel: 'Mac15,14', buildVersion: '24D60' } });
    expect(parsed.json.get(`runners/${SMALL}/exit.json`)).toMatchObject({ instanceId: SMALL, current: true, lastExit: null });
    expect(parsed.json.get('runners/gone-3/exit.json')).toMatchObject({ current: false });
    expect(written.zipBytes).toBeGreaterThan(0);
  });

  it('leaks no prompt, completion, key, token, user, host, address or home path anywhere', async () => {
    const { written, entries } = await exportZip(context());
    for (const [name, data] of entries) {
      const text = data.toString('utf8').toLowerCase();
      for (const secret of PRIVATE) expect(text.includes(secret.toLowerCase()), `${secret} found in ${name}`).toBe(false);
      expect(name.toLowerCase()).not.toContain('zelda');
    }
    // The home directory is shown as ~, loopback stays, and the README and preview say what went.
    expect(entries.get('settings.json')!.toString()).toContain('"mlxPython": "~/venv/bin/python"');
    expect(entries.get(`runners/${SMALL}/stderr.log`)!.toString()).toContain('local 127.0.0.1');
    expect(written.redactions).toMatchObject({ home_dir: expect.any(Number), user_name: expect.any(Number), host_name: 1, api_key: 1 });
    for (const kind of ['prompt_text', 'secret', 'home_dir', 'user_name', 'ip_address'] as const) expect(written.redactions[kind]).toBeGreaterThan(0);
    const readme = entries.get('README.txt')!.toString();
    expect(readme).toMatch(/prompt and completion text \(only token counts are kept\): [1-9]/);
    expect(readme).toContain('the home directory (shown as ~)');
  });

  it('previews exactly the files and sizes the zip gets, with the redaction counts', async () => {
    const preview = await previewDiagnosticBundle(context());
    const { written } = await exportZip(context());
    const stable = (files: Array<{ name: string; bytes: number }>) => files.filter((f) => f.name !== 'manifest.json' && f.name !== 'README.txt');
    expect(stable(preview.files)).toEqual(stable(written.files));
    expect(preview.redactions).toEqual(written.redactions);
    expect(preview.totalBytes).toBe(preview.files.reduce((s, f) => s + f.bytes, 0));
    expect(preview.diagnosis).toMatchObject({ queued_behind_same_model_prefill: 1 });
  });

  it('streams to a writable (an HTTP response) as well as to a file', async () => {
    const sink = new PassThrough();
    const [data, written] = await Promise.all([buffer(sink), writeDiagnosticBundle(context(), sink)]);
    expect(data.length).toBe(written.zipBytes);
    expect(data.subarray(0, 4).toString('hex')).toBe('504b0304');
    expect(diagnosticBundleFileName(new Date('2025-03-14T10:15:02.123Z'))).toBe('exobar-diagnostics-20250314-101502.zip');
  });

  it('states the diagnosis in the manifest with its numbers', async () => {
    const { entries } = await exportZip(context());
    const manifest = JSON.parse(entries.get('manifest.json')!.toString()) as {
      diagnosis: { findings: Array<Record<string, unknown>>; summary: Record<string, number> };
    };
    const queued = manifest.diagnosis.findings.find((f) => f.requestId === 'chatcmpl-queued')!;
    expect(queued).toMatchObject({ cause: 'queued_behind_same_model_prefill', dominantPart: 'ack_wait', evidence: { blockingRequestId: 'chatcmpl-long' } });
    expect(manifest.diagnosis.summary).toMatchObject({ own_prefill: 1, queued_behind_same_model_prefill: 1 });
  });

  it('exports from a data directory with no node running: logs and settings only', async () => {
    await writeFile(join(dataDir, 'settings.json'), JSON.stringify({ apiPort: 1234, mlxPython: '/Users/zelda-qa/py' }));
    const { entries } = await exportZip(context({ node: null, settings: null }));
    const parsed = parseBundle(entries);
    expect(parsed.json.get('snapshot.json')).toMatchObject({ available: false });
    expect(parsed.jsonl.get('events.jsonl')).toEqual([]);
    expect(parsed.csv.get('timeline.csv')).toEqual([]);
    expect(parsed.json.get('settings.json')).toMatchObject({ source: 'data directory', valid: true, settings: { apiPort: 1234, mlxPython: '~/py' } });
    expect(parsed.json.get('manifest.json') as { diagnosis: unknown; source: string }).toMatchObject({ diagnosis: null, source: 'data directory' });
    expect(parsed.text.get('runners/gone-3/stderr.log')).toBe('crash in ~/x with prompt: [redacted:text]\n');
  });

  it('stays within its size limit: long logs are cut from the start, with a marker', async () => {
    const line = `${'x'.repeat(99)}\n`;
    const big = line.repeat(40_000); // ~4 MB per stream
    const ids = Array.from({ length: 6 }, (_, i) => `extra-${i}`);
    const logs = Object.fromEntries([SMALL, MEDIUM, ...ids].map((id) => [id, { stdout: big, stderr: `${big}LAST LINE\n` }]));
    const limit = 3 * 1024 * 1024;
    const { written, entries } = await exportZip(context({ node: syntheticNode({ logs, instanceIds: ids }), limits: { maxTotalBytes: limit } }));
    expect(written.totalBytes).toBeLessThanOrEqual(limit);
    const log = entries.get('runners/extra-0/stderr.log')!.toString();
    expect(log).toMatch(/^\[exobar diagnostics: the first \d+ bytes of this log are not in the bundle\]\nx{99}\n/);
    expect(log.endsWith('LAST LINE\n')).toBe(true);
    expect(written.truncated.some((t) => t.name === 'runners/extra-0/stderr.log')).toBe(true);
  });
});
