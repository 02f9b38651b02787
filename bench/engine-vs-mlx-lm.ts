/**
 * `npm run bench -- --only engine`: exobar's MLX engine against `mlx_lm.server`, the
 * simplest server MLX users already have, on the same tiny real model (llama-wide,
 * random weights, CPU), both up at once and each scenario run on one server then at
 * once on the other (the order alternating), so both meet the same machine load,
 * with the official `openai` client, temperature 0, prompts of distinct `wN` words (the
 * tiny tokenizer knows w0..w989; anything else is one unknown token and every prompt
 * would be the same). Each figure is exobar's over mlx_lm.server's:
 *
 * - `engine_single_ttft_ratio`, `engine_single_decode_ratio`: one 1,500-token request,
 *   256 tokens decoded (64 gave a window of about a second, which the machine's own
 *   drift moved by 20 %: 44-61 tokens/s over three trials for one server);
 * - `engine_multiturn_ttft_ratio`: turns 2-4 of a 4-turn chat growing to ~1,550 tokens
 *   (each turn sends the conversation so far: the prompt cache's workload);
 * - `engine_concurrent_tokens_ratio`, `..._worst_ttft_ratio`, `..._median_ttft_ratio`: 8
 *   streams at once, 200-token prompts, 128 tokens each;
 * - a stream decoding while a 1,500-token prompt of the same model prefills:
 *   `engine_stream_longest_pause_s` (exobar's own, target <= 1 s, mlx_lm.server's beside
 *   it), `engine_stream_decode_share` (its tokens/s during the prefill over its rate
 *   alone at the same tokens, target >= 0.5) and `engine_long_prompt_ttft_ratio` (the long prompt's TTFT
 *   beside the stream over the TTFT of a prompt as long alone just before it, the median
 *   of the trials' ratios, target <= 1.5).
 *
 * `--engine-scale X` multiplies every prompt length and token count (default 1, the
 * issue's sizes) for a machine too slow for the whole phase.
 */
import { performance } from 'node:perf_hooks';
import OpenAI from 'openai';
import { median } from '../test/support/median';
import { startExobarServe, startMlxLmServer, tinyLlamaWide, type EngineServer, type EngineServerName } from './engine-servers';

type Message = OpenAI.Chat.Completions.ChatCompletionMessageParam;

/** The decoding stream's cap: far more than it decodes while a long prompt prefills (it is ended first). */
const STREAM_MAX_TOKENS = 20_000;
/** What the long prompt decodes: its first token is what is measured. */
const LONG_PROMPT_TOKENS = 8;
/** The tiny tokenizer's words, and the chat template's tokens around one user message. */
const VOCABULARY_WORDS = 990;
const TEMPLATE_TOKENS = 7;

export interface EngineSizes {
  longPromptTokens: number;
  chatFirstTurnTokens: number;
  chatTurnTokens: number;
  chatReplyTokens: number;
  streams: number;
  shortPromptTokens: number;
  concurrentTokens: number;
  singleTokens: number;
  soloStreamTokens: number;
}

/** The sizes: a chat whose 4th turn is ~1,550 tokens, 8 x 200-token prompts, 1,500-token long prompts. */
export function engineSizes(scale = 1): EngineSizes {
  const s = (n: number) => Math.max(8, Math.round(n * scale));
  return {
    longPromptTokens: s(1500),
    chatFirstTurnTokens: s(1150),
    chatTurnTokens: s(100),
    chatReplyTokens: s(32),
    streams: 8,
    shortPromptTokens: s(200),
    concurrentTokens: s(128),
    singleTokens: s(256),
    soloStreamTokens: s(128),
  };
}

export interface ServerFigures {
  single_ttft_s: number;
  single_decode_tps: number;
  multiturn_ttft_s: number[];
  multiturn_cached_tokens: (number | null)[];
  concurrent_tokens_per_s: number;
  concurrent_ttft_median_s: number;
  concurrent_ttft_worst_s: number;
  stream_solo_tps: number;
  stream_longest_pause_s: number;
  stream_decode_share: number;
  long_beside_stream_ttft_s: number;
  long_alone_ttft_s: number;
}

/** `words` distinct-looking words from a seeded walk over the vocabulary: prompts with other seeds differ from their first word. */
function words(count: number, seed: number): string {
  let x = (seed * 2654435761) >>> 0 || 1;
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    out.push(`w${(x >>> 8) % VOCABULARY_WORDS}`);
  }
  return out.join(' ');
}

function userPrompt(tokens: number, seed: number): Message[] {
  return [{ role: 'user', content: words(Math.max(1, tokens - TEMPLATE_TOKENS), seed) }];
}

interface Streamed {
  sentAt: number;
  /** performance.now() of each content token. */
  tokenAt: number[];
  text: string;
  cachedTokens: number | null;
}

const firstTokenS = (s: Streamed) => (s.tokenAt[0]! - s.sentAt) / 1000;

/** Streams one chat; `onToken` sees each token's count as it arrives; `signal` ends it early. */
async function stream(
  server: EngineServer,
  messages: Message[],
  maxTokens: number,
  options: { onToken?: (count: number) => void; signal?: AbortSignal } = {},
): Promise<Streamed> {
  const client = new OpenAI({ baseURL: server.baseURL, apiKey: 'none', maxRetries: 0, timeout: 3_600_000 });
  const out: Streamed = { sentAt: performance.now(), tokenAt: [], text: '', cachedTokens: null };
  try {
    const response = await client.chat.completions.create(
      { model: server.model, messages, max_tokens: maxTokens, temperature: 0, stream: true, stream_options: { include_usage: true } },
      { signal: options.signal },
    );
    for await (const chunk of response) {
      const content = chunk.choices[0]?.delta?.content;
      if (content) {
        out.tokenAt.push(performance.now());
        out.text += content;
        options.onToken?.(out.tokenAt.length);
      }
      const cached = chunk.usage?.prompt_tokens_details?.cached_tokens;
      if (typeof cached === 'number') out.cachedTokens = cached;
    }
  } catch (err) {
    if (!options.signal?.aborted) throw err;
  }
  if (out.tokenAt.length === 0) throw new Error(`${server.name} streamed no token`);
  return out;
}

/** Tokens per second between the first token and the last. */
function decodeRate(s: Streamed): number {
  return rateBetween(s, 0, s.tokenAt.length - 1);
}

/** Tokens per second between token `from` and token `to` (indexes into the stream's tokens). */
function rateBetween(s: Streamed, from: number, to: number): number {
  return to > from ? ((to - from) * 1000) / (s.tokenAt[to]! - s.tokenAt[from]!) : 0;
}

type Figures = Partial<ServerFigures>;
type Log = (line: string) => void;
/** A scenario on one server. */
type Measure = (server: EngineServer, sizes: EngineSizes, seed: number, log: Log) => Promise<Figures>;
/** A scenario on both servers, in the order given (it alternates per scenario and trial). */
type Scenario = (servers: EngineServer[], sizes: EngineSizes, seed: number, log: Log) => Promise<Partial<Record<EngineServerName, Figures>>>;

/** The scenario on one server, then at once on the other. */
function oneThenTheOther(measure: Measure): Scenario {
  return async (servers, sizes, seed, log) => {
    const out: Partial<Record<EngineServerName, Figures>> = {};
    for (const server of servers) out[server.name] = await measure(server, sizes, seed, log);
    return out;
  };
}

async function single(server: EngineServer, sizes: EngineSizes, seed: number, log: Log): Promise<Figures> {
  const s = await stream(server, userPrompt(sizes.longPromptTokens, seed), sizes.singleTokens);
  log(`${server.name}: single ${firstTokenS(s).toFixed(2)} s TTFT, ${decodeRate(s).toFixed(1)} tokens/s`);
  return { single_ttft_s: firstTokenS(s), single_decode_tps: decodeRate(s) };
}

/**
 * A 4-turn chat on each server, turn by turn: each turn on one server, then at once the
 * same turn on the other. A turn takes under a second and the machine's load moves in
 * phases of tens of seconds (the same 1,500-token prefill in one process: 9.3 to 14.3 s
 * within a minute), so each server's whole chat after the other's could meet two loads.
 */
async function multiturn(servers: EngineServer[], sizes: EngineSizes, seed: number, log: Log): Promise<Partial<Record<EngineServerName, Figures>>> {
  const chats = servers.map(() => userPrompt(sizes.chatFirstTurnTokens, seed));
  const turnTtft: number[][] = servers.map(() => []);
  const turnCached: (number | null)[][] = servers.map(() => []);
  for (let turn = 0; turn < 4; turn++) {
    for (const [i, server] of servers.entries()) {
      const reply = await stream(server, chats[i]!, sizes.chatReplyTokens);
      turnTtft[i]!.push(firstTokenS(reply));
      turnCached[i]!.push(reply.cachedTokens);
      chats[i]!.push({ role: 'assistant', content: reply.text }, { role: 'user', content: words(sizes.chatTurnTokens, seed + 1 + turn) });
    }
  }
  const out: Partial<Record<EngineServerName, Figures>> = {};
  for (const [i, server] of servers.entries()) {
    log(`${server.name}: chat turns TTFT ${turnTtft[i]!.map((t) => t.toFixed(2)).join(', ')} s (cached ${turnCached[i]!.join(', ')})`);
    out[server.name] = { multiturn_ttft_s: turnTtft[i], multiturn_cached_tokens: turnCached[i] };
  }
  return out;
}

async function concurrent(server: EngineServer, sizes: EngineSizes, seed: number, log: Log): Promise<Figures> {
  const startedAt = performance.now();
  const all = await Promise.all(
    Array.from({ length: sizes.streams }, (_, i) => stream(server, userPrompt(sizes.shortPromptTokens, seed + i), sizes.concurrentTokens)),
  );
  const endedAt = Math.max(...all.map((s) => s.tokenAt[s.tokenAt.length - 1]!));
  const tps = (all.reduce((n, s) => n + s.tokenAt.length, 0) * 1000) / (endedAt - startedAt);
  const ttfts = all.map(firstTokenS);
  log(`${server.name}: ${sizes.streams} streams ${tps.toFixed(1)} tokens/s, TTFT median ${median(ttfts).toFixed(2)} worst ${Math.max(...ttfts).toFixed(2)} s`);
  return { concurrent_tokens_per_s: tps, concurrent_ttft_median_s: median(ttfts), concurrent_ttft_worst_s: Math.max(...ttfts) };
}

/**
 * The stream's decode share beside the long prompt is its rate during the prefill over its
 * rate alone at the same tokens: the same prompt again, alone, to the last token the
 * window saw (at least `soloStreamTokens` past the first), its rate between those two
 * token indexes. A stream's decode slows as its context grows (this model alone: 58-69
 * tokens/s over its first 128 tokens, 47-50 over tokens 400-800), and beside a long
 * prompt it decodes hundreds of tokens: its first 128 alone would be the wrong baseline.
 */
async function besideLongPrompt(server: EngineServer, sizes: EngineSizes, seed: number, log: Log): Promise<Figures> {
  // Its TTFT alone just before (another prompt of the same length: no prefix to reuse),
  // for the same reason the chat goes turn by turn: the load moves between minutes apart.
  const alone = await stream(server, userPrompt(sizes.longPromptTokens, seed + 3), LONG_PROMPT_TOKENS);
  const beside = await streamBesideLongPrompt(server, sizes, seed + 1, seed + 2);
  const windowS = (beside.longFirstAt - beside.longSentAt) / 1000;
  const times = beside.stream.tokenAt;
  const first = Math.max(0, times.findIndex((t) => t >= beside.longSentAt));
  const inWindow = times.filter((t) => t >= beside.longSentAt && t <= beside.longFirstAt).length;
  const last = Math.max(first + sizes.soloStreamTokens, first + inWindow - 1);
  const solo = await stream(server, userPrompt(64, seed + 1), last + 1);
  const soloTps = rateBetween(solo, first, Math.min(last, solo.tokenAt.length - 1));
  const share = soloTps > 0 ? inWindow / windowS / soloTps : 0;
  log(`${server.name}: stream beside a long prompt: longest pause ${beside.longestPauseS.toFixed(2)} s, ${(share * 100).toFixed(0)} % of its solo ${soloTps.toFixed(1)} tokens/s; long TTFT ${windowS.toFixed(2)} s (alone ${firstTokenS(alone).toFixed(2)} s)`);
  return { stream_solo_tps: soloTps, stream_longest_pause_s: beside.longestPauseS, stream_decode_share: share, long_beside_stream_ttft_s: windowS, long_alone_ttft_s: firstTokenS(alone) };
}

/** The scenarios in the order they run, each with the seeds it may use (the same for both servers). */
const SCENARIOS: Array<[Scenario, number]> = [
  [oneThenTheOther(single), 1],
  [multiturn, 10],
  [oneThenTheOther(concurrent), 20],
  [oneThenTheOther(besideLongPrompt), 40],
];

/**
 * A stream decodes; after its 8th token a long prompt arrives; once the long prompt's
 * first token is out and the stream has given 3 more, the stream is ended. The longest
 * pause is the longest gap between the stream's tokens that overlaps the prefill.
 */
async function streamBesideLongPrompt(server: EngineServer, sizes: EngineSizes, streamSeed: number, longSeed: number) {
  const abort = new AbortController();
  let longSentAt = 0;
  let longFirstAt = 0;
  let afterLong = 0;
  let startLong!: () => void;
  const longStarted = new Promise<void>((resolve) => (startLong = resolve));
  const streamDone = stream(server, userPrompt(64, streamSeed), STREAM_MAX_TOKENS, {
    signal: abort.signal,
    onToken: (count) => {
      if (count === 8) startLong();
      if (longFirstAt > 0 && ++afterLong >= 3) abort.abort();
    },
  });
  await longStarted;
  longSentAt = performance.now();
  const long = await stream(server, userPrompt(sizes.longPromptTokens, longSeed), LONG_PROMPT_TOKENS, {
    onToken: (count) => {
      if (count === 1) longFirstAt = performance.now();
    },
  });
  // A stream that never resumes still ends.
  const timer = setTimeout(() => abort.abort(), 60_000);
  const streamed = await streamDone;
  clearTimeout(timer);
  const times = streamed.tokenAt;
  let longest = 0;
  for (let i = 1; i < times.length; i++) {
    if (times[i]! >= longSentAt && times[i - 1]! <= long.tokenAt[0]!) longest = Math.max(longest, times[i]! - times[i - 1]!);
  }
  return { stream: streamed, longSentAt, longFirstAt: long.tokenAt[0]!, longestPauseS: longest / 1000 };
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 1000) / 1000 : null);
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

/**
 * Runs the phase: both servers up at once (the idle one waits on its socket), each
 * scenario run on one and at once on the other, the order alternating per scenario
 * and trial. The machine's load drifts by minutes (other work shares it): one server
 * measured after the other's whole run compared two loads, not two engines; back to
 * back, scenario by scenario, both see the same.
 */
export async function measureEngineVsMlxLm(
  options: { trials: number; scale: number },
  log: (line: string) => void,
): Promise<{ json: Record<string, unknown>; rows: string[][] }> {
  const python = process.env.EXOBAR_MLX_PYTHON;
  if (!python) {
    return { json: { engine_skipped: 'EXOBAR_MLX_PYTHON is not set: no real-MLX figures' }, rows: [['engine vs mlx_lm.server', 'skipped', 'EXOBAR_MLX_PYTHON is not set']] };
  }
  const modelDir = tinyLlamaWide(python);
  const sizes = engineSizes(options.scale);
  const figures: Record<EngineServerName, ServerFigures[]> = { exobar: [], mlx_lm: [] };
  const servers: Partial<Record<EngineServerName, EngineServer>> = {};
  try {
    servers.mlx_lm = await startMlxLmServer(python, modelDir, log);
    servers.exobar = await startExobarServe(python, modelDir, log);
    for (const server of [servers.mlx_lm, servers.exobar]) {
      await stream(server, userPrompt(32, 0), 4); // warm-up: the first request's compile costs are nobody's figure
    }
    let turn = 0;
    for (let trial = 0; trial < options.trials; trial++) {
      const trialFigures: Record<EngineServerName, Figures> = { exobar: {}, mlx_lm: {} };
      for (const [scenario, seedOffset] of SCENARIOS) {
        const order: EngineServerName[] = turn++ % 2 === 0 ? ['mlx_lm', 'exobar'] : ['exobar', 'mlx_lm'];
        // The same seeds for both servers: the same prompts.
        const measured = await scenario(order.map((name) => servers[name]!), sizes, 1000 * (trial + 1) + seedOffset, log);
        for (const name of order) Object.assign(trialFigures[name], measured[name]);
      }
      figures.exobar.push(trialFigures.exobar as ServerFigures);
      figures.mlx_lm.push(trialFigures.mlx_lm as ServerFigures);
    }
  } finally {
    await Promise.all(Object.values(servers).map((server) => server.stop()));
  }
  const med = (name: EngineServerName, pick: (f: ServerFigures) => number) => median(figures[name].map(pick));
  const both = (pick: (f: ServerFigures) => number) => ratio(med('exobar', pick), med('mlx_lm', pick));
  const laterTurns = (f: ServerFigures) => mean(f.multiturn_ttft_s.slice(1));
  // Each trial's long prompt beside the stream over its own alone just before, the median of those.
  const pairedRatio = (name: EngineServerName) => ratio(median(figures[name].map((f) => f.long_beside_stream_ttft_s / f.long_alone_ttft_s)), 1);
  const json = {
    engine_multiturn_ttft_ratio: both(laterTurns),
    engine_concurrent_tokens_ratio: both((f) => f.concurrent_tokens_per_s),
    engine_concurrent_worst_ttft_ratio: both((f) => f.concurrent_ttft_worst_s),
    engine_concurrent_median_ttft_ratio: both((f) => f.concurrent_ttft_median_s),
    engine_single_ttft_ratio: both((f) => f.single_ttft_s),
    engine_single_decode_ratio: both((f) => f.single_decode_tps),
    engine_stream_longest_pause_s: med('exobar', (f) => f.stream_longest_pause_s),
    engine_stream_longest_pause_s_mlx_lm: med('mlx_lm', (f) => f.stream_longest_pause_s),
    engine_stream_decode_share: med('exobar', (f) => f.stream_decode_share),
    engine_stream_decode_share_mlx_lm: med('mlx_lm', (f) => f.stream_decode_share),
    engine_long_prompt_ttft_ratio: pairedRatio('exobar'),
    engine_long_prompt_ttft_ratio_mlx_lm: pairedRatio('mlx_lm'),
    engine: { model: 'tiny llama-wide (random weights, real MLX on this CPU)', trials: options.trials, scale: options.scale, sizes, exobar: figures.exobar, mlx_lm: figures.mlx_lm },
  };
  const s = (x: number) => `${x.toFixed(2)} s`;
  const pair = (pick: (f: ServerFigures) => number, unit: (x: number) => string) => `${unit(med('exobar', pick))} / ${unit(med('mlx_lm', pick))}`;
  const tps = (x: number) => `${x.toFixed(1)} tok/s`;
  const rows: string[][] = [
    ['engine_multiturn_ttft_ratio (turns 2-4)', `${json.engine_multiturn_ttft_ratio} (${pair(laterTurns, s)})`, '<= 1.0'],
    ['engine_concurrent_tokens_ratio (8 streams)', `${json.engine_concurrent_tokens_ratio} (${pair((f) => f.concurrent_tokens_per_s, tps)})`, '>= 1.0'],
    ['engine_concurrent_worst_ttft_ratio', `${json.engine_concurrent_worst_ttft_ratio} (${pair((f) => f.concurrent_ttft_worst_s, s)})`, '<= 1.0'],
    ['engine_concurrent_median_ttft_ratio', `${json.engine_concurrent_median_ttft_ratio} (${pair((f) => f.concurrent_ttft_median_s, s)})`, '<= 1.0'],
    ['engine_single_ttft_ratio', `${json.engine_single_ttft_ratio} (${pair((f) => f.single_ttft_s, s)})`, '<= 1.05'],
    ['engine_single_decode_ratio', `${json.engine_single_decode_ratio} (${pair((f) => f.single_decode_tps, tps)})`, '>= 0.95'],
    ['engine_stream_longest_pause_s (exobar / mlx_lm.server)', pair((f) => f.stream_longest_pause_s, s), '<= 1 s'],
    ['engine_stream_decode_share (exobar / mlx_lm.server)', pair((f) => f.stream_decode_share, (x) => x.toFixed(2)), '>= 0.5'],
    ['engine_long_prompt_ttft_ratio (beside a stream / alone)', `${json.engine_long_prompt_ttft_ratio} (mlx_lm.server ${json.engine_long_prompt_ttft_ratio_mlx_lm})`, '<= 1.5'],
  ];
  return { json, rows };
}
