/**
 * The fake exo's cancel held to the real one's: after a cancelled stream, real exo's
 * `/state` (test/fixtures/exo/real/state-after-cancel-ghost.json, 0.52 s after the
 * cancel) lists the runner as `{"RunnerRunning":{}}` with no `TextGeneration` task and
 * no `CancelTask`: exo deleted the task before its runner heard of the cancel. The fake
 * must show the same (a fake that ended the generation at once would be kinder than
 * exo), the same tags, and exobar's ghost tracker must see a ghost in both; once the
 * runner is ready again it is gone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExoGhostTracker } from '../../../electron/core/exo/ghost/exo-ghost-tracker';
import { parseInstances, parseRunners, parseTasks } from '../../../electron/core/exo/attach/parse-exo-state';
import { makePrompt } from '../../../shared/token-count';
import { eventually } from '../eventually';
import { tagOf, type Json } from './fixture-data';
import { readReal } from './real-captures';
import { LLAMA_1B } from './scenarios';
import { readTimedLines } from './worker/sse-lines';
import { startServingExo, type ServingExo } from './worker/serving-exo';

let exo: ServingExo;
beforeAll(async () => {
  // 1B at 2 ms a token at this scale: 1000 tokens keep the runner generating for about 2 s after the cancel.
  exo = await startServingExo({ timeScale: 0.5 });
});
afterAll(async () => {
  await exo?.close();
});

const fakeState = async (): Promise<Json> => (await (await fetch(`${exo.url}/state`)).json()) as Json;
const taskTags = (state: Json) => Object.values(state.tasks as Json).map((t) => tagOf(t));
const ghostsSeen = (state: Json): number => {
  const [instances, runners, tasks] = [parseInstances(state.instances).entries!, parseRunners(state.runners).entries!, parseTasks(state.tasks).entries!];
  const tracker = new ExoGhostTracker(1_000);
  tracker.observe(10_000, instances, runners, tasks);
  tracker.observe(11_000, instances, runners, tasks);
  return [...instances.keys()].filter((id) => tracker.ghostOf(id) !== null).length;
};

describe("the fake exo's cancel against the real ghost capture", () => {
  it('leaves the runner RunnerRunning with no TextGeneration and no CancelTask, as real exo did, until it is ready again', async () => {
    const real = readReal('state-after-cancel-ghost.json');
    const [realRunner] = Object.values(real.runners as Json);
    expect(realRunner).toEqual({ RunnerRunning: {} });
    expect(taskTags(real)).not.toContain('TextGeneration');
    expect(ghostsSeen(real)).toBe(1);

    const response = await fetch(`${exo.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_1B, messages: makePrompt(12, 'ghost-contract'), max_tokens: 1000, stream: true }),
    });
    let cancel: Promise<Response> | null = null;
    let chunks = 0;
    await readTimedLines(response, ({ line }) => {
      if (!line.startsWith('data: {') || cancel) return;
      const { id } = JSON.parse(line.slice(6)) as { id: string };
      if (++chunks === 5) cancel = fetch(`${exo.url}/v1/cancel/${id}`, { method: 'POST' });
    });
    expect((await cancel!)?.status).toBe(200);

    const instanceId = exo.cluster.instancesOf(LLAMA_1B)[0]!.id;
    const runnerId = exo.cluster.instancesOf(LLAMA_1B)[0]!.shards[0]!.runnerId;
    // The task goes about 10 ms after the cancel; the runner stays on.
    const ghost = await eventually(
      async () => {
        const state = await fakeState();
        return taskTags(state).some((t) => t === 'TextGeneration') ? null : state;
      },
      2_000,
      "the cancelled task gone from the fake's state",
    );
    expect((ghost.runners as Json)[runnerId]).toEqual(realRunner);
    for (const tag of ['TextGeneration', 'CancelTask']) expect(taskTags(ghost)).not.toContain(tag);
    // What is left is the finished setup tasks, as in the capture: nothing says a request is still on.
    const statuses = (state: Json) => Object.values(state.tasks as Json).map((t) => ((t as Json)[tagOf(t)] as Json).taskStatus);
    expect(new Set(statuses(real))).toEqual(new Set(['Complete']));
    expect(new Set(statuses(ghost))).toEqual(new Set(['Complete']));
    expect(ghostsSeen(ghost)).toBe(1);

    // Ready again once the runner has generated the rest for nobody: no ghost then.
    const ready = await eventually(
      async () => {
        const state = await fakeState();
        return tagOf((state.runners as Json)[runnerId]) === 'RunnerReady' ? state : null;
      },
      20_000,
      'the runner ready again',
    );
    expect(ghostsSeen(ready)).toBe(0);
    expect(Object.keys(ready.instances as Json)).toContain(instanceId);
  });
});
