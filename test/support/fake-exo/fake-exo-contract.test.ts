/**
 * The fake exo held to the real one: every capture from a real exo node
 * (test/fixtures/exo/real/) is read by exobar's parser with no problem counted, and the
 * fake's /state, streams (normal, cancelled) and cancel answers have the real ones'
 * keys, tags and order of SSE lines (and the same prefill progress for the same prompt). A fake kinder than exo is a bug: each difference
 * found here is fixed in the fake, not in this test.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInstances, parseNodes, parseRunners, parseTasks } from '../../../electron/core/exo/attach/parse-exo-state';
import { SseTap } from '../../../electron/core/exo/proxy/sse-tap';
import { makePrompt } from '../../../shared/token-count';
import type { Json } from './fixture-data';
import { tagOf } from './fixture-data';
import { readReal, readRealText, REAL_STATES } from './real-captures';
import { LLAMA_1B } from './scenarios';
import { readTimedLines } from './worker/sse-lines';
import { startServingExo, type ServingExo } from './worker/serving-exo';
import { sleep } from '../eventually';

const body = (tagged: unknown): Json => (tagged as Json)[tagOf(tagged)] as Json;
const keys = (value: unknown) => Object.keys(value as Json);
const first = (record: unknown): unknown => Object.values(record as Json)[0];

/** What kind of line each SSE line is, in order, with runs of the same kind folded. */
function lineKinds(text: string): string[] {
  const kinds = text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => (l.startsWith(': ') ? l.slice(2).split(' ')[0]! : l === 'data: [DONE]' ? '[DONE]' : l.includes('"error"') ? 'data-error' : 'data'));
  return kinds.filter((k, i) => k !== kinds[i - 1]);
}

const dataChunks = (text: string) =>
  text
    .split('\n')
    .filter((l) => l.startsWith('data: {'))
    .map((l) => JSON.parse(l.slice(6)) as Json);

describe('exobar reads every real capture', () => {
  it.each(REAL_STATES)('parses %s with no problem and no unknown tag', (name) => {
    const state = readReal(name);
    const parsed = [parseInstances(state.instances), parseRunners(state.runners), parseTasks(state.tasks)];
    const nodes = parseNodes(state);
    expect([...parsed.flatMap((p) => p.problems), ...nodes.problems]).toEqual([]);
    expect(parsed.map((p) => p.unknownTags)).toEqual([0, 0, 0]);
    expect(parsed.map((p) => p.entries!.size)).toEqual([state.instances, state.runners, state.tasks].map((s) => keys(s).length));
    expect(nodes.nodes.size).toBe(keys(state.nodeIdentities).length);
  });

  it('reads both real streams with the SSE tap: nothing unreadable; the cancelled one has no [DONE], no usage, no stats', () => {
    for (const [name, expected] of [
      ['stream-normal.sse.txt', { progress: 3, tokens: 12, usage: 1, stats: 1, done: 1 }],
      ['stream-cancelled.sse.txt', { progress: 3, tokens: 7, usage: 0, stats: 0, done: 0 }],
    ] as const) {
      const seen = { progress: 0, tokens: 0, usage: 0, stats: 0, done: 0, errors: 0 };
      const tap = new SseTap({
        progress: () => seen.progress++,
        token: (_id, content) => content && seen.tokens++,
        usage: () => seen.usage++,
        error: () => seen.errors++,
        stats: () => seen.stats++,
        done: () => seen.done++,
      });
      tap.feed(Buffer.from(readRealText(name)));
      expect({ name, ...seen, unreadable: tap.unreadable }).toEqual({ name, ...expected, errors: 0, unreadable: 0 });
    }
  });
});

describe('the fake exo against the real captures', () => {
  let exo: ServingExo;
  let fakeState: Json;
  const real = readReal('state-ready.json');
  beforeAll(async () => {
    exo = await startServingExo({ timeScale: 0.05 });
    fakeState = (await (await fetch(`${exo.url}/state`)).json()) as Json;
  });
  afterAll(async () => {
    await exo?.close();
  });

  it('has the top-level keys of a real /state, in order', () => {
    expect(keys(fakeState)).toEqual(keys(real));
  });

  it('has the real instance, shard, runner and model-card shapes', () => {
    const fakeInstance = body(first(fakeState.instances));
    const realInstance = body(first(real.instances));
    expect(tagOf(first(fakeState.instances))).toBe(tagOf(first(real.instances)));
    expect(keys(fakeInstance)).toEqual(keys(realInstance));
    const shardAssignments = (i: Json) => i.shardAssignments as Json;
    expect(keys(shardAssignments(fakeInstance))).toEqual(keys(shardAssignments(realInstance)));
    const fakeShard = first(shardAssignments(fakeInstance).runnerToShard);
    const realShard = first(shardAssignments(realInstance).runnerToShard);
    expect(tagOf(fakeShard)).toBe(tagOf(realShard));
    expect(keys(body(fakeShard))).toEqual(keys(body(realShard)));
    expect(keys(body(fakeShard).modelCard)).toEqual(keys(body(realShard).modelCard));
    expect(first(fakeState.runners)).toEqual(first(real.runners));
  });

  it('has the real download entry shapes', () => {
    const byTag = (state: Json) => {
      const out = new Map<string, Json>();
      for (const entry of first(state.downloads) as Json[]) if (!out.has(tagOf(entry))) out.set(tagOf(entry), body(entry));
      return out;
    };
    const fake = byTag(fakeState);
    const realTags = byTag(real);
    for (const [tag, entry] of fake) expect({ tag, keys: keys(entry) }).toEqual({ tag, keys: keys(realTags.get(tag)) });
  });

  it('has the real node sections per node', () => {
    for (const section of ['nodeIdentities', 'nodeMemory', 'nodeDisk'] as const) {
      expect({ section, keys: keys(first(fakeState[section])) }).toEqual({ section, keys: keys(first(real[section])) });
    }
    expect(typeof first(fakeState.lastSeen)).toBe('string');
  });

  async function stream(maxTokens: number, salt: string): Promise<{ response: Response; text: Promise<string> }> {
    const response = await fetch(`${exo.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: LLAMA_1B, messages: makePrompt(12, salt), max_tokens: maxTokens, temperature: 0, stream: true }),
    });
    return { response, text: readTimedLines(response).then((lines) => lines.map((l) => `${l.line}\n\n`).join('')) };
  }

  it('streams a normal answer with the real order of lines, chunk keys, usage and stats', async () => {
    const realText = readRealText('stream-normal.sse.txt');
    const fakeText = await (await stream(12, 'contract-normal')).text;
    expect(lineKinds(fakeText)).toEqual(lineKinds(realText));
    const [fakeChunks, realChunks] = [dataChunks(fakeText), dataChunks(realText)];
    expect(keys(fakeChunks[0])).toEqual(keys(realChunks[0]));
    expect(fakeChunks[0]!.object).toBe(realChunks[0]!.object);
    const choice = (c: Json) => (c.choices as Json[])[0]!;
    expect(keys(choice(fakeChunks[0]!))).toEqual(keys(choice(realChunks[0]!)));
    expect(keys(choice(fakeChunks[0]!).delta)).toEqual(keys(choice(realChunks[0]!).delta));
    expect(keys(fakeChunks.at(-1))).toEqual(keys(realChunks.at(-1)));
    expect(keys(choice(fakeChunks.at(-1)!))).toEqual(keys(choice(realChunks.at(-1)!)));
    expect(keys(fakeChunks.at(-1)!.usage)).toEqual(keys(realChunks.at(-1)!.usage));
    const stats = (text: string) =>
      JSON.parse(
        text
          .split('\n')
          .find((l) => l.startsWith(': generation_stats '))!
          .slice(': generation_stats '.length),
      ) as Json;
    expect(keys(stats(fakeText))).toEqual(keys(stats(realText)));
    // The same prompt length, the same progress lines: a total one less than the prompt,
    // 0, the chunk that leaves one token over, then the whole with the first token.
    expect(fakeChunks.at(-1)!.usage).toMatchObject({ prompt_tokens: (realChunks.at(-1)!.usage as Json).prompt_tokens });
    const progress = (text: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(': prefill_progress '))
        .map((l) => {
          const chunk = (JSON.parse(l.slice(': prefill_progress '.length)) as Json).PrefillProgressChunk as Json;
          return [chunk.processed_tokens, chunk.total_tokens];
        });
    expect(progress(fakeText)).toEqual(progress(realText));
  });

  it('ends a cancelled stream as real exo does (no finish reason, no [DONE]), with the real cancel answers', async () => {
    const { response, text } = await stream(2000, 'contract-cancel');
    expect(response.status).toBe(200);
    let commandId = '';
    for (let i = 0; i < 200 && !commandId; i++) {
      commandId = exo.worker.openCommands()[0]?.commandId ?? '';
      await sleep(5);
    }
    // A few chunks out first, as in the capture (cancelled once 5 data chunks had arrived).
    await sleep(100);
    const answer = await fetch(`${exo.url}/v1/cancel/${commandId}`, { method: 'POST' });
    const fakeText = await text;
    const realText = readRealText('stream-cancelled.sse.txt');
    expect(lineKinds(fakeText)).toEqual(lineKinds(realText));
    const last = dataChunks(fakeText).at(-1)!;
    expect(keys(last)).toEqual(keys(dataChunks(realText).at(-1)));
    expect(keys((last.choices as Json[])[0])).toEqual(['index', 'delta']);
    expect(answer.status).toBe(200);
    const realAnswer = readReal('cancel-answer.json');
    const fakeAnswer = (await answer.json()) as Json;
    expect(keys(fakeAnswer)).toEqual(keys(realAnswer));
    expect(fakeAnswer.message).toBe(realAnswer.message);
    const again = await fetch(`${exo.url}/v1/cancel/${commandId}`, { method: 'POST' });
    expect(again.status).toBe(404);
    expect(await again.json()).toEqual(readReal('cancel-unknown.json'));
  });
});
