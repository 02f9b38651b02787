/**
 * Runner start and memory, for the runner as it ships: out/main/sim-runner.cjs run as
 * plain Node, the command the node itself uses (electron/core/runner-entry.ts).
 *
 * One trial: spawn, time to the hello line (what the supervisor waits for before it
 * can send anything), then load, warm up and answer one short generation, so the peak
 * resident set size covers a runner that has done real work; then stdin closes and
 * the runner exits. The same trial with the TypeScript source through tsx shows what
 * running the sources costs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { packageRoot } from '../electron/core/package-root';
import { resolveSimRunnerCommand, type RunnerCommand } from '../electron/core/runner-entry';
import { parseRunnerOutputLine, type RunnerInput, type RunnerOutput } from '../shared/runner-protocol';
import { makePrompt } from '../shared/token-count';
import { MB, sampleRss } from './process-stats';
import { median } from '../test/support/median';
import { SMALL_MODEL } from './stall-scenario';

/** The time scale of the load, warmup and generation (the hello does not depend on it). */
const WORK_TIME_SCALE = 0.1;
const TRIAL_TIMEOUT_MS = 60_000;

export interface RunnerStartResult {
  /** What ran: `built` (what ships) or `tsx` (the sources). */
  runtime: 'built' | 'tsx';
  /** Spawn to hello, per trial, in ms. */
  start_ms: number[];
  start_ms_median: number;
  /** Peak resident set size per trial, MB. */
  rss_mb: number[];
  rss_mb_max: number;
}

/** The sim runner from its TypeScript source through tsx; null when tsx is not installed (it is a dev dependency). */
export function tsxRunnerCommand(): RunnerCommand | null {
  let tsx: string;
  try {
    tsx = import.meta.resolve('tsx');
  } catch {
    return null;
  }
  return { command: process.execPath, args: ['--import', tsx, join(packageRoot(), 'electron/runners/sim/main.ts')], env: {} };
}

/** One runner: spawn to hello in ms, and its peak RSS in bytes over hello, load, warmup and one generation. */
async function runnerTrial(command: RunnerCommand, gpuDir: string): Promise<{ startMs: number; peakRss: number }> {
  const spawnedAt = performance.now();
  const child = spawn(command.command, [...command.args, '--model', SMALL_MODEL, '--time-scale', String(WORK_TIME_SCALE)], {
    env: { ...process.env, ...command.env, EXOBAR_SIM_GPU_DIR: gpuDir, MLX_METAL_FAST_SYNCH: '0', EXO_FAST_SYNCH: undefined },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const rss = sampleRss(child.pid!);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const send = (input: RunnerInput) => child.stdin.write(`${JSON.stringify(input)}\n`);
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`runner trial took over ${TRIAL_TIMEOUT_MS} ms`)), TRIAL_TIMEOUT_MS);
      let startMs = 0;
      void exited.then((code) => reject(new Error(`the runner exited (${code}) during the trial`)));
      const onOutput = (output: RunnerOutput) => {
        if (output.type === 'Hello') {
          startMs = performance.now() - spawnedAt;
          send({ kind: 'LoadModel', taskId: 'load' });
          send({ kind: 'StartWarmup', taskId: 'warmup' });
        } else if (output.type === 'TaskStatusUpdated' && output.taskId === 'warmup' && output.status === 'Complete') {
          send({
            kind: 'TextGeneration',
            taskId: 'gen',
            commandId: 'bench',
            params: { messages: makePrompt(500), maxTokens: 32, temperature: null, seed: null },
          });
        } else if (output.type === 'TaskStatusUpdated' && output.taskId === 'gen' && output.status !== 'Running') {
          clearTimeout(timer);
          if (output.status !== 'Complete') reject(new Error(`the generation ended ${output.status}`));
          const peakRss = rss.stop();
          if (peakRss == null) reject(new Error('could not read the runner RSS'));
          else resolve({ startMs, peakRss });
        }
      };
      createInterface({ input: child.stdout }).on('line', (line) => {
        const parsed = parseRunnerOutputLine(line);
        if (parsed.ok) onOutput(parsed.value);
      });
    });
  } finally {
    rss.stop();
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** Runs `trials` runners one after the other (each on its own simulated GPU) with `command`. */
export async function measureRunnerStart(options: {
  trials: number;
  runtime?: 'built' | 'tsx';
  command?: RunnerCommand;
  progress?: (line: string) => void;
}): Promise<RunnerStartResult> {
  const runtime = options.runtime ?? 'built';
  const command = options.command ?? (runtime === 'built' ? resolveSimRunnerCommand() : tsxRunnerCommand());
  if (!command) throw new Error('tsx is not installed');
  const startMs: number[] = [];
  const rssMb: number[] = [];
  for (let i = 0; i < options.trials; i++) {
    const gpuDir = mkdtempSync(join(tmpdir(), 'exobar-bench-gpu-'));
    try {
      const trial = await runnerTrial(command, gpuDir);
      startMs.push(round(trial.startMs));
      rssMb.push(round(trial.peakRss / MB));
      options.progress?.(
        `${runtime} runner ${i + 1}/${options.trials}: hello after ${trial.startMs.toFixed(0)} ms, peak RSS ${(trial.peakRss / MB).toFixed(1)} MB`,
      );
    } finally {
      rmSync(gpuDir, { recursive: true, force: true });
    }
  }
  return { runtime, start_ms: startMs, start_ms_median: round(median(startMs)), rss_mb: rssMb, rss_mb_max: Math.max(...rssMb) };
}

const round = (x: number) => Math.round(x * 10) / 10;
