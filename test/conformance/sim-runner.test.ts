/**
 * The conformance suite against the sim runner, at a small time scale. The 3B model is
 * used because its slow prefill (about 0.26 s per 4096-token chunk at scale 0.1) keeps the
 * runner inside one step long enough to write lines into it.
 */
import { findSimModel } from '../../shared/catalog';
import { simRunnerSpec } from '../support/sim-runner-spec';
import { describePrefillPacingConformance } from '../support/conformance/pacing-conformance';
import { simPrefillMs, type RunnerConformanceProfile } from '../support/conformance/conformance-runner';
import { describeRunnerConformance } from '../support/conformance/runner-conformance';

const MODEL = 'sim/llama-3.2-3b';
const TIME_SCALE = 0.1;
const LONG_PROMPT_TOKENS = 14_000;
const timings = findSimModel(MODEL)!.sim!;

const profile: RunnerConformanceProfile = {
  spawn: (extraEnv, schedule = 'exo') => simRunnerSpec({ model: MODEL, timeScale: TIME_SCALE, env: extraEnv, args: ['--schedule', schedule] }),
  engine: 'sim',
  model: MODEL,
  longPromptTokens: LONG_PROMPT_TOKENS,
  stopSequences: 'supported',
  longPrefillMs: simPrefillMs(timings, LONG_PROMPT_TOKENS, TIME_SCALE),
};

describeRunnerConformance('sim', profile);
describePrefillPacingConformance('sim', profile);
