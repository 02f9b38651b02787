/**
 * The measurement behind exo's supervisor fix, reproduced on the sim (docs/domain.md):
 * the 3B prefills a unique ~30k-token prompt for ~19 s; a short 1B request is sent
 * 3.5 s in. With one more 3B request queued behind the long one, a supervisor that
 * awaits acknowledgements stalls the 1B for ~15 s; exobar's must not.
 *
 * The batch_full conditions: 9 requests on the 1B (one more than its batch), then a
 * short request on the 3B, whose TTFT is measured. exo's runner acknowledges the ninth
 * at the next step boundary and queues it inside itself, so the baseline (one loop
 * awaiting each ack) holds the 3B only while the nine acks come, one step each (~1.8 s),
 * never until a 1B request finishes; exobar's dispatcher does not hold it at all.
 */
import { DEFAULT_PREFILL_CHUNK_MS } from '../shared/runner-protocol';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNode } from '../electron/core/node/node';
import type { DispatchMode } from '../electron/core/node/dispatcher';
import type { ExobarNode } from '../electron/core/node/node-types';
import { makePrompt } from '../shared/token-count';
import { sleep } from '../test/support/eventually';
import { median } from '../test/support/median';

export const STALL_CONDITIONS = ['alone', 'busy', 'queued_baseline', 'queued_exobar', 'batch_full_baseline', 'batch_full_exobar'] as const;
export type StallCondition = (typeof STALL_CONDITIONS)[number];

export const SMALL_MODEL = 'sim/llama-3.2-1b';
export const LONG_MODEL = 'sim/llama-3.2-3b';
const LONG_PROMPT_TOKENS = 30_000;
/** When the 1B request is sent, in calibrated seconds after the long prompt (3.5 of ~19 s). */
const SHORT_REQUEST_AT_S = 3.5;
/** When the extra 3B request is queued behind the long one. */
const QUEUED_REQUEST_AT_S = 1.0;
/** Requests on the 1B in the batch_full conditions: one more than a runner's batch of 8. */
const BATCH_FULL_REQUESTS = 9;
/** When the 3B request follows them, calibrated seconds (all nine are in their runner by then). */
const BATCH_FULL_SHORT_AT_S = 0.5;

export interface StallTrialResult {
  /** The measured request's time to first token (the 1B's; the 3B's in batch_full), calibrated seconds (measured / time scale). */
  ttftS: number;
  /** Its parts, calibrated seconds. */
  waitS: number;
  prefillS: number;
  firstTokenS: number;
}

export interface StallRig {
  node: ExobarNode;
  timeScale: number;
  close(): Promise<void>;
}

/** A node with the 1B and 3B ready, dispatching the way `mode` says. */
export async function createStallRig(mode: DispatchMode, timeScale: number): Promise<StallRig> {
  const dataDir = mkdtempSync(join(tmpdir(), 'exobar-bench-'));
  // The seed's reproduction: exo's runner schedule, no prompt cache (the stall is exo's).
  const node = createNode(
    { dataDir, simTimeScale: timeScale, runnerSettings: () => ({ schedule: 'exo', prefillChunkMs: DEFAULT_PREFILL_CHUNK_MS, promptCacheBytes: 0 }) },
    { dispatchMode: mode },
  );
  for (const model of [SMALL_MODEL, LONG_MODEL]) {
    const instance = await node.createInstance({ model, instanceType: 'ring', fastSynch: 'auto', acknowledgeRisk: false });
    await node.waitForReady(instance.id, 60_000);
  }
  return {
    node,
    timeScale,
    async close() {
      await node.shutdown();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Runs one trial of `condition` on a ready rig and waits until every request ended. */
export async function runStallTrial(rig: StallRig, condition: StallCondition, trial: number): Promise<StallTrialResult> {
  const { node, timeScale } = rig;
  const ignore = () => undefined;
  const pending: Promise<unknown>[] = [];
  const salt = `trial-${condition}-${trial}-${Date.now()}`;
  const batchFull = condition === 'batch_full_baseline' || condition === 'batch_full_exobar';
  if (batchFull) {
    for (let i = 0; i < BATCH_FULL_REQUESTS; i++) {
      pending.push(node.submit({ model: SMALL_MODEL, messages: makePrompt(20, `${salt}-batch-${i}`), maxTokens: 300 }, ignore).done);
    }
    await sleep(BATCH_FULL_SHORT_AT_S * 1000 * timeScale);
  }
  if (condition !== 'alone' && !batchFull) {
    pending.push(node.submit({ model: LONG_MODEL, messages: makePrompt(LONG_PROMPT_TOKENS, salt), maxTokens: 8 }, ignore).done);
  }
  if (condition === 'queued_baseline' || condition === 'queued_exobar') {
    await sleep(QUEUED_REQUEST_AT_S * 1000 * timeScale);
    pending.push(node.submit({ model: LONG_MODEL, messages: makePrompt(200, `${salt}-queued`), maxTokens: 8 }, ignore).done);
  }
  if (condition !== 'alone' && !batchFull) await sleep((SHORT_REQUEST_AT_S - (condition === 'busy' ? 0 : QUEUED_REQUEST_AT_S)) * 1000 * timeScale);
  const shortModel = batchFull ? LONG_MODEL : SMALL_MODEL;
  const short = node.submit({ model: shortModel, messages: makePrompt(20, `${salt}-short`), maxTokens: 8 }, ignore);
  const outcome = await short.done;
  if (outcome.type !== 'finished') throw new Error(`the measured ${shortModel} request ended ${outcome.type}`);
  await Promise.all(pending);
  const sample = node
    .snapshot()
    .instances.flatMap((i) => i.ttft.samples)
    .find((s) => s.requestId === short.id);
  if (!sample) throw new Error(`no TTFT sample for the measured ${shortModel} request`);
  const toS = (ms: number) => ms / 1000 / timeScale;
  return { ttftS: toS(sample.totalMs), waitS: toS(sample.waitMs), prefillS: toS(sample.prefillMs), firstTokenS: toS(sample.firstTokenMs) };
}

export interface StallResults {
  ttft: Record<StallCondition, { median_s: number; trials: number[] }>;
}

/**
 * Every condition side by side in one run, `trials` each. The baseline rig differs
 * from exobar's only in its dispatcher; the other three conditions use exobar's.
 */
export async function measureStall(timeScale: number, trials: number, progress: (line: string) => void = () => undefined): Promise<StallResults> {
  const exobar = await createStallRig('nonblocking', timeScale);
  const baseline = await createStallRig('blocking-baseline', timeScale);
  const results = {} as StallResults['ttft'];
  try {
    for (const condition of STALL_CONDITIONS) results[condition] = { median_s: 0, trials: [] };
    // Interleave conditions trial by trial, so machine noise spreads over all of them.
    for (let trial = 0; trial < trials; trial++) {
      for (const condition of STALL_CONDITIONS) {
        const rig = condition.endsWith('_baseline') ? baseline : exobar;
        const result = await runStallTrial(rig, condition, trial);
        results[condition].trials.push(round(result.ttftS));
        progress(`${condition} trial ${trial + 1}/${trials}: TTFT ${result.ttftS.toFixed(3)} s`);
      }
    }
    for (const condition of STALL_CONDITIONS) results[condition].median_s = round(median(results[condition].trials));
  } finally {
    await Promise.all([exobar.close(), baseline.close()]);
  }
  return { ttft: results };
}

const round = (x: number) => Math.round(x * 1000) / 1000;
