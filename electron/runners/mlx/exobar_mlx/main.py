"""Process setup for the runner: environment, streams, engine, step loop, exit.

Order matters here. The fast-synch decision is taken from the environment before
anything can import mlx (MLX reads MLX_METAL_FAST_SYNCH once, at its first GPU
fence), and HF_HUB_OFFLINE=1 is set before mlx_lm/huggingface_hub load, so no code
path can start a download.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from typing import TYPE_CHECKING, List, Optional

from . import fast_synch

if TYPE_CHECKING:
    from .line_pump import LinePump


def _protocol_stream():
    """A private handle on the real stdout; fd 1 then points at stderr.

    Libraries print (mlx-lm prints some warnings with print()); anything written to
    fd 1 after this lands in the log instead of corrupting the JSON-lines stream.
    """
    sys.stdout.flush()
    stream = os.fdopen(os.dup(1), "w", encoding="utf-8", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return stream


def _hang_forever(log: logging.Logger) -> None:
    """The hang fault: alive and silent, like a runner wedged on the GPU. Only a kill
    ends it, or the supervisor going away (re-parented), so tests never leak it."""
    parent = os.getppid()
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            log.error("supervisor is gone: leaving the hang")
            os._exit(1)


def _model_features(model: str) -> dict:
    """The Hello's {tools, structuredOutput}, from the model's files (model_features.py)."""
    from .model_features import NO_FEATURES, features_from_files
    from .model_resolver import resolve_model

    try:
        return features_from_files(resolve_model(model))
    except Exception:  # a missing model fails at LoadModel, with its own message
        return dict(NO_FEATURES)


def _prompt_cache_refusal(args) -> Optional[str]:
    """The hello's prompt-cache refusal for this model's family, from its config.json."""
    import json

    from .cache_batching import refusal_for_model_type
    from .model_resolver import resolve_model

    try:
        config = resolve_model(args.model, dict(os.environ)) / "config.json"
        return refusal_for_model_type(json.loads(config.read_text()).get("model_type"))
    except Exception:  # a model that does not resolve fails at load, saying why
        return None


def main(argv: Optional[List[str]] = None) -> int:
    env = dict(os.environ)
    reported = fast_synch.reported_env(env)
    enabled = fast_synch.pin_for_mlx(os.environ)
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"

    from .cli import parse_args  # argparse exits 2 on bad flags

    args = parse_args(argv)
    if args.version:
        from .versions import version_text

        print(version_text())
        return 0
    logging.basicConfig(
        stream=sys.stderr,
        level=logging.INFO,
        format=f"%(asctime)s %(levelname)s [{args.engine}:{os.path.basename(args.model.rstrip('/')) or args.model}] %(message)s",
    )
    log = logging.getLogger("exobar.mlx")
    out_stream = _protocol_stream()

    from .line_pump import LinePump

    # The loop never writes the pipe itself (line_pump.py says why); every way out drains it.
    pump = LinePump(out_stream)
    try:
        return _serve(args, log, enabled, reported, pump)
    finally:
        pump.drain()


def _serve(args: argparse.Namespace, log: logging.Logger, enabled: bool, reported: dict, pump: "LinePump") -> int:
    """Hello, engine, stdin reader and step loop, writing the protocol through `pump`."""
    from .cli import test_timings
    from .inbox import Inbox, start_reader
    from .protocol import ProtocolWriter
    from .interleaved_loop import InterleavedLoop
    from .step_loop import LoopHooks, LoopOptions, StepLoop

    writer = ProtocolWriter(pump)
    if args.engine == "test":
        from .test_engine import TestEngine

        engine = TestEngine(
            timings=test_timings(args),
            time_scale=args.time_scale,
            prefill_chunk=args.prefill_chunk,
            prompt_cache_bytes=args.prompt_cache_bytes,
        )
    else:
        from .mlx_engine import MlxEngine  # imports mlx only when it loads

        engine = MlxEngine(
            args.model,
            prefill_chunk=args.prefill_chunk,
            max_batch=args.max_batch,
            default_max_tokens=args.default_max_tokens,
            wired_limit=args.wired_limit_bytes,
            prompt_cache_bytes=args.prompt_cache_bytes,
        )

    # The prompt cache's refusal by the model's type, known before it loads; one known
    # only after load (an mlx-lm without LRUPromptCache, a cache that cannot be weighed)
    # is logged and reported in RunnerLoaded (promptCacheReason).
    cache_refusal = _prompt_cache_refusal(args) if args.engine == "mlx" else None
    extra = {
        "schedule": args.schedule,
        "promptCache": {"capBytes": args.prompt_cache_bytes, "supported": cache_refusal is None, "reason": cache_refusal},
    }
    refusal = None
    if args.engine == "test":
        extra = {**extra, "features": engine.features()}
    if args.engine == "mlx":
        from .device import detect_device, skipped_features
        from .versions import SUPPORTED_RANGE, installed_mlx_lm, unsupported_reason

        installed = installed_mlx_lm()
        refusal = unsupported_reason(installed)
        device = detect_device()
        extra = {
            **extra,
            "device": device,
            "mlxLm": {"installed": installed, "supported": SUPPORTED_RANGE},
            "wiredLimitBytes": args.wired_limit_bytes,
            "skipped": skipped_features(device, enabled, args.wired_limit_bytes),
            "features": _model_features(args.model),
        }
    writer.hello(engine=engine.name, model=args.model, pid=os.getpid(), env=reported, fast_synch=enabled, **extra)
    if refusal is not None:
        # Refused at start, before any task: the reason is the failure status.
        log.error("%s", refusal)
        writer.runner_status("RunnerFailed", errorMessage=refusal)
        return 1
    log.info(
        "runner started (fast synch %s, schedule %s, prefill chunk %s, max batch %d, prompt cache %d bytes)",
        "on" if enabled else "off",
        args.schedule,
        f"{args.prefill_chunk} tokens" if args.schedule == "exo" else f"~{args.prefill_chunk_ms} ms",
        args.max_batch,
        args.prompt_cache_bytes,
    )

    inbox = Inbox()
    start_reader(
        sys.stdin.buffer,
        inbox,
        lambda line, reason: log.warning("ignored stdin line (%s): %.200s", reason, line),
    )

    def crash() -> None:
        pump.drain()
        sys.stderr.flush()
        os._exit(1)

    def hang() -> None:
        pump.drain()
        _hang_forever(log)

    options = LoopOptions(max_batch=args.max_batch, default_max_tokens=args.default_max_tokens)
    hooks = LoopHooks(crash=crash, hang=hang)
    if args.schedule == "exo":
        loop = StepLoop(engine, writer, inbox, options, hooks)
    else:
        loop = InterleavedLoop(engine, writer, inbox, options, hooks, prefill_chunk_ms=args.prefill_chunk_ms)
    return loop.run()


def run_and_exit(argv: Optional[List[str]] = None) -> None:
    """Runs the runner and leaves with its exit code.

    os._exit, not sys.exit: the stdin reader thread may be blocked in a read, and
    interpreter shutdown with such a daemon thread can abort with a fatal error.
    """
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
        if not isinstance(exit_.code, int) and exit_.code is not None:
            sys.stderr.write(f"{exit_.code}\n")
    except BaseException:
        logging.getLogger("exobar.mlx").exception("runner crashed before its loop could report it")
        code = 1
    for stream in (sys.stdout, sys.stderr, sys.__stdout__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass
    os._exit(code)
