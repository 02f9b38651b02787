/**
 * A client never hangs (docs/architecture.md, invariant 3): crashes, hangs and garbage on a
 * runner's stdout, with real sim-runner processes.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { FAULT_PROMPTS, type RunnerEngineOptions } from '../../../shared/runner-protocol';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, submitTracked, type NodeFixture } from '../../../test/support/node-fixture';
import { simSpawnSpec } from './sim-spawn-spec';
import { localInstances } from '../../../shared/instance-state';
import { eventually } from '../../../test/support/eventually';

const TIME_SCALE = 0.1;
const MODEL = 'sim/llama-3.2-1b';
const faultPrompt = (fault: string) => [{ role: 'user' as const, content: `please ${fault} now` }];

/** Wraps the sim runner in a shell that does something first (garbage, env overrides). */
function wrappedSim(dataDir: string, prefix: string) {
  return (model: { id: string }, _id: string, engine: RunnerEngineOptions) => {
    const spec = simSpawnSpec(model.id, TIME_SCALE, join(dataDir, 'sim-gpu'), engine);
    return { ...spec, command: 'sh', args: ['-c', `${prefix}; exec "$0" "$@"`, spec.command, ...spec.args] };
  };
}

describe('runner failures', () => {
  let fixture: NodeFixture;
  afterEach(async () => fixture?.cleanup());

  it('fails every in-flight request within 2 s of a crash, then serves again after the restart', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE, restart: { baseDelayMs: 100 } });
    const { node } = fixture;
    await fixture.launch(MODEL);
    const bystander = submitTracked(node, { model: MODEL, messages: makePrompt(40), maxTokens: 100_000 });
    await eventually(() => bystander.tokens > 0, 10_000, 'bystander decoding');
    const crasher = submitTracked(node, { model: MODEL, messages: faultPrompt(FAULT_PROMPTS.crash), maxTokens: 1000 });

    const [a, b] = await Promise.all([crasher.handle.done, bystander.handle.done]);
    for (const outcome of [a, b]) expect(outcome).toMatchObject({ type: 'failed', error: { code: 'runner_crashed' } });
    const events = node.recentEvents();
    const exitedAt = events.find((e) => e.kind === 'runner_exited')!.t;
    const failedAt = events.filter((e) => e.kind === 'request_failed').map((e) => e.t);
    for (const t of failedAt) expect(t - exitedAt).toBeLessThan(2000);
    expect(localInstances(node.snapshot())[0]!.runner.lastExit).toMatchObject({ cause: 'crashed', exitCode: 1 });

    const instanceId = localInstances(node.snapshot())[0]!.id;
    await node.waitForReady(instanceId, 20_000);
    expect(localInstances(node.snapshot())[0]!.runner.restarts).toBe(1);
    const later = submitTracked(node, { model: MODEL, messages: makePrompt(40), maxTokens: 5 });
    expect((await later.handle.done).type).toBe('finished');
  });

  it('catches a hung runner with the watchdog, fails its requests and restarts it', async () => {
    fixture = createNodeFixture({
      simTimeScale: TIME_SCALE,
      watchdog: { prefillMs: 600, decodeMs: 600, lifecycleMs: 10_000 },
      restart: { baseDelayMs: 100 },
    });
    const { node } = fixture;
    await fixture.launch(MODEL);
    const hung = submitTracked(node, { model: MODEL, messages: faultPrompt(FAULT_PROMPTS.hang), maxTokens: 50 });
    const outcome = await hung.handle.done;
    expect(outcome.type).toBe('failed');
    if (outcome.type === 'failed') {
      expect(outcome.error.code).toBe('runner_stuck');
      expect(outcome.error.message).toMatch(/no output for .* during prefill \(watchdog deadline/);
    }
    const events = node.recentEvents();
    const firedAt = events.find((e) => e.kind === 'watchdog_fired')!.t;
    const failedAt = events.find((e) => e.kind === 'request_failed' && e.requestId === hung.handle.id)!.t;
    expect(failedAt - firedAt).toBeLessThan(2000);

    const instanceId = localInstances(node.snapshot())[0]!.id;
    await node.waitForReady(instanceId, 20_000);
    const later = submitTracked(node, { model: MODEL, messages: makePrompt(40), maxTokens: 5 });
    expect((await later.handle.done).type).toBe('finished');
    expect(localInstances(node.snapshot())[0]!.runner.lastExit).toMatchObject({ cause: 'stuck', message: expect.stringMatching(/stuck/) });
  });

  it('counts garbage on a runner stdout and keeps working', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    const dataDir = fixture.dataDir;
    await fixture.cleanup();
    fixture = createNodeFixture(
      { simTimeScale: TIME_SCALE, dataDir },
      { runnerCommand: wrappedSim(dataDir, `echo 'not json at all'; echo '{"type":"Unknown"}'; echo '{"type":"TaskAcknowledged"}'`) },
    );
    const { node } = fixture;
    await fixture.launch(MODEL);
    expect(localInstances(node.snapshot())[0]!.runner.malformedLines).toBe(3);
    const request = submitTracked(node, { model: MODEL, messages: makePrompt(40), maxTokens: 5 });
    expect((await request.handle.done).type).toBe('finished');
    expect(node.recentEvents().filter((e) => e.kind === 'runner_malformed_line')).toHaveLength(3);
  });

  it('refuses a runner that sees a different fast-synch value than the policy decided', async () => {
    fixture = createNodeFixture({ simTimeScale: TIME_SCALE });
    const dataDir = fixture.dataDir;
    await fixture.cleanup();
    fixture = createNodeFixture(
      { simTimeScale: TIME_SCALE, dataDir },
      { runnerCommand: wrappedSim(dataDir, 'export MLX_METAL_FAST_SYNCH=1 EXO_FAST_SYNCH=true') },
    );
    const { node } = fixture;
    const instance = await node.createInstance({ model: MODEL, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await expect(node.waitForReady(instance.id, 20_000)).rejects.toMatchObject({ code: 'fast_synch_mismatch' });
    const snap = node.snapshot();
    expect(localInstances(snap)[0]!.fastSynch).toMatchObject({ enabled: false, reported: true });
    expect(localInstances(snap)[0]!.runner.status.kind).toBe('RunnerFailed');
    expect(snap.warnings.map((w) => w.code)).toContain('fast_synch_mismatch');
    expect(() => node.submit({ model: MODEL, messages: makePrompt(10), maxTokens: 1 }, () => undefined)).toThrow(/MLX_METAL_FAST_SYNCH/);
  });
});
