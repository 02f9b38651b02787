"""Command-line arguments of the MLX runner (docs/mlx-runner.md lists them all)."""
from __future__ import annotations

import argparse
from typing import List, Optional

from .protocol import DEFAULT_PREFILL_CHUNK_MS, DEFAULT_SCHEDULE, MAX_PREFILL_CHUNK_MS, MIN_PREFILL_CHUNK_MS, SCHEDULES
from .test_engine import TestTimings


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def _non_negative_float(text: str) -> float:
    value = float(text)
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number >= 0, got {text}")
    return value


def _chunk_ms(text: str) -> int:
    value = int(text)
    if not MIN_PREFILL_CHUNK_MS <= value <= MAX_PREFILL_CHUNK_MS:
        raise argparse.ArgumentTypeError(
            f"must be an integer from {MIN_PREFILL_CHUNK_MS} to {MAX_PREFILL_CHUNK_MS}, got {text}"
        )
    return value


def _non_negative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="runner.py",
        description="exobar runner: serves one model over the JSON-lines runner protocol on stdin/stdout.",
    )
    parser.add_argument(
        "--model",
        help="a local model directory, or a Hugging Face repo id already in the local cache "
        "(HF hub cache or ~/.exo/models); never downloaded. Any label for --engine test.",
    )
    parser.add_argument("--engine", choices=("mlx", "test"), default="mlx", help="inference engine (default mlx)")
    parser.add_argument("--prefill-chunk", type=_positive_int, default=4096, help="exo schedule: prefill chunk in tokens (exo: 4096)")
    parser.add_argument(
        "--schedule",
        choices=SCHEDULES,
        default=DEFAULT_SCHEDULE,
        help="exo: exo's runner step for step (one admission per step, its whole prefill inside it); "
        f"interleaved: every waiting request admitted, one prefill chunk between decode steps (default {DEFAULT_SCHEDULE})",
    )
    parser.add_argument(
        "--prefill-chunk-ms",
        type=_chunk_ms,
        default=DEFAULT_PREFILL_CHUNK_MS,
        help="interleaved schedule: each prefill chunk is sized from the measured prefill rate to take about "
        f"this long, within [64, 4096] tokens (default {DEFAULT_PREFILL_CHUNK_MS})",
    )
    parser.add_argument(
        "--prompt-cache-bytes",
        type=_non_negative_int,
        default=0,
        help="the prompt cache's cap in bytes (least recently used prefixes go first); 0: no prompt cache (default)",
    )
    parser.add_argument("--max-batch", type=_positive_int, default=8, help="requests decoding together (exo: 8)")
    parser.add_argument(
        "--default-max-tokens",
        type=_positive_int,
        default=4096,
        help="generation cap when a request's maxTokens is null (default 4096)",
    )
    parser.add_argument(
        "--wired-limit-bytes",
        type=_positive_int,
        default=None,
        help="mlx engine on Metal: this runner's share of the GPU working set, set as MLX's wired limit "
        "(the supervisor decides it; ignored on the CPU)",
    )
    parser.add_argument("--version", action="store_true", help="print the supported mlx-lm range and exit")
    parser.add_argument(
        "--time-scale",
        type=_positive_float,
        default=1.0,
        help="test engine: every simulated duration is multiplied by this (tests use 0.05-0.25)",
    )
    defaults = TestTimings()
    timing = parser.add_argument_group("test engine timings (seconds at time scale 1; defaults: the sim's Llama 3.2 1B)")
    timing.add_argument("--admit-overhead-s", type=_non_negative_float, default=defaults.admit_overhead_s)
    timing.add_argument("--prefill-fixed-s", type=_non_negative_float, default=defaults.prefill_fixed_s)
    timing.add_argument("--prefill-tps", type=_positive_float, default=defaults.prefill_tokens_per_s)
    timing.add_argument("--decode-step-s", type=_non_negative_float, default=defaults.decode_step_s)
    timing.add_argument("--batch-step-growth", type=_non_negative_float, default=defaults.batch_step_growth)
    timing.add_argument("--total-layers", type=_positive_int, default=defaults.total_layers)
    timing.add_argument("--load-s", type=_non_negative_float, default=defaults.load_s)
    timing.add_argument("--warmup-s", type=_non_negative_float, default=defaults.warmup_s)
    return parser


def parse_args(argv: Optional[List[str]] = None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.version and not args.model:
        parser.error("the following arguments are required: --model")
    return args


def test_timings(args: argparse.Namespace) -> TestTimings:
    return TestTimings(
        admit_overhead_s=args.admit_overhead_s,
        prefill_fixed_s=args.prefill_fixed_s,
        prefill_tokens_per_s=args.prefill_tps,
        decode_step_s=args.decode_step_s,
        batch_step_growth=args.batch_step_growth,
        total_layers=args.total_layers,
        load_s=args.load_s,
        warmup_s=args.warmup_s,
    )
