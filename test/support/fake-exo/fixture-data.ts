/**
 * What the fake exo takes from the fixtures in test/fixtures/exo/: exo's real model
 * cards and the ring diagnostics of a failed runner, so the fake speaks exo's shapes
 * rather than shapes invented for it.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type Json = Record<string, unknown>;

// Not `new URL(..., import.meta.url)`: Vite rewrites that pattern into an asset URL in
// the renderer's jsdom tests, which build their exo fixtures with this fake too.
export const FIXTURE_DIR = `${join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'exo')}/`;

/** The fixture files of exo's /state, by name. */
export const STATE_FIXTURES = ['state-1node-two-instances.json', 'state-2node-failed-runner.json'] as const;

/** Reads one fixture as JSON (a fresh copy on every call, so tests may mutate it). */
export function readFixture(name: string): Json {
  return JSON.parse(readFileSync(`${FIXTURE_DIR}${name}`, 'utf8')) as Json;
}

const asJson = (value: unknown): Json => value as Json;

/** The only key of an externally tagged value (`{"RunnerReady": {...}}` → "RunnerReady"). */
export function tagOf(value: unknown): string {
  return Object.keys(asJson(value))[0] ?? '';
}

function collectCards(state: Json, into: Map<string, Json>): void {
  for (const tagged of Object.values(asJson(state.instances))) {
    const body = asJson(asJson(tagged)[tagOf(tagged)]);
    for (const shard of Object.values(asJson(asJson(body.shardAssignments).runnerToShard))) {
      const card = asJson(asJson(asJson(shard)[tagOf(shard)]).modelCard);
      into.set(String(card.modelId), card);
    }
  }
  for (const list of Object.values(asJson(state.downloads))) {
    for (const entry of list as unknown[]) {
      const shard = asJson(asJson(entry)[tagOf(entry)]).shardMetadata;
      const card = asJson(asJson(asJson(shard)[tagOf(shard)]).modelCard);
      into.set(String(card.modelId), card);
    }
  }
}

let cards: Map<string, Json> | null = null;

/** exo's model cards found in the fixtures, by model id. */
export function fixtureCards(): Map<string, Json> {
  if (!cards) {
    cards = new Map();
    for (const name of STATE_FIXTURES) collectCards(readFixture(name), cards);
  }
  return cards;
}

/**
 * A model card for `modelId`: exo's own when a fixture has it, otherwise the Llama
 * 3.2 1B card renamed (for the ~123 cards real exo lists per node).
 */
export function modelCard(modelId: string, nLayers?: number): Json {
  const known = fixtureCards().get(modelId);
  if (known) return structuredClone(known);
  const template = structuredClone(fixtureCards().get('mlx-community/Llama-3.2-1B-Instruct-4bit')!);
  const name = modelId.split('/').pop() ?? modelId;
  return { ...template, modelId, baseModel: name, nLayers: nLayers ?? template.nLayers };
}

/**
 * exo's shard metadata for a whole model on one Mac (rank 0 of 1, every layer), as its
 * download entries carry it.
 */
export function wholeModelShard(card: Json): Json {
  const nLayers = card.nLayers as number;
  return {
    PipelineShardMetadata: {
      modelCard: card,
      deviceRank: 0,
      worldSize: 1,
      immediateException: false,
      shouldTimeout: null,
      startLayer: 0,
      endLayer: nLayers,
      nLayers,
    },
  };
}

/** The RunnerFailed diagnostics of the 2-node fixture (ring socket error, ring transport error). */
export function ringFailureDiagnostics(): unknown[] {
  const runners = asJson(readFixture('state-2node-failed-runner.json').runners);
  for (const status of Object.values(runners)) {
    const failed = asJson(status).RunnerFailed;
    if (failed) return structuredClone(asJson(failed).diagnostics as unknown[]);
  }
  return [];
}

/** A RunnerMetalGpuTimeout diagnostic, with the message template of exo's diagnostics.py. */
export function metalTimeoutDiagnostic(): Json {
  return {
    RunnerMetalGpuTimeout: {
      message: 'Metal GPU command buffer timed out (kIOGPUCommandBufferCallbackErrorTimeout)',
      evidence: [
        'libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)',
      ],
    },
  };
}
