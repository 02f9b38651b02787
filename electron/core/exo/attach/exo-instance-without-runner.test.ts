/**
 * An instance exo keeps registered while its runner is gone (exo #2120, #1458): against
 * the serving fake exo, which reproduces it (the runner vanishes from /state/runners, the
 * instance stays, a request sent to exo hangs with no error). exobar warns
 * `exo_instance_without_runner` naming the model and the Mac, the diagnosis names it, and
 * a request through exobar is answered 503 at once with the reason and the way out,
 * never sent to exo to hang there.
 */
import OpenAI, { APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCoreRig, type CoreRig } from '../../../../test/support/api-harness';
import { LLAMA_1B, LLAMA_3B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { eventually } from '../../../../test/support/eventually';
import { diagnoseExo } from '../../diagnostics/exo-diagnosis';

let exo: ServingExo;
let rig: CoreRig;
const hi = [{ role: 'user' as const, content: 'hi' }];

beforeAll(async () => {
  exo = await startServingExo({ mode: 'blocking', timeScale: 0.25 });
  rig = await startCoreRig({ exoUrl: exo.url, exo: { offerUrl: null, exoLogDir: null, monitor: { warnings: { withoutRunnerMs: 300 } } } });
  await eventually(() => rig.node.snapshot().instances.some((i) => i.model === LLAMA_1B), 15_000, 'the exo instance in the snapshot');
}, 30_000);

afterAll(async () => {
  await rig?.close();
  await exo?.close();
});

describe('an exo instance whose runner is gone', () => {
  it('is warned about, named by the diagnosis, and its requests are answered 503 at once instead of hanging in exo', async () => {
    const served = await rig.client.chat.completions.create({ model: LLAMA_1B, messages: hi, max_tokens: 2 });
    expect(served.choices[0]!.finish_reason).toBe('length');

    exo.cluster.vanishRunner(LLAMA_1B, 'studio-a');
    // As real exo: a request sent to exo itself is accepted and waits for a runner that never comes.
    const direct = new AbortController();
    const hanging = fetch(`${exo.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_1B, messages: hi, max_tokens: 2 }),
      signal: direct.signal,
    }).catch((error: unknown) => error);
    await eventually(() => exo.worker.openCommands().length === 1, 5000, 'the direct request open in the fake exo');

    const warning = await eventually(
      () => rig.node.snapshot().warnings.find((w) => w.code === 'exo_instance_without_runner'),
      10_000,
      'exo_instance_without_runner',
    );
    expect(warning.title).toMatch(/^Llama-3\.2-1B-Instruct-4bit is still registered in exo but has no working runner on studio-a \(no runner\) \(for \d+ s\)$/);
    expect(warning.fix).toMatch(/^Delete the instance in exo \(DELETE \/instance\/[0-9a-f-]+, or Stop in exobar\) and place the model again/);
    expect(warning.instanceIds).toEqual([`exo:${LLAMA_1B}`]);
    expect(diagnoseExo(rig.node.snapshot()).map((c) => c.cause)).toContain('exo_instance_without_runner');

    const refused = await rig.client.chat.completions.create({ model: LLAMA_1B, messages: hi, max_tokens: 2 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.InternalServerError);
    expect(refused).toMatchObject({ status: 503, code: 'exo_instance_without_runner', param: 'model' });
    expect((refused as APIError).message).toContain('has no working runner on studio-a');
    expect((refused as APIError).headers?.get('x-should-retry')).toBe('false');
    // Never sent to exo: only the direct request is open there.
    expect(exo.worker.openCommands()).toHaveLength(1);

    // Another model of the cluster is served as before.
    const other = await rig.client.chat.completions.create({ model: LLAMA_3B, messages: hi, max_tokens: 2 });
    expect(other.choices[0]!.finish_reason).toBe('length');
    direct.abort();
    await hanging;
  });

  it('says a failed runner once, as exo_runner_failed, and still answers its requests 503 at once', async () => {
    exo.cluster.failRunner(LLAMA_3B, 'studio-a');
    // Within the grace (300 ms here) exo itself answers (500, its runner failed); past it exobar
    // refuses at once, as the instance has had no working runner that long.
    const refused = await eventually(
      async () => {
        const answer = await rig.client.chat.completions.create({ model: LLAMA_3B, messages: hi, max_tokens: 2 }).catch((e: unknown) => e);
        return answer instanceof OpenAI.APIError && answer.status === 503 ? answer : undefined;
      },
      10_000,
      'the failed instance refused with 503',
    );
    expect(refused.code).toBe('exo_instance_without_runner');
    expect(refused.message).toContain('has no working runner on studio-a (RunnerFailed)');
    const about3B = rig.node.snapshot().warnings.filter((w) => w.instanceIds.includes(`exo:${LLAMA_3B}`)).map((w) => w.code);
    expect(about3B).toEqual(['exo_runner_failed']);
  });
});
