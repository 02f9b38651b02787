/**
 * The conformance suite against the MLX runner (electron/runners/mlx/runner.py) with its
 * deterministic `test` engine: the same Python process, step loop and protocol code the
 * mlx engine runs on a Mac, with time-scaled timings instead of a GPU. Timings are the
 * sim's Llama 3.2 3B at scale 0.1, so one 4096-token prefill chunk takes about 0.36 s and
 * lines written at the first progress event land inside the long prefill.
 */
import { DEFAULT_PREFILL_CHUNK_MS, type RunnerSchedule } from '../../shared/runner-protocol';
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { findSimModel } from '../../shared/catalog';
import { parseRunnerOutputLine } from '../../shared/runner-protocol';
import { mlxRunnerCommand } from '../../electron/core/mlx/mlx-runner-command';
import { REPO_ROOT } from '../support/sim-runner-spec';
import { useRunnerProcessCleanup } from '../support/runner-cleanup';
import { spawnRunner } from '../support/runner-under-test';
import { describePrefillPacingConformance } from '../support/conformance/pacing-conformance';
import { simPrefillMs, type RunnerConformanceProfile } from '../support/conformance/conformance-runner';
import { describeRunnerConformance } from '../support/conformance/runner-conformance';

const MODEL = 'test/llama-3.2-3b';
const TIME_SCALE = 0.1;
const LONG_PROMPT_TOKENS = 14_000;
const sim = findSimModel('sim/llama-3.2-3b')!.sim!;

/** The interpreter itself, not a version-manager shim, so startup is quick and the pid is python's. */
function findPython(): string | null {
  try {
    return execFileSync('python3', ['-c', 'import sys; assert sys.version_info >= (3, 10); print(sys.executable)'], {
      encoding: 'utf8',
      timeout: 20_000,
    }).trim();
  } catch {
    return null;
  }
}

const python = findPython();

function spec(extraEnv: Record<string, string | undefined> = {}, schedule: RunnerSchedule = 'exo') {
  return {
    ...mlxRunnerCommand({
      python: python!,
      model: MODEL,
      engine: 'test',
      // The protocol's engine flags (no cache: the suite checks the runner's own behaviour).
      engineOptions: { schedule, prefillChunkMs: DEFAULT_PREFILL_CHUNK_MS, promptCacheBytes: 0 },
      timeScale: TIME_SCALE,
      testTimings: {
        admitOverheadS: sim.admitOverheadS,
        prefillFixedS: sim.prefillFixedS,
        prefillTokensPerS: sim.prefillTokensPerS,
        decodeStepS: sim.decodeStepS,
        batchStepGrowth: sim.batchStepGrowth,
        totalLayers: sim.totalLayers,
        loadS: sim.loadS,
        warmupS: sim.warmupS,
      },
      fastSynch: null,
      extraEnv,
    }),
    cwd: REPO_ROOT,
  };
}

if (python === null) {
  describe.skip('runner conformance: mlx runner (test engine) — needs python3 >= 3.10 on PATH', () => {
    it('skipped', () => {});
  });
} else {
  const profile: RunnerConformanceProfile = {
    spawn: spec,
    engine: 'test',
    model: MODEL,
    longPromptTokens: LONG_PROMPT_TOKENS,
    stopSequences: { unsupportedBecause: "the test engine (the sim's token stream, without mlx-lm) applies none; the real mlx engine does" },
    longPrefillMs: simPrefillMs(sim, LONG_PROMPT_TOKENS, TIME_SCALE),
  };
  describeRunnerConformance('mlx runner (test engine)', profile);
  describePrefillPacingConformance('mlx runner (test engine)', profile);

  describe('mlx runner (test engine): what the app sets at spawn', () => {
    useRunnerProcessCleanup();

    it('reports the policy decision carried by mlxRunnerCommand, over an inherited value', async () => {
      const base = spec();
      for (const fastSynch of [false, true]) {
        const command = mlxRunnerCommand({
          python: python!,
          model: MODEL,
          engine: 'test',
          fastSynch,
          baseEnv: { ...process.env, MLX_METAL_FAST_SYNCH: fastSynch ? '0' : '1' },
        });
        const runner = spawnRunner({ ...command, cwd: base.cwd });
        const hello = await runner.waitFor((m) => m.type === 'Hello', 15_000);
        expect(hello.message).toMatchObject({
          env: { MLX_METAL_FAST_SYNCH: fastSynch ? '1' : '0', EXO_FAST_SYNCH: fastSynch ? 'true' : 'false' },
          fastSynch,
        });
      }
    });

    it('every stdout line of a missing mlx model parses, and the failure is explicit', async () => {
      const runner = spawnRunner({
        ...mlxRunnerCommand({
          python: python!,
          model: 'mlx-community/Not-On-This-Machine-4bit',
          fastSynch: false,
          extraEnv: { HF_HUB_CACHE: '/nonexistent/hub', EXO_HOME: '/nonexistent/exo' },
        }),
        cwd: REPO_ROOT,
      });
      await runner.waitFor((m) => m.type === 'Hello', 15_000);
      runner.send({ kind: 'LoadModel', taskId: 'load' });
      expect(await runner.waitForExit(15_000)).toEqual({ code: 1, signal: null });
      expect(runner.badLines).toEqual([]);
      const last = runner.messages.at(-1);
      expect(last).toMatchObject({ type: 'RunnerStatusUpdated', status: { kind: 'RunnerFailed' } });
      expect(runner.messages.some((m) => m.type === 'TaskStatusUpdated' && m.taskId === 'load' && m.status === 'Failed')).toBe(true);
      expect(parseRunnerOutputLine(JSON.stringify(last)).ok).toBe(true);
    });
  });
}
