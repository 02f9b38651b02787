/**
 * The diagnostic bundle in attach mode, from the real core attached to the fake exo
 * over HTTP: exo/state.json (prompt text redacted), exo/state-history.jsonl,
 * exo/poll-errors.jsonl, the tails of exo's own logs on this Mac, and the exo causes
 * the diagnosis names. A planted prompt is absent from every file of the zip. With
 * traffic through exobar (the serving fake exo, blocking worker): exo/requests.jsonl
 * (no prompt text) and the dispatch stall named.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoreRig, type CoreRig } from '../../../test/support/api-harness';
import {
  startFakeExo,
  type FakeExo,
  mappedExoSnapshot,
  LLAMA_1B,
  LLAMA_3B,
  QWEN_30B,
  demoCluster,
  startServingExo,
  streamChatText,
  FakeExoCluster,
} from '../../../test/support/fake-exo';
import { diagnoseExo } from './exo-diagnosis';
import { readZip } from '../../../test/support/diagnostics/read-zip';
import { eventually } from '../../../test/support/eventually';

const PLANTED = 'planted-prompt-about-the-acquisition-of-zebra-corp';
const PLANTED_SYSTEM = 'planted-system-instructions-xyzzy';

describe('the bundle in attach mode', () => {
  let fake: FakeExo;
  let rig: CoreRig;
  let logDir: string;
  let files: Map<string, Buffer>;

  beforeAll(async () => {
    logDir = await mkdtemp(join(tmpdir(), 'exo-log-'));
    await mkdir(join(logDir, 'runner_log'), { recursive: true });
    // exo's own logs on this Mac, with the prompt as exo's pydantic reprs and JSON would carry it.
    await writeFile(
      join(logDir, 'exo.log'),
      [
        '[ 10:00:00.000 | INFO ] Starting EXO',
        '[ 10:00:00.100 | INFO ] FAST_SYNCH forced ON',
        `[ 10:00:05.000 | DEBUG ] TextGeneration(task_params=TextGenerationTaskParams(model='${QWEN_30B}', input=[InputMessage(role='user', content='${PLANTED}')], instructions='${PLANTED_SYSTEM}'))`,
        '[ 10:00:06.000 | INFO ] Fast synch flag: 1',
        '',
      ].join('\n'),
    );
    await writeFile(join(logDir, 'runner_log', 'stdout.log'), `{"chat_template_messages": [{"role": "user", "content": "${PLANTED}"}]}\n`);
    await writeFile(join(logDir, 'runner_log', 'stderr.log'), `Traceback: prompt: ${PLANTED}\nRuntimeError: [METAL] Command buffer execution failed\n`);

    const cluster = demoCluster();
    cluster.submit(QWEN_30B, PLANTED);
    cluster.step();
    fake = await startFakeExo({ cluster });
    rig = await startCoreRig({ exo: { offerUrl: null, exoLogDir: logDir } });
    expect((await rig.control('POST', '/api/exo/attach', { url: fake.url })).status).toBe(200);
    await eventually(() => rig.node.snapshot().exo?.connected && rig.node.snapshot().instances.length === 3, 10_000, 'attached');
    // A failed poll for poll-errors.jsonl: one 500 from exo, then it recovers.
    fake.inject('status500', { path: '/state/tasks', times: 1 });
    await eventually(() => (rig.node.snapshot().exo?.pollErrors ?? 0) > 0, 10_000, 'a poll error');
    await eventually(() => rig.node.snapshot().exo?.connected, 15_000, 'reconnected');
    // The fast-synch value is read from exo's log on its own schedule: wait for it.
    await eventually(() => rig.node.snapshot().exo?.nodes[0]?.fastSynch.source === 'exo_log', 10_000, "fast synch from exo's log");

    const response = await fetch(`${rig.url}/api/diagnostics`, { method: 'POST', headers: { Authorization: `Bearer ${rig.token}` } });
    expect(response.status).toBe(200);
    const zip = join(logDir, 'bundle.zip');
    await writeFile(zip, Buffer.from(await response.arrayBuffer()));
    files = await readZip(zip);
  }, 60_000);

  afterAll(async () => {
    await rig?.close();
    await fake?.close();
    await rm(logDir, { recursive: true, force: true });
  });

  it('holds exo/ with the last state, the status history, the poll errors and the tails of exo’s logs', () => {
    for (const name of [
      'exo/state.json',
      'exo/state-history.jsonl',
      'exo/poll-errors.jsonl',
      'exo/diagnosis.json',
      'exo/logs/exo.log',
      'exo/logs/runner_log/stdout.log',
      'exo/logs/runner_log/stderr.log',
    ]) {
      expect(files.has(name), name).toBe(true);
    }
    const state = JSON.parse(files.get('exo/state.json')!.toString()) as { url: string; state: Record<string, unknown> };
    expect(state.url).toBe(fake.url);
    expect(Object.keys(state.state).sort()).toEqual(['instances', 'lastSeen', 'nodeIdentities', 'nodeMemory', 'nodeSystem', 'runners', 'tasks', 'topology']);
    const tasks = Object.values(state.state.tasks as Record<string, Record<string, { taskParams?: Record<string, unknown> }>>).flatMap((t) => Object.values(t));
    const params = tasks.find((t) => t.taskParams)!.taskParams!;
    expect(params.input).toBe('[redacted:text]');
    expect(params.chat_template_messages).toBe('[redacted:text]');
    expect(params.max_output_tokens).toBeTypeOf('number');
    expect(params.images).toBe('[redacted:text]');
    expect((JSON.parse(files.get('exo/state.json')!.toString()) as { taskTextFieldsRedacted: number }).taskTextFieldsRedacted).toBeGreaterThan(0);

    const history = files
      .get('exo/state-history.jsonl')!
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { at: number; kind: string; to: string | null });
    expect(history.some((h) => h.kind === 'runner' && h.to === 'RunnerFailed')).toBe(true);
    expect(history.some((h) => h.kind === 'task' && h.to === 'Pending')).toBe(true);
    expect(history.every((h) => typeof h.at === 'number')).toBe(true);
    const errors = files
      .get('exo/poll-errors.jsonl')!
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { path: string; kind: string });
    expect(errors).toContainEqual(expect.objectContaining({ path: '/state/tasks', kind: 'http_status' }));
    expect(files.get('exo/logs/exo.log')!.toString()).toContain('FAST_SYNCH forced ON');
    expect(files.get('exo/logs/runner_log/stderr.log')!.toString()).toContain('Command buffer execution failed');
  });

  it('names the exo causes: the failed runner with RunnerMetalGpuTimeout, two ring models with fast synch on (read, not assumed)', () => {
    const manifest = JSON.parse(files.get('manifest.json')!.toString()) as {
      exoDiagnosis: Array<{ cause: string; exoDiagnostics: string[]; assumed: boolean; instanceIds: string[] }>;
    };
    const failed = manifest.exoDiagnosis.find((c) => c.cause === 'exo_runner_failed')!;
    expect(failed).toMatchObject({ exoDiagnostics: ['RunnerMetalGpuTimeout'], instanceIds: [`exo:${LLAMA_3B}`] });
    expect(manifest.exoDiagnosis.find((c) => c.cause === 'two_ring_fast_synch')).toMatchObject({ assumed: false });
    const readme = files.get('README.txt')!.toString();
    expect(readme).toContain('exo_runner_failed');
    expect(readme).toContain('exo diagnostics: RunnerMetalGpuTimeout');
  });

  it('leaves the planted prompt out of every file', () => {
    expect(files.size).toBeGreaterThan(10);
    for (const [name, data] of files) {
      const text = data.toString('utf8');
      expect(text.includes(PLANTED), name).toBe(false);
      expect(text.includes(PLANTED_SYSTEM), name).toBe(false);
    }
  });
});

describe('the bundle with traffic through exobar', () => {
  it('holds exo/requests.jsonl without prompt text, and names exo_dispatch_stall with both models', async () => {
    const salt = 'planted-proxied-prompt-quokka';
    const exo = await startServingExo({ mode: 'blocking', timeScale: 0.25 });
    const rig = await startCoreRig({ exoUrl: exo.url, exo: { offerUrl: null, exoLogDir: null, stallThresholds: { dispatchStallMs: 300 } } });
    const controller = new AbortController();
    const send = (base: string, model: string, tokens: number) => streamChatText(base, model, tokens, salt, controller.signal);
    try {
      await eventually(() => rig.node.snapshot().instances.length === 2, 10_000, 'the exo instances');
      const long = send(rig.url, LLAMA_3B, 60_000);
      await eventually(() => rig.node.snapshot().instances.find((i) => i.model === LLAMA_3B)?.prefill, 10_000, 'the long prefill');
      // Straight to exo: exo's plan loop now waits for the prefilling 3B's acknowledgement.
      const bypass = send(exo.url, LLAMA_3B, 50);
      await eventually(() => exo.worker.openCommands().length === 2, 5000, 'exo to have the bypassing request');
      const short = send(rig.url, LLAMA_1B, 50);
      await eventually(() => rig.node.snapshot().warnings.some((w) => w.code === 'exo_dispatch_stall'), 10_000, 'exo_dispatch_stall');
      const response = await fetch(`${rig.url}/api/diagnostics`, { method: 'POST', headers: { Authorization: `Bearer ${rig.token}` } });
      expect(response.status).toBe(200);
      const dir = await mkdtemp(join(tmpdir(), 'exo-bundle-'));
      await writeFile(join(dir, 'bundle.zip'), Buffer.from(await response.arrayBuffer()));
      const zipped = await readZip(join(dir, 'bundle.zip'));
      await rm(dir, { recursive: true, force: true });
      controller.abort();
      await Promise.all([long, bypass, short]);

      const requests = zipped
        .get('exo/requests.jsonl')!
        .toString()
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { model: string; phase: string; totalTokens: number });
      expect(requests.map((r) => [r.model, r.phase])).toEqual([
        [LLAMA_3B, 'prefilling'],
        [LLAMA_1B, 'sent'],
      ]);
      // exo's prefill counts one token less than the prompt (its last is read with the first decode step).
      expect(requests[0]!.totalTokens).toBe(59_999);
      // Held, dispatched, prefilling and aborted: every change the proxy made was one its table allows.
      expect(JSON.parse(zipped.get('exo/proxy-refused-transitions.json')!.toString())).toEqual({ count: 0, latest: [] });
      const manifest = JSON.parse(zipped.get('manifest.json')!.toString()) as {
        exoDiagnosis: Array<{ cause: string; instanceIds: string[]; explanation: string }>;
      };
      const stall = manifest.exoDiagnosis.find((c) => c.cause === 'exo_dispatch_stall')!;
      expect(stall.instanceIds).toEqual([`exo:${LLAMA_1B}`, `exo:${LLAMA_3B}`]);
      expect(stall.explanation).toContain('that exobar did not send');
      expect(zipped.get('README.txt')!.toString()).toContain('exo_dispatch_stall');
      for (const [name, data] of zipped) expect(data.toString('utf8').includes(salt), name).toBe(false);
    } finally {
      controller.abort();
      await rig.close();
      await exo.close();
    }
  }, 60_000);
});

describe('exo causes', () => {
  it('names a node lost, with the instances that span it', async () => {
    const lost = await mappedExoSnapshot({
      build: (now) => {
        const cluster = new FakeExoCluster(now);
        cluster.addNode({ name: 'studio-a', chip: 'Apple M3 Ultra', ramGb: 256 });
        cluster.addNode({ name: 'mini-b', chip: 'Apple M4 Pro', ramGb: 64 });
        cluster.addInstance({ model: QWEN_30B, nodes: ['studio-a', 'mini-b'], ready: true });
        return cluster;
      },
      then: async (h) => {
        h.cluster.dropNode('mini-b');
        for (let t = 0; t < 35_000; t += 5_000) await h.round(5_000);
      },
    });
    expect(diagnoseExo(lost)).toEqual([expect.objectContaining({ cause: 'exo_node_lost', instanceIds: [`exo:${QWEN_30B}`], assumed: false })]);
    expect(diagnoseExo(lost)[0]!.explanation).toMatch(/^mini-b has not been seen for 3\d s/);
  });

  it('names nothing when no exo is attached', () => {
    expect(diagnoseExo(null)).toEqual([]);
  });
});
