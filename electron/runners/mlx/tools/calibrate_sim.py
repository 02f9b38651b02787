"""Measures the MLX runner's own engine on a tiny real model (MLX's CPU backend) and
writes the sim's `cpu-tiny` profile from it, so the sim's schedule and prompt cache
show the same proportions as the real runner (electron/runners/sim/sim-profiles.ts reads
the file; docs/mlx-runner.md, "The prompt cache").

What is measured, each the fastest of a few trials (load on a shared machine only ever
adds): the CPU-side admission (templating, tokenizing), one decode step alone and among
eight, the time to first token of a prompt served from the prompt cache (the sim's fixed
prefill cost) and of the same length missing it (with that, the sim's prefill rate). The
miss and hit TTFT are kept too: the sim's test checks its own hit/miss ratio against them.

usage: python3 calibrate_sim.py [--family llama] [--write FILE]   (npm run calibrate-sim)
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import tiny_models  # noqa: E402
from exobar_mlx.mlx_engine import MlxEngine  # noqa: E402
from exobar_mlx.protocol import GenerationParams  # noqa: E402

#: The two prompt lengths, in words (a chat of n words is n + 7 tokens on the tiny tokenizer).
SHORT_WORDS = 200
LONG_WORDS = 1000
TRIALS = 3
DECODE_STEPS = 16
BATCH = 8
#: The sim's prefill chunk on the CPU is whatever the runner's sizer picks; one chunk per
#: prompt here keeps the measurement to the arithmetic.
CHUNK = 4096


def words(n: int, offset: int) -> str:
    return " ".join(f"w{(offset + i) % 990}" for i in range(n))


def chat(n: int, offset: int) -> List[Dict[str, str]]:
    return [{"role": "user", "content": words(n, offset)}]


def engine_for(family: str, cache_bytes: int) -> MlxEngine:
    engine = MlxEngine(str(tiny_models.build(family)), prefill_chunk=CHUNK, max_batch=BATCH, env={},
                       home=Path(tempfile.gettempdir()), prompt_cache_bytes=cache_bytes)
    engine.load(lambda *_: None)
    engine.warmup()
    return engine


class Meter:
    def __init__(self, engine: MlxEngine) -> None:
        self.engine = engine
        self.n = 0

    def ttft(self, messages: List[Dict[str, str]], max_tokens: int = 1) -> Dict[str, Any]:
        """Admission, prefill and first token of one request alone; its prompt and cached tokens."""
        self.n += 1
        request_id = f"r{self.n}"
        started = time.perf_counter()
        prepared = self.engine.prepare(request_id, request_id, GenerationParams(messages, max_tokens, 0.0, None), 64)
        admitted = time.perf_counter()
        self.engine.prefill(prepared, lambda *_: None)
        first = None
        while first is None:
            for token in self.engine.decode_step():
                if token.request_id == request_id:
                    first = token
        ended = time.perf_counter()
        self._drain()
        return {"admitS": admitted - started, "ttftS": ended - started, "prompt": len(prepared.payload),
                "cached": prepared.cached_tokens}

    def decode_step(self, batch: int) -> float:
        """One decode step's time with `batch` requests decoding (the mean over DECODE_STEPS)."""
        for i in range(batch):
            self.n += 1
            request_id = f"r{self.n}"
            prepared = self.engine.prepare(request_id, request_id,
                                           GenerationParams(chat(20, 50 * i), DECODE_STEPS + 8, 0.0, None), 64)
            self.engine.prefill(prepared, lambda *_: None)
        self.engine.decode_step()
        started = time.perf_counter()
        for _ in range(DECODE_STEPS):
            self.engine.decode_step()
        seconds = (time.perf_counter() - started) / DECODE_STEPS
        self._drain()
        return seconds

    def _drain(self) -> None:
        while self.engine.batch_size() > 0:
            self.engine.decode_step()


def fastest(trials: int, measure: Callable[[int], Dict[str, Any]], key: str = "ttftS") -> Dict[str, Any]:
    return min((measure(trial) for trial in range(trials)), key=lambda seen: seen[key])


def calibrate(family: str) -> Dict[str, Any]:
    plain = engine_for(family, 0)
    meter = Meter(plain)
    short = fastest(TRIALS, lambda t: meter.ttft(chat(SHORT_WORDS, 100 * t)))
    long = fastest(TRIALS, lambda t: meter.ttft(chat(LONG_WORDS, 100 * t)))
    step_1 = min(meter.decode_step(1) for _ in range(TRIALS))
    step_8 = min(meter.decode_step(BATCH) for _ in range(TRIALS))
    plain.close()

    cached = engine_for(family, 1 << 30)
    meter = Meter(cached)

    def hit(trial: int) -> Dict[str, Any]:
        messages = chat(LONG_WORDS, 300 + 100 * trial)
        meter.ttft(messages)
        return meter.ttft(messages)

    hit_seen = fastest(TRIALS, hit)
    cached.close()

    admit = min(short["admitS"], long["admitS"], hit_seen["admitS"])
    # What every prefill pays whatever its length (graph build, the cache copied out of the
    # prompt cache): a hit's TTFT, which prefills two tokens, less admission and the first
    # decode step. The rate then makes the long miss's TTFT: the sim answers the calibrated
    # prompt in the real runner's time, missed or hit. A CPU's prefill slows as the prompt
    # grows (attention), so the rate holds near this length; the short miss is kept to show it.
    fixed = max(0.0, hit_seen["ttftS"] - admit - step_1)
    rate = long["prompt"] / max(long["ttftS"] - admit - step_1 - fixed, 1e-6)
    return {
        "timings": {
            "admitOverheadS": round(admit, 4),
            "prefillFixedS": round(fixed, 4),
            "prefillTokensPerS": round(rate),
            "decodeStepS": round(step_1, 5),
            "batchStepGrowth": round(max(0.0, (step_8 / step_1 - 1) / (BATCH - 1)), 4),
        },
        "measured": {
            "family": family,
            "promptTokens": long["prompt"],
            "missTtftS": round(long["ttftS"], 4),
            "hitTtftS": round(hit_seen["ttftS"], 4),
            "hitCachedTokens": hit_seen["cached"],
            "shortPromptTokens": short["prompt"],
            "shortMissTtftS": round(short["ttftS"], 4),
            "decodeStepBatch8S": round(step_8, 5),
        },
    }


def main(argv: List[str] = sys.argv[1:]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--family", default="llama", choices=sorted(tiny_models.FAMILIES))
    parser.add_argument("--write", type=Path, help="the profile file to write (default: print only)")
    args = parser.parse_args(argv)
    profile = calibrate(args.family)
    text = json.dumps(profile, indent=2) + "\n"
    if args.write:
        args.write.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
