"""The engine's decode steps against mlx-lm's own, in one process, alternating.

After a long prompt, is a decode step of the runner's engine (its chunked prefill, the
handoff of the last token to BatchGenerator) dearer than one of BatchGenerator after
its own prefill (what mlx_lm.server does)? Two servers measured one after the other
compare two machine loads as much as two engines; here both run in one process, on one
model, turn by turn, so they share the load, the allocator and the scheduler. Figures
are per decode step: wall time and the process's CPU time (all threads: MLX computes
on its stream's thread).

`--only engine` or `--only mlx-lm` times one path alone: two such processes started at
once compare the paths as separate processes under the same load.

usage: python3 decode_ab.py [--family llama-wide] [--prompt 1500] [--steps 64]
                            [--chunk 64] [--trials 3] [--only engine|mlx-lm]
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Tuple

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import tiny_models  # noqa: E402
from exobar_mlx.mlx_engine import MlxEngine  # noqa: E402
from exobar_mlx.protocol import GenerationParams  # noqa: E402

#: Tokens the tiny tokenizers' chat template adds around one user message.
TEMPLATE_TOKENS = 7
#: Steps taken before timing starts: the handoff's first tokens are not steady state.
SETTLE_STEPS = 2

Step = Tuple[float, float]  # (wall s, cpu s) per decode step


def words(count: int, seed: int) -> str:
    """Distinct words the tiny tokenizers know (anything else is one unknown token)."""
    rng = random.Random(seed)
    return " ".join(f"w{rng.randrange(990)}" for _ in range(count))


def timed(steps: int, step: "callable") -> Step:
    wall, cpu = time.perf_counter(), time.process_time()
    for _ in range(steps):
        step()
    return (time.perf_counter() - wall) / steps, (time.process_time() - cpu) / steps


def engine_decode(engine: MlxEngine, seed: int, prompt: int, steps: int, chunk: int) -> Tuple[Step, List[int]]:
    """The runner's path: chunked prefill, the handoff, then its decode steps."""
    request_id = f"ab-{seed}"
    params = GenerationParams([{"role": "user", "content": words(prompt - TEMPLATE_TOKENS, seed)}], steps + 8, 0.0, None)
    request = engine.prepare(request_id, request_id, params, steps + 8)
    job = engine.start_prefill(request)
    while job.remaining > 0:
        engine.prefill_some(job, chunk)
    engine.finish_prefill(job)
    for _ in range(SETTLE_STEPS):
        engine.decode_step()
    step = timed(steps, engine.decode_step)
    engine.remove(request_id)
    return step, list(request.payload)


def mlx_lm_decode(engine: MlxEngine, tokens: List[int], steps: int) -> Step:
    """mlx_lm.server's path: BatchGenerator prefills the whole prompt itself, then decodes."""
    generator = engine.api.BatchGenerator(engine.model, prefill_batch_size=1, completion_batch_size=engine.max_batch)
    generator.insert([tokens], max_tokens=[steps + 8])
    produced = 0
    while produced < SETTLE_STEPS:
        produced += len(generator.next()[1])
    step = timed(steps, generator.next)
    generator.close()
    return step


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--family", default="llama-wide")
    parser.add_argument("--prompt", type=int, default=1500, help="prompt tokens")
    parser.add_argument("--steps", type=int, default=64, help="decode steps timed per trial")
    parser.add_argument("--chunk", type=int, default=64, help="the engine's prefill chunk, tokens")
    parser.add_argument("--trials", type=int, default=3)
    parser.add_argument("--only", choices=("engine", "mlx-lm"), help="time one path alone")
    args = parser.parse_args()
    engine = MlxEngine(str(tiny_models.build(args.family)), env={}, home=Path(tempfile.gettempdir()))
    engine.load(lambda *_: None)
    engine.warmup()
    ratios = []
    for trial in range(args.trials):
        if args.only is not None:
            tokens = engine.prepare("ab", "ab", GenerationParams(
                [{"role": "user", "content": words(args.prompt - TEMPLATE_TOKENS, trial)}], 1, 0.0, None), 1).payload
            wall, cpu = (engine_decode(engine, trial, args.prompt, args.steps, args.chunk)[0] if args.only == "engine"
                         else mlx_lm_decode(engine, list(tokens), args.steps))
            print(f"trial {trial + 1}: {args.only} {wall * 1000:.1f} ms wall {cpu * 1000:.1f} ms cpu per step", flush=True)
            continue
        (engine_wall, engine_cpu), tokens = engine_decode(engine, trial, args.prompt, args.steps, args.chunk)
        mlx_wall, mlx_cpu = mlx_lm_decode(engine, tokens, args.steps)
        ratios.append(mlx_wall / engine_wall)
        print(
            f"trial {trial + 1}: engine {engine_wall * 1000:.1f} ms wall {engine_cpu * 1000:.1f} ms cpu, "
            f"mlx-lm {mlx_wall * 1000:.1f} ms wall {mlx_cpu * 1000:.1f} ms cpu per step "
            f"(engine decode rate / mlx-lm's {ratios[-1]:.2f})",
            flush=True,
        )
    if ratios:
        print(f"median engine decode rate / mlx-lm's: {statistics.median(ratios):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
