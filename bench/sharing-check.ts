/**
 * The GPU sharing check's decode experiment as bench rows: B streams while A prefills
 * a long prompt, through the check's own code (electron/core/checks/).
 *
 *   sharing_decode_ratio:  B's decode tokens/s during A's prefill over before it (solo)
 *   sharing_itl_p95_ratio: B's ITL p95 during A's prefill over solo
 *
 * On real MLX (tiny random-weight models on this machine's CPU cores, which two runner
 * processes really share) where EXOBAR_MLX_PYTHON is set, else on the sim, labelled:
 * the sim's decode under sharing is its time-slicing assumption, not evidence.
 */
import { SharingCheckRequestSchema } from '../shared/sharing-check';
import { runSharingCheck } from '../electron/core/checks/sharing-check';
import { createRig, FAIR_MLX_PROMPT_TOKENS, FAIR_SIM_PROMPT_TOKENS, MLX_TINY_LLAMA_WIDE } from './fair-sharing';

export async function measureSharingCheck(timeScale: number, log: (line: string) => void): Promise<{ json: Record<string, unknown>; rows: string[][] }> {
  const python = process.env.EXOBAR_MLX_PYTHON;
  const engine = python ? 'mlx' : 'sim';
  const promptTokens = python ? FAIR_MLX_PROMPT_TOKENS : FAIR_SIM_PROMPT_TOKENS;
  log(`sharing check, decode under prefill on ${python ? 'real MLX (CPU)' : 'the sim (simulated)'}: A prefills ${promptTokens} tokens while B streams`);
  // On real MLX B is the wider tiny llama, as in the check's own real-MLX test: its gaps are compute, not pipe reads.
  const rig = await createRig({ engine, python, timeScale, trials: 1, promptTokens, mlxB: MLX_TINY_LLAMA_WIDE });
  try {
    const result = await runSharingCheck({
      id: 'bench',
      node: rig.node,
      options: SharingCheckRequestSchema.parse({ models: [rig.a, rig.b], experiments: ['decode'], promptTokens, decodeTokens: 48 }),
      signal: new AbortController().signal,
      progress: (step) => log(step),
    });
    if (!result.decode.ran) throw new Error('the decode experiment did not run');
    const d = result.decode;
    const source = result.simulated ? 'sim (simulated)' : 'real MLX (CPU)';
    const json = {
      sharing_decode_ratio: d.decodeRatio,
      sharing_itl_p95_ratio: d.itlP95Ratio,
      sharing_source: source,
      sharing_check: {
        models: result.models.map((m) => m.id),
        prompt_tokens: promptTokens,
        idle_ratio: d.idleRatio,
        before: d.before,
        during: d.during,
        after: d.after,
      },
    };
    const f = (v: number | null) => (v === null ? 'n/a' : v.toFixed(2));
    return {
      json,
      rows: [
        ['sharing_decode_ratio', f(d.decodeRatio), `below 1 on real MLX (${source})`],
        ['sharing_itl_p95_ratio', f(d.itlP95Ratio), `above 1 on real MLX (${source})`],
        ['idle ratio (after / before)', f(d.idleRatio), 'about 1'],
      ],
    };
  } finally {
    await rig.close();
  }
}
