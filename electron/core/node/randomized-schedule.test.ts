/**
 * Hundreds of submits and cancels at random moments on two real sim runners, with
 * runners killed at random points, in both dispatch modes: every request gets exactly
 * one terminal event, no cancellation is lost, and nothing is left pending. A seeded
 * generator keeps a failing schedule reproducible.
 *
 * A share of the cancels is asked the moment the request is written to its runner
 * (in the microtask after its dispatch, before any reply can be read), so the held
 * cancel is exercised by construction, not by how fast the machine happens to be.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localInstances } from '../../../shared/instance-state';
import type { RequestEvent } from './node-types';
import type { DispatchMode } from './dispatcher';
import { seededRandom } from '../../../shared/seeded-random';
import { makePrompt } from '../../../shared/token-count';
import { createNodeFixture, type NodeFixture } from '../../../test/support/node-fixture';
import { eventually, sleep } from '../../../test/support/eventually';

const TRIALS = 300;
const SEED = Number(process.env.EXOBAR_SCHEDULE_SEED ?? 20261129);
const MODELS = ['sim/llama-3.2-1b', 'sim/llama-3.2-3b'];
/**
 * A cancelled request asks for far more tokens than a cancel-check interval (100 decode
 * steps) and than the runner can run ahead of a starved node, so a lost cancel shows as
 * a request that ran to completion ("finished"), whatever the machine's load.
 */
const MAX_TOKENS_WHEN_CANCELLED = 30_000;
/**
 * Real-time guard for the whole schedule: the watchdog's floor and the test's waits.
 * Idle, the schedule takes about 20 s; this only catches a hang. No runner here is ever
 * stuck (the kills are SIGKILLs, seen as crashes), so a watchdog firing could only be a
 * starved runner: its floor is set past anything the test waits for, and starvation
 * cannot trip it.
 */
const GUARD_MS = 240_000;
const TIME_SCALE = 0.1;
/** Chance, after each submit, that one runner is killed (SIGKILL) at that point. */
const KILL_CHANCE = 1 / 75;

interface Trial {
  id: string;
  events: RequestEvent[];
  tokens: number;
  cancelAsked: boolean;
  /** The phase the request was in when the cancel was asked. */
  phaseAtCancel: string | null;
  tokensAtCancel: number;
  /** Cancelled the moment it was written to its runner. */
  cancelAtDispatch: boolean;
}

describe.each<DispatchMode>(['nonblocking', 'blocking-baseline'])('randomized schedule of submits, cancels and runner kills (%s)', (mode) => {
  let fixture: NodeFixture;
  beforeAll(async () => {
    fixture = createNodeFixture(
      // A sim runner's floor is scaled by its time scale: ask for the guard in real time.
      {
        simTimeScale: TIME_SCALE,
        queueCapacity: 1000,
        restart: { baseDelayMs: 50 },
        watchdog: { floorMs: GUARD_MS / TIME_SCALE, decodeMs: GUARD_MS, prefillMs: GUARD_MS },
      },
      { dispatchMode: mode },
    );
    await Promise.all(MODELS.map((m) => fixture.launch(m)));
  }, GUARD_MS);
  afterAll(async () => fixture?.cleanup());

  it(
    `loses no cancellation and leaves no request unanswered over ${TRIALS} requests (seed ${SEED})`,
    async () => {
      const { node } = fixture;
      const random = seededRandom(SEED);
      const trials: Trial[] = [];
      const cancels: Promise<void>[] = [];
      /** Requests to cancel as soon as they are dispatched, by request id. */
      const atDispatch = new Map<string, () => void>();
      const unsubscribe = node.eventLog.subscribe((event) => {
        if (event.kind !== 'request_dispatched') return;
        const cancelNow = atDispatch.get(event.requestId);
        atDispatch.delete(event.requestId);
        // A microtask runs before any I/O callback: the runner's ack cannot have been read yet.
        if (cancelNow) queueMicrotask(cancelNow);
      });
      let kills = 0;

      for (let i = 0; i < TRIALS; i++) {
        const model = MODELS[Math.floor(random() * MODELS.length)]!;
        const promptTokens = random() < 0.15 ? 4000 + Math.floor(random() * 12_000) : 10 + Math.floor(random() * 400);
        const willCancel = random() < 0.5;
        const maxTokens = willCancel ? MAX_TOKENS_WHEN_CANCELLED : 5 + Math.floor(random() * 150);
        const trial: Trial = { id: '', events: [], tokens: 0, cancelAsked: false, phaseAtCancel: null, tokensAtCancel: 0, cancelAtDispatch: false };
        const handle = node.submit({ model, messages: makePrompt(promptTokens, `r${i}`), maxTokens }, (event) => {
          trial.events.push(event);
          if (event.type === 'token') trial.tokens += 1;
        });
        trial.id = handle.id;
        trials.push(trial);
        if (willCancel) {
          const cancelTrial = () => {
            const phase =
              node
                .snapshot()
                .instances.flatMap((inst) => inst.queue.requests)
                .find((r) => r.id === trial.id)?.phase ?? null;
            trial.phaseAtCancel = phase;
            trial.tokensAtCancel = trial.tokens;
            trial.cancelAsked = node.cancel(trial.id);
          };
          if (random() < 0.3) {
            trial.cancelAtDispatch = true;
            // Settles when cancelled at dispatch, or when the request ended first (a killed runner).
            cancels.push(
              new Promise<void>((resolve) => {
                atDispatch.set(trial.id, () => {
                  cancelTrial();
                  resolve();
                });
                void handle.done.then(() => resolve());
              }),
            );
          } else {
            cancels.push(sleep(random() * 80).then(cancelTrial));
          }
        }
        if (random() < KILL_CHANCE) {
          const victims = localInstances(node.snapshot()).filter((inst) => inst.runner.pid !== null);
          const victim = victims[Math.floor(random() * victims.length)];
          if (victim) {
            process.kill(victim.runner.pid!, 'SIGKILL');
            kills += 1;
          }
        }
        if (random() < 0.7) await sleep(random() * 15);
      }
      await Promise.all(cancels);
      unsubscribe();
      await eventually(() => trials.every((t) => t.events.some(isTerminal)), GUARD_MS, 'every request to end');

      for (const trial of trials) {
        const terminal = trial.events.filter(isTerminal);
        expect(terminal, `request ${trial.id} terminal events`).toHaveLength(1);
        const end = terminal[0]!;
        // A request fails only because its runner was killed under it.
        if (end.type === 'failed') {
          expect(end.error.code, `request ${trial.id}: ${end.error.message}`).toBe('runner_crashed');
          continue;
        }
        if (!trial.cancelAsked) continue;
        const label = `request ${trial.id} cancelled while ${trial.phaseAtCancel} after ${trial.tokensAtCancel} tokens`;
        // Held until the ack or sent at once, the cancel reaches the runner and stops the
        // request (the runner confirms it: "cancelled", never "finished"), never at the end.
        // How many tokens it still streamed depends on how far the runner ran ahead of a
        // busy node: the runner's own cancel checks are timed in its tests, not here.
        expect(terminal[0]!.type, label).toBe('cancelled');
        expect(trial.tokens, label).toBeLessThan(MAX_TOKENS_WHEN_CANCELLED);
      }
      const snap = node.snapshot();
      for (const instance of snap.instances) {
        expect(instance.pendingCancels).toEqual([]);
        expect(instance.queue.requests).toEqual([]);
      }
      const cancelled = trials.filter((t) => t.events.some((e) => e.type === 'cancelled')).length;
      // The baseline holds tasks in its dispatcher (phase queued) rather than in the runner's stdin.
      const heldPhases = mode === 'nonblocking' ? ['awaiting_ack'] : ['awaiting_ack', 'queued'];
      const heldAndHonoured = trials.filter((t) => heldPhases.includes(t.phaseAtCancel ?? '')).length;
      // Cancelled at dispatch, a request is always in the runner's hands without an ack yet.
      const atDispatchCancels = trials.filter((t) => t.cancelAtDispatch && t.cancelAsked);
      for (const trial of atDispatchCancels) expect(trial.phaseAtCancel, `request ${trial.id} cancelled at dispatch`).toBe('awaiting_ack');
      // The schedule must actually exercise held cancels, or this test proves nothing.
      expect(atDispatchCancels.length).toBeGreaterThan(10);
      expect(heldAndHonoured).toBeGreaterThanOrEqual(atDispatchCancels.length);
      expect(cancelled).toBeGreaterThan(TRIALS / 5);
      expect(kills, 'runners killed during the schedule').toBeGreaterThan(0);
      // Killed runners came back: both models still answer.
      for (const model of MODELS) {
        const handle = node.submit({ model, messages: makePrompt(20, `after-${mode}`), maxTokens: 2 }, () => undefined);
        expect((await handle.done).type).toBe('finished');
      }
      expect(node.eventLog.all().filter((e) => e.kind === 'watchdog_fired')).toEqual([]);
    },
    GUARD_MS,
  );
});

function isTerminal(event: RequestEvent): boolean {
  return event.type === 'finished' || event.type === 'cancelled' || event.type === 'failed';
}
