/**
 * A cancelled request exo keeps generating, end to end: a real `exobar serve --exo URL`
 * process over the serving fake exo, which cancels as exo 0.3.70 does (the task
 * deleted about 10 ms after Cancelled, the runner never told, RunnerRunning with no
 * task until the request's max_tokens). exobar shows it on the exo instance, raises
 * exo_cancelled_still_running naming the model and the Mac (the diagnosis names it
 * too), holds the model's next proxied request until the runner is ready again, and
 * clears the warning then. Twice: the fake, as real exo sometimes does, leaves the
 * second cancelled task listed as `Cancelled` for good, and the ghost behind it must
 * be seen all the same.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePrompt } from '../../../../shared/token-count';
import { SnapshotSchema, type Snapshot } from '../../../../shared/snapshot';
import { startServe, type ServeProcess } from '../../../../test/support/e2e/serve-process';
import { LLAMA_1B, startServingExo, type ServingExo } from '../../../../test/support/fake-exo';
import { diagnoseExo } from '../../diagnostics/exo-diagnosis';
import { eventually } from '../../../../test/support/eventually';

let exo: ServingExo;
let serve: ServeProcess;
let openai: OpenAI;

async function state(): Promise<Snapshot> {
  const response = await fetch(`${serve.url}/api/state`, { headers: { Authorization: `Bearer ${serve.token}` } });
  return SnapshotSchema.parse(await response.json());
}

const llama = (s: Snapshot) => {
  const found = s.instances.find((i) => i.source === 'exo' && i.model === LLAMA_1B);
  return found?.source === 'exo' ? found : undefined;
};

beforeAll(async () => {
  // 1B: 4 ms a token; at time scale 1, 2000 tokens keep the runner busy about 8 s.
  exo = await startServingExo({ mode: 'blocking', timeScale: 1 });
  serve = await startServe({ simTimeScale: 0.1, args: ['--exo', exo.url] });
  await eventually(async () => llama(await state()), 20_000, 'the exo instance in /api/state');
  openai = new OpenAI({ baseURL: `${serve.url}/v1`, apiKey: 'unused', maxRetries: 0 });
}, 60_000);
afterAll(async () => {
  await serve?.stop();
  await exo?.close();
});

describe('a cancelled request exo keeps generating', () => {
  /** One ghost: a stream cancelled after 3 chunks while the runner generates on for `maxTokens`. */
  async function ghostRound(round: number, maxTokens: number, taskLeft: 'deleted' | 'stale'): Promise<void> {
    const stream = await openai.chat.completions.create({
      model: LLAMA_1B,
      messages: [{ role: 'user', content: makePrompt(30, `ghost${round}`)[0]!.content }],
      max_tokens: maxTokens,
      stream: true,
    });
    const reasons: Array<string | null> = [];
    for await (const chunk of stream) {
      reasons.push(chunk.choices[0]?.finish_reason ?? null);
      if (reasons.length === 3) {
        const answer = await fetch(`${serve.url}/v1/cancel/${chunk.id}`, { method: 'POST' });
        expect(answer.status).toBe(200);
      }
    }
    expect(reasons.at(-1)).toBe('cancelled');
    const cancelledAt = performance.now();

    // The fake, as real exo: no live task (and no CancelTask), the runner still running.
    const generationTasks = () => [...exo.cluster.tasks.values()].filter((t) => t.tag === 'TextGeneration');
    await eventually(
      () => !generationTasks().some((t) => t.body.taskStatus !== 'Cancelled') && ![...exo.cluster.tasks.values()].some((t) => t.tag === 'CancelTask'),
      1000,
      'no live task',
    );
    if (taskLeft === 'deleted') await eventually(() => generationTasks().length === 0, 1000, 'the task deleted');
    else expect(generationTasks().map((t) => t.body.taskStatus)).toEqual(['Cancelled']);
    expect(Object.keys(exo.cluster.runners.get(exo.cluster.instancesOf(LLAMA_1B)[0]!.shards[0]!.runnerId)!)).toEqual(['RunnerRunning']);
    const raised = await eventually(
      async () => {
        const s = await state();
        const warning = s.warnings.find((w) => w.code === 'exo_cancelled_still_running');
        return warning ? { s, warning } : null;
      },
      5000,
      'exo_cancelled_still_running',
    );
    expect(raised.warning.title).toMatch(/^Llama-3\.2-1B-Instruct-4bit on studio-a is still generating a cancelled request \(\d+ s\)$/);
    const instance = llama(raised.s)!;
    expect(raised.warning.instanceIds).toEqual([instance.id]);
    expect(instance.exo.ghostGeneration).toMatchObject({ nodeIds: [instance.exo.runners[0]!.nodeId] });
    expect(instance.exo.runners[0]!.status).toBe('RunnerRunning');
    expect(instance.exo.tasks).toEqual([]);
    expect(diagnoseExo(raised.s).map((c) => c.cause)).toContain('exo_cancelled_still_running');

    // The model counts as busy: exobar holds its next request while the ghost runs.
    const next = openai.chat.completions.create({ model: LLAMA_1B, messages: [{ role: 'user', content: 'after the ghost' }], max_tokens: 2, stream: true });
    const held = await eventually(
      async () => llama(await state())?.queue.requests.find((r) => r.phase === 'queued' && r.id.startsWith('exobar-')),
      3000,
      'the next request held by exobar',
    );
    expect(held).toBeTruthy();
    const text: string[] = [];
    for await (const chunk of await next) text.push(chunk.choices[0]?.delta.content ?? '');
    expect(text.join('')).toBe('tok0 tok1 ');
    const releasedAfterMs = performance.now() - cancelledAt;

    // Cleared once the runner is ready again; the request went to exo only then.
    const cleared = await eventually(
      async () => {
        const s = await state();
        return s.warnings.every((w) => w.code !== 'exo_cancelled_still_running') && llama(s)?.exo.ghostGeneration === null ? s : null;
      },
      15_000,
      'the warning cleared',
    );
    expect(llama(cleared)!.exo.runners[0]!.status).toBe('RunnerReady');
    // At 4 ms a token the runner was busy for seconds, and the next request waited them out.
    expect(releasedAfterMs).toBeGreaterThan(maxTokens * 4 * 0.3);
  }

  it('is shown on the card, warned about with model and Mac, holds the next request, and clears when the runner is ready', async () => {
    await ghostRound(1, 2000, 'deleted');
  });

  it('is seen again behind a cancelled task exo keeps listing as Cancelled', async () => {
    await ghostRound(2, 1000, 'stale');
    // The stale task is still listed after the ghost ended: it never counted as live.
    expect([...exo.cluster.tasks.values()].filter((t) => t.tag === 'TextGeneration').map((t) => t.body.taskStatus)).toEqual(['Cancelled']);
  });
});
