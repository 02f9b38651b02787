/**
 * The cost of constrained decoding on real MLX: `structured_decode_ratio`, a request's
 * decode tokens/s with a JSON schema (llguidance's grammar masking every step) over the
 * same request without one, on the tiny qwen3 model (random weights, this machine's CPU).
 *
 * The runner is spawned directly (its stdin/stdout protocol, one request at a time), so
 * the figure is the runner's own cost, not the API's. The schema asks for an array of
 * 40 integers so the constrained answer is long (about 150 tokens: the byte-level
 * tokenizer writes digits one by one); the free request runs to the same length.
 * Each trial is a pair (schema, then free, back to back) and the figure is the median of
 * the pairs' ratios, so a machine whose load drifts between trials skews it less.
 * The tiny model's decode step is a few milliseconds on the CPU, so the grammar's fixed
 * per-token cost (a mask, and a wait for the previous token that mlx-lm's pipelined step
 * would not otherwise take) weighs more here than beside a real model's.
 * Without EXOBAR_MLX_PYTHON the phase reports null (it needs mlx-lm and llguidance).
 */
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { mlxRunnerCommand } from '../electron/core/mlx/mlx-runner-command';
import { packageRoot } from '../electron/core/package-root';
import { median } from '../test/support/median';

const TOOLS = join(packageRoot(), 'electron', 'runners', 'mlx', 'tools', 'tiny_models.py');
const SCHEMA = {
  type: 'object',
  properties: { values: { type: 'array', items: { type: 'integer', minimum: 0, maximum: 999 }, minItems: 40, maxItems: 40 } },
  required: ['values'],
  additionalProperties: false,
};
const PROMPT = Array.from({ length: 24 }, (_, i) => `w${i * 7}`).join(' ');

interface Run {
  tokens: number;
  tokensPerS: number;
  ttftMs: number;
}

export interface StructuredDecode {
  structured_decode_ratio: number | null;
  structured_decode: {
    source: string;
    model: string;
    trials: number;
    free_tokens_per_s: number | null;
    schema_tokens_per_s: number | null;
    free_ttft_ms: number | null;
    schema_ttft_ms: number | null;
    schema_tokens: number | null;
  };
}

export async function measureStructuredDecode(trials: number, log: (line: string) => void): Promise<StructuredDecode> {
  const python = process.env.EXOBAR_MLX_PYTHON;
  const empty = { free_tokens_per_s: null, schema_tokens_per_s: null, free_ttft_ms: null, schema_ttft_ms: null, schema_tokens: null };
  if (!python) {
    log('structured decode: skipped (set EXOBAR_MLX_PYTHON to a venv with mlx-lm and llguidance)');
    return { structured_decode_ratio: null, structured_decode: { source: 'skipped: no EXOBAR_MLX_PYTHON', model: '', trials: 0, ...empty } };
  }
  const out = execFileSync(python, [TOOLS, '--family', 'qwen3'], { encoding: 'utf8', timeout: 300_000 });
  const model = out.trim().split('\t')[1]!;
  const spec = mlxRunnerCommand({ python, model, engine: 'mlx', fastSynch: false, prefillChunk: 256 });
  const env = Object.fromEntries(Object.entries(spec.env).filter((e): e is [string, string] => e[1] !== undefined));
  const child = spawn(spec.command, spec.args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiters: Array<(m: Record<string, unknown>) => boolean> = [];
  const lines = createInterface({ input: child.stdout });
  lines.on('line', (line) => {
    const message = JSON.parse(line) as Record<string, unknown>;
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!(message)) waiters.splice(i, 1);
  });
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const until = (match: (m: Record<string, unknown>) => boolean) =>
    new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`the runner exited (${code})`)));
      waiters.push((m) => (match(m) ? (resolve(), true) : false));
    });
  const status = (kind: string) => (m: Record<string, unknown>) => m.type === 'RunnerStatusUpdated' && (m.status as { kind: string }).kind === kind;
  let n = 0;
  const generate = (options: Record<string, unknown>, maxTokens: number) =>
    new Promise<Run>((resolve, reject) => {
      const commandId = `structured-${n++}`;
      const times: number[] = [];
      const start = performance.now();
      waiters.push((m) => {
        if (m.type !== 'ChunkGenerated' || m.commandId !== commandId) return false;
        const chunk = m.chunk as { kind: string; finishReason?: string | null; errorMessage?: string };
        if (chunk.kind === 'ErrorChunk') return reject(new Error(chunk.errorMessage)), true;
        if (chunk.kind !== 'TokenChunk') return false;
        times.push(performance.now());
        if (!chunk.finishReason) return false;
        const decodeS = (times[times.length - 1]! - times[0]!) / 1000;
        resolve({ tokens: times.length, tokensPerS: (times.length - 1) / decodeS, ttftMs: times[0]! - start });
        return true;
      });
      send({
        kind: 'TextGeneration',
        taskId: commandId,
        commandId,
        params: { messages: [{ role: 'user', content: PROMPT }], maxTokens, temperature: 0, ...options },
      });
    });
  try {
    send({ kind: 'LoadModel', taskId: 'load' });
    send({ kind: 'StartWarmup', taskId: 'warm' });
    await until(status('RunnerReady'));
    const format = { responseFormat: { type: 'json_schema', name: 'values', schema: SCHEMA, strict: true } };
    await generate(format, 400); // the first constrained request pays llguidance's first mask; not a trial
    const free: Run[] = [];
    const schema: Run[] = [];
    for (let t = 0; t < trials; t++) {
      const constrained = await generate(format, 400);
      schema.push(constrained);
      free.push(await generate({}, constrained.tokens));
      log(`structured decode trial ${t + 1}: schema ${constrained.tokensPerS.toFixed(0)} tok/s (${constrained.tokens} tokens), free ${free[free.length - 1]!.tokensPerS.toFixed(0)} tok/s`);
    }
    const freeTps = median(free.map((r) => r.tokensPerS));
    const schemaTps = median(schema.map((r) => r.tokensPerS));
    return {
      structured_decode_ratio: Math.round(median(schema.map((r, i) => r.tokensPerS / free[i]!.tokensPerS)) * 1000) / 1000,
      structured_decode: {
        source: 'real MLX (CPU), runner process',
        model: 'tiny qwen3 (random weights)',
        trials,
        free_tokens_per_s: Math.round(freeTps),
        schema_tokens_per_s: Math.round(schemaTps),
        free_ttft_ms: Math.round(median(free.map((r) => r.ttftMs))),
        schema_ttft_ms: Math.round(median(schema.map((r) => r.ttftMs))),
        schema_tokens: median(schema.map((r) => r.tokens)),
      },
    };
  } finally {
    child.stdin.end();
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
  }
}
