/**
 * The bundle after real incidents, with the real node and sim-runner processes: a
 * request queued behind the same model's long prefill, a short request beside the
 * other model's prefill, and a watchdog kill. The diagnosis must name each cause, and
 * nothing planted in prompts, settings or runner logs may reach the zip.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAULT_PROMPTS } from '../../../shared/runner-protocol';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import { simSpawnSpec } from '../node/sim-spawn-spec';
import type { DiagnosticContext } from './bundle-context';
import { writeDiagnosticBundle } from './bundle-writer';
import type { Finding } from './diagnosis';
import { parseBundle, readZip } from '../../../test/support/diagnostics/read-zip';
import { eventually, sleep } from '../../../test/support/eventually';

const SMALL = 'sim/llama-3.2-1b';
const MEDIUM = 'sim/llama-3.2-3b';

const identity = { userName: 'zelda-qa', hostName: 'zeldas-mbp.local', homeDir: '/Users/zelda-qa' };
const SECRET_PROMPT = 'confidential-merger-plan-7731';
const API_KEY = 'sk-live-4fT9qW2mZx8LpR6vB1';

interface Exported {
  findings: Finding[];
  entries: Map<string, Buffer>;
  parsed: ReturnType<typeof parseBundle>;
}

async function exportBundle(fixture: NodeFixture, extra: Partial<DiagnosticContext> = {}): Promise<Exported> {
  const path = join(fixture.dataDir, 'bundle.zip');
  await writeDiagnosticBundle({ node: fixture.node, dataDir: fixture.dataDir, settings: null, version: '0.1.0', identity, ...extra }, path);
  const entries = await readZip(path);
  const parsed = parseBundle(entries);
  const manifest = parsed.json.get('manifest.json') as { diagnosis: { findings: Finding[] } };
  return { findings: manifest.diagnosis.findings, entries, parsed };
}

describe('bundle after real incidents', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('names a request queued behind the same model\u2019s long prefill', async () => {
    fixture = createNodeFixture({ simTimeScale: 0.1 });
    await fixture.launch(MEDIUM);
    // ~30k tokens: ~19 s of prefill at calibrated speed, ~1.9 s here.
    const long = submitTracked(fixture.node, { model: MEDIUM, messages: makePrompt(30_000, 'long-prompt'), maxTokens: 4 });
    await eventually(() => long.events.some((e) => e.type === 'prefill_progress'), 10_000, 'the long prefill to start');
    const queued = submitTracked(fixture.node, { model: MEDIUM, messages: makePrompt(40, 'queued'), maxTokens: 4 });
    await Promise.all([long.handle.done, queued.handle.done]);

    const { findings, parsed } = await exportBundle(fixture, { diagnosis: { thresholdMs: 500 } });
    const finding = findings.find((f) => f.requestId === queued.handle.id);
    expect(finding, JSON.stringify(findings, null, 2)).toBeDefined();
    expect(finding!.cause).toBe('queued_behind_same_model_prefill');
    expect(finding!.evidence.blockingRequestId).toBe(long.handle.id);
    expect(findings.find((f) => f.requestId === long.handle.id)?.cause).toBe('own_prefill');
    const row = parsed.csv.get('timeline.csv')!.find((r) => r.request_id === queued.handle.id)!;
    expect(row.cause).toBe('queued_behind_same_model_prefill');
    expect(Number(row.ack_wait_ms)).toBeGreaterThan(Number(row.dispatch_ms) * 10);
  });

  it('says a request cancelled mid-prefill was cancelled part-way, at how many tokens, with a rate of the tokens processed only', async () => {
    fixture = createNodeFixture({ simTimeScale: 0.1 });
    await fixture.launch(MEDIUM);
    const long = submitTracked(fixture.node, { model: MEDIUM, messages: makePrompt(30_000, 'cancelled-prompt'), maxTokens: 4 });
    const processedSoFar = () => Math.max(0, ...long.events.map((e) => (e.type === 'prefill_progress' ? e.processedTokens : 0)));
    await eventually(() => processedSoFar() >= 8192, 10_000, 'two prefill chunks');
    expect(fixture.node.cancel(long.handle.id)).toBe(true);
    await long.handle.done.catch(() => undefined);
    expect(long.events.some((e) => e.type === 'cancelled')).toBe(true);
    expect(long.tokens).toBe(0);

    const { findings } = await exportBundle(fixture, { diagnosis: { thresholdMs: 200 } });
    const finding = findings.find((f) => f.requestId === long.handle.id);
    expect(finding, JSON.stringify(findings, null, 2)).toBeDefined();
    const promptTokens = finding!.promptTokens;
    expect(finding!.outcome).toBe('cancelled');
    // What the runner reported last: at least the two chunks waited for, never the whole prompt.
    expect(finding!.processedPromptTokens).toBeGreaterThanOrEqual(8192);
    expect(finding!.processedPromptTokens).toBeLessThan(promptTokens);
    expect(finding!.processedPromptTokens).toBe(processedSoFar());
    expect(finding!.explanation).toMatch(
      new RegExp(`^Cancelled part-way through its prefill, at ${finding!.processedPromptTokens} of ${promptTokens} prompt tokens\\.`),
    );
    expect(finding!.explanation).not.toMatch(new RegExp(`prefill of ${promptTokens} prompt tokens took`));
    // The rate is of the tokens processed: over the time the request ran it accounts for
    // about what was processed, far from the whole prompt (the old, wrong figure).
    const { promptTokensPerSecond: rate, serviceMs } = finding!.evidence as { promptTokensPerSecond: number; serviceMs: number };
    expect(rate).toBeGreaterThan(0);
    expect((rate * serviceMs) / 1000).toBeLessThan(promptTokens * 0.8);
  });

  it('names the shared GPU for a short request to one model while the other prefills', async () => {
    // A larger time scale than elsewhere: the 1B's ~0.23 s must stand out from process noise.
    fixture = createNodeFixture({ simTimeScale: 0.5 });
    await Promise.all([fixture.launch(SMALL), fixture.launch(MEDIUM)]);
    for (let i = 0; i < 3; i++) {
      const solo = submitTracked(fixture.node, { model: SMALL, messages: makePrompt(20, `solo-${i}`), maxTokens: 4 });
      await solo.handle.done;
    }
    // ~8k tokens on the 3B: ~5 s of prefill calibrated; the 1B request comes in the middle of it.
    const long = submitTracked(fixture.node, { model: MEDIUM, messages: makePrompt(8000, 'other-model'), maxTokens: 4 });
    await eventually(() => long.events.some((e) => e.type === 'prefill_progress'), 10_000, 'the 3B prefill to start');
    await sleep(200);
    const short = submitTracked(fixture.node, { model: SMALL, messages: makePrompt(20, 'beside'), maxTokens: 4 });
    await Promise.all([long.handle.done, short.handle.done]);

    // Every request examined: the 1B's TTFT is well under a second, it is its cause that matters.
    const { findings } = await exportBundle(fixture, { diagnosis: { thresholdMs: 0 } });
    const finding = findings.find((f) => f.requestId === short.handle.id)!;
    expect(finding.cause, finding.explanation).toBe('shared_gpu');
    expect(finding.evidence).toMatchObject({ confirmed: true, soloSamples: 3 });
    expect(finding.evidence.slowdown as number).toBeGreaterThan(1.3);
    // The 1B was never held up by the node or by the 3B's acknowledgements.
    expect(finding.dominantPart).not.toBe('dispatch');
    expect(findings.some((f) => f.cause === 'node_dispatch_delay')).toBe(false);
  });

  it('flags a node dispatch delay as a bug when dispatch awaits another runner\u2019s ack (exo\u2019s blocking loop)', async () => {
    // The benchmark's baseline of exo's worker before its fix: proves the verdict can fire.
    fixture = createNodeFixture({ simTimeScale: 0.1 }, { dispatchMode: 'blocking-baseline' });
    await Promise.all([fixture.launch(SMALL), fixture.launch(MEDIUM)]);
    const long = submitTracked(fixture.node, { model: MEDIUM, messages: makePrompt(30_000, 'baseline-long'), maxTokens: 4 });
    await eventually(() => long.events.some((e) => e.type === 'prefill_progress'), 10_000, 'the long prefill to start');
    const queued = submitTracked(fixture.node, { model: MEDIUM, messages: makePrompt(40, 'baseline-queued'), maxTokens: 4 });
    await sleep(100);
    const short = submitTracked(fixture.node, { model: SMALL, messages: makePrompt(20, 'baseline-short'), maxTokens: 4 });
    await Promise.all([long.handle.done, queued.handle.done, short.handle.done]);

    const { findings } = await exportBundle(fixture, { diagnosis: { thresholdMs: 500 } });
    const finding = findings.find((f) => f.requestId === short.handle.id)!;
    expect(finding).toMatchObject({ cause: 'node_dispatch_delay', bugToReport: true, dominantPart: 'dispatch' });
    const blockers = finding.evidence.otherRunnersAwaitingAck as Array<{ requestId: string }>;
    expect(blockers.map((b) => b.requestId)).toContain(queued.handle.id);
    // Bugs come first in the manifest.
    expect(findings[0]!.bugToReport).toBe(true);
  });

  it('names a watchdog kill, with the watchdog\u2019s reason in the runner\u2019s exit.json', async () => {
    fixture = createNodeFixture({
      simTimeScale: 0.1,
      watchdog: { prefillMs: 600, decodeMs: 600, lifecycleMs: 10_000 },
      restart: { baseDelayMs: 100 },
    });
    const instanceId = await fixture.launch(SMALL);
    const hung = submitTracked(fixture.node, { model: SMALL, messages: [{ role: 'user', content: `${FAULT_PROMPTS.hang} ${SECRET_PROMPT}` }], maxTokens: 8 });
    const outcome = await hung.handle.done;
    expect(outcome.type).toBe('failed');
    await fixture.node.waitForReady(instanceId, 20_000);

    const { findings, parsed, entries } = await exportBundle(fixture);
    const finding = findings.find((f) => f.requestId === hung.handle.id)!;
    expect(finding).toMatchObject({ cause: 'runner_stuck', ttftMs: null, evidence: { failureCode: 'runner_stuck', watchdogPhase: 'prefill' } });
    // The 600 ms ceiling from settings caps the adaptive deadline (the floor, 1 s at this scale).
    expect(finding.evidence.silentMs as number).toBeGreaterThanOrEqual(600);
    const exit = parsed.json.get(`runners/${instanceId}/exit.json`) as { lastExit: { reason: string; signal: string | null }; watchdog: unknown[] };
    expect(exit.lastExit).toMatchObject({ cause: 'stuck', message: expect.stringMatching(/watchdog/) });
    expect(exit.watchdog).toHaveLength(1);
    for (const [name, data] of entries) expect(data.toString().includes(SECRET_PROMPT), name).toBe(false);
  });

  it('keeps what was planted in prompts, settings and runner logs out of the zip', async () => {
    const planted = `token for ${identity.userName} at ${identity.homeDir}/secrets: ${API_KEY}; prompt: ${SECRET_PROMPT}`;
    fixture = createNodeFixture(
      { simTimeScale: 0.1 },
      {
        // The real sim runner, started by a shell that first writes the planted line to its stderr and stdout.
        runnerCommand: (model, _id, engine) => {
          const spec = simSpawnSpec(model.id, 0.1, join(fixture.dataDir, 'sim-gpu'), engine);
          return {
            ...spec,
            command: 'sh',
            args: ['-c', 'printf "%s\\n" "$PLANTED" >&2; printf "%s\\n" "$PLANTED"; exec "$0" "$@"', spec.command, ...spec.args],
            env: { ...spec.env, PLANTED: planted },
          };
        },
      },
    );
    const instanceId = await fixture.launch(SMALL);
    const request = submitTracked(fixture.node, {
      model: SMALL,
      messages: [{ role: 'user', content: `${SECRET_PROMPT} key ${API_KEY} from ${identity.userName} in ${identity.homeDir}/notes` }],
      maxTokens: 6,
    });
    expect((await request.handle.done).type).toBe('finished');
    // The planted line is in the runner's real logs, in memory and on disk.
    expect(fixture.node.runnerLogs(instanceId)!.stderr).toContain(SECRET_PROMPT);

    const settings = {
      apiPort: 52416,
      defaultFastSynch: 'auto',
      mlxPython: `${identity.homeDir}/venv/bin/python`,
      openaiKey: API_KEY,
      note: `owner ${identity.userName}`,
    };
    const { entries, parsed } = await exportBundle(fixture, { settings });
    const forbidden = [SECRET_PROMPT, API_KEY, identity.userName, identity.homeDir, 'zeldas-mbp'];
    for (const [name, data] of entries) {
      const text = data.toString('utf8');
      for (const secret of forbidden) expect(text.includes(secret), `${secret} in ${name}`).toBe(false);
    }
    // The runner's own output is there, minus what was planted; the request shows as counts.
    expect(parsed.text.get(`runners/${instanceId}/stderr.log`)).toContain('prompt: [redacted:text]');
    expect(parsed.text.get(`runners/${instanceId}/stdout.log`)).toContain('"type":"Hello"');
    const row = parsed.csv.get('timeline.csv')!.find((r) => r.request_id === request.handle.id)!;
    expect(Number(row.prompt_tokens)).toBeGreaterThan(5);
    expect(Number(row.completion_tokens)).toBe(6);
  });
});
