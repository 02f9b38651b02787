/**
 * Deterministic output tokens for the sim: the same commandId (or seed) always gives
 * the same words, ids and natural length, so tests and benchmarks can compare runs.
 */
import type { GenerationParams } from '../../../shared/runner-protocol';
import { seededRandom } from '../../../shared/seeded-random';

/** A natural (maxTokens: null) completion is this long, inclusive. */
export const NATURAL_LENGTH_MIN = 16;
export const NATURAL_LENGTH_MAX = 48;

const VOCABULARY = [
  'the',
  'model',
  'runs',
  'on',
  'one',
  'shared',
  'GPU',
  'and',
  'answers',
  'quickly',
  'while',
  'another',
  'prefills',
  'a',
  'long',
  'prompt',
  'tokens',
  'flow',
  'in',
  'steps',
  'each',
  'step',
  'admits',
  'new',
  'request',
  'batch',
  'decodes',
  'together',
  'cache',
  'layer',
  'memory',
  'metal',
  'stream',
  'kernel',
  'queue',
  'supervisor',
  'holds',
  'cancel',
  'until',
  'ack',
  'sim',
  'runner',
  'reports',
  'progress',
  'chunk',
  'time',
  'first',
  'token',
  'is',
  'short',
] as const;

/** Token ids start here so they never collide with special tokens of real tokenizers. */
const TOKEN_ID_BASE = 1000;

export interface SimToken {
  text: string;
  tokenId: number;
}

export interface CompletionPlan {
  /** Tokens the request will produce if nothing stops it. */
  length: number;
  finishReason: 'stop' | 'length' | 'tool_calls';
}

/** FNV-1a, 32 bit: a stable hash of the seed text. */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function seedText(params: Pick<GenerationParams, 'seed'>, commandId: string): string {
  return params.seed !== null ? `seed:${params.seed}` : `command:${commandId}`;
}

/**
 * How many tokens a request produces: exactly maxTokens (finish 'length'), or when
 * maxTokens is null a deterministic natural length in [16, 48] (finish 'stop').
 */
export function planCompletion(params: Pick<GenerationParams, 'seed' | 'maxTokens'>, commandId: string): CompletionPlan {
  if (params.maxTokens !== null) return { length: params.maxTokens, finishReason: 'length' };
  const random = seededRandom(hash32(`${seedText(params, commandId)}:length`));
  const span = NATURAL_LENGTH_MAX - NATURAL_LENGTH_MIN + 1;
  return { length: NATURAL_LENGTH_MIN + Math.floor(random() * span), finishReason: 'stop' };
}

/** An endless deterministic token source for one request. */
export function createTokenSource(params: Pick<GenerationParams, 'seed'>, commandId: string): () => SimToken {
  const random = seededRandom(hash32(seedText(params, commandId)));
  let first = true;
  return () => {
    const index = Math.floor(random() * VOCABULARY.length);
    const word = VOCABULARY[index] ?? 'the';
    const text = first ? word : ` ${word}`;
    first = false;
    return { text, tokenId: TOKEN_ID_BASE + index };
  };
}
