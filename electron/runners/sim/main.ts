/**
 * The sim runner process: exo's generation semantics with calibrated timings, speaking
 * shared/runner-protocol.ts on stdin/stdout (docs/runner-protocol.md).
 *
 *   node out/main/sim-runner.cjs --model sim/llama-3.2-1b [--time-scale 0.1]   (built: npm run build:node)
 *
 * Env: EXOBAR_SIM_GPU_DIR (runners sharing it share one simulated GPU; default
 * <tmpdir>/exobar-sim-gpu); MLX_METAL_FAST_SYNCH and EXO_FAST_SYNCH are only reported
 * in the hello, as a real MLX runner would see them.
 */
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { effectiveFastSynch, PROTOCOL_VERSION } from '../../../shared/runner-protocol';
import { parseSimRunnerArgs, USAGE } from './args';
import { Inbox } from './inbox';
import { createRunnerLogger } from './logger';
import { RunnerOutputWriter } from './output';
import { Pacer } from './pacer';
import { SharedGpu } from './shared-gpu';
import { promptCacheHello, SimRunner } from './sim-runner';
import { loadHangsAfter } from './faults';

const args = parseSimRunnerArgs(process.argv.slice(2));
if (!args.ok) {
  process.stderr.write(`exobar sim runner: ${args.error}\n${USAGE}\n`);
  process.exit(2);
}
const { model, profile, timeScale, schedule, prefillChunkMs, promptCacheBytes } = args.value;

const log = createRunnerLogger(model.id);
const out = new RunnerOutputWriter(process.stdout);
const pacer = new Pacer();
const gpu = new SharedGpu(process.env.EXOBAR_SIM_GPU_DIR || join(tmpdir(), 'exobar-sim-gpu'), pacer);
const inbox = new Inbox(log);
let hung = false;
let exiting = false;

async function exit(code: number): Promise<never> {
  if (!exiting) {
    exiting = true;
    gpu.idle();
    await out.flush();
    process.exit(code);
  }
  return new Promise<never>(() => {});
}

/** The hang fault: a wedged runner stays alive and silent; only a kill ends it. */
async function hang(reason: string): Promise<never> {
  hung = true;
  log.error({ reason }, 'hanging on purpose (fault prompt): no more output, no more tasks');
  out.silence();
  gpu.idle();
  // Keep the process alive. If the supervisor's process is gone (we were re-parented),
  // leave anyway so a killed test run never leaks hung runners.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) process.exit(1);
  }, 1000);
  return new Promise<never>(() => {});
}

// A supervisor that goes away closes our stdout: nothing left to do.
process.stdout.on('error', () => {
  gpu.idle();
  process.exit(0);
});
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    gpu.idle();
    process.kill(process.pid, signal);
  });
}
process.on('exit', () => gpu.idle());

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (!hung) inbox.pushLine(line);
});
lines.on('close', () => {
  if (hung) return;
  log.info('stdin closed: exiting');
  void exit(0);
});

const env = {
  MLX_METAL_FAST_SYNCH: process.env.MLX_METAL_FAST_SYNCH ?? null,
  EXO_FAST_SYNCH: process.env.EXO_FAST_SYNCH ?? null,
};
out.emit({
  type: 'Hello',
  protocolVersion: PROTOCOL_VERSION,
  engine: 'sim',
  model: model.id,
  pid: process.pid,
  env,
  fastSynch: effectiveFastSynch(env),
  schedule,
  promptCache: promptCacheHello(model, promptCacheBytes),
  // The sim scripts tool calls and schema-valid JSON (scripted-answer.ts).
  features: { tools: true, structuredOutput: true },
  // Only when one is chosen: without it the hello is every runner's.
  ...(profile === null ? {} : { simProfile: profile }),
});
log.info({ timeScale, fastSynch: effectiveFastSynch(env), schedule, prefillChunkMs, promptCacheBytes, profile }, 'sim runner started');

void new SimRunner({
  model,
  timeScale,
  schedule,
  prefillChunkMs,
  promptCacheBytes,
  out,
  inbox,
  gpu,
  pacer,
  log,
  exit,
  hang,
  loadHangsAfter: loadHangsAfter(process.env),
}).serve();
