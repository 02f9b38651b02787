#!/usr/bin/env python3
"""The seed scenario at runner level: does a busy model slow another model's first token?

Two MLX runners on one Mac (ring instances: fast synch off), a small and a large model.
The small model's time to first token (TTFT) is measured in three conditions, as in
exo's measurement (docs/mlx-manual-check.md):

  alone          the small model's short request, nothing else running
  busy           the large model prefills a unique ~30k-token prompt; the short request
                 is sent `--delay` seconds later
  busy+queued    the same, plus one more large-model request queued behind the prefill

This driver never waits on one runner to talk to the other (it is a non-blocking
supervisor), so "busy+queued" should cost no more than "busy" (within ~1.2x): the
15 s stall exo saw came from its blocking supervisor, not from the runners or the GPU.

    python3 electron/runners/mlx/tools/seed_scenario.py \\
        --small mlx-community/Llama-3.2-1B-Instruct-4bit \\
        --large mlx-community/Llama-3.2-3B-Instruct-4bit

`--engine test` runs the same script on the deterministic engine (CI smoke test).
Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional

RUNNER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "runner.py")

# Common English words: each is about one token for Llama-style tokenizers, so N words
# make a prompt of roughly N tokens (the runner reports the exact count).
WORDS = (
    "time year people way day man thing woman life child world school state family student group country problem "
    "hand part place case week company system program question work government number night point home water room "
    "mother area money story fact month lot right study book eye job word business issue side kind head house "
    "service friend father power hour game line end member law car city community name president team minute idea "
    "kid body information back parent face others level office door health person art war history party result "
    "change morning reason research girl guy moment air teacher force education"
).split()

# Test-engine timings: the sim catalog's Llama 3.2 1B and 3B (shared/catalog.ts).
TEST_SMALL = ["--prefill-tps", "12000", "--decode-step-s", "0.004", "--total-layers", "16"]
TEST_LARGE = ["--prefill-tps", "1590", "--decode-step-s", "0.009", "--total-layers", "28"]


class Runner:
    """One runner process, driven over its stdin/stdout without ever blocking the other."""

    def __init__(self, label: str, args: List[str], log: Any) -> None:
        self.label = label
        env = dict(os.environ, MLX_METAL_FAST_SYNCH="0", EXO_FAST_SYNCH="false")  # ring instances
        self.proc = subprocess.Popen(
            [sys.executable, RUNNER, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=env,
        )
        self.events: List[tuple] = []  # (monotonic time, message)
        self._cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            message = json.loads(raw)
            with self._cond:
                self.events.append((time.monotonic(), message))
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    def send(self, message: Dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()
        return time.monotonic()

    def wait(self, predicate: Callable[[Dict[str, Any]], bool], timeout: float) -> tuple:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self.events:
                    if predicate(event[1]):
                        return event
                failed = [m for _, m in self.events if m.get("status", {}) and isinstance(m.get("status"), dict)
                          and m["status"].get("kind") == "RunnerFailed"]
                if failed:
                    raise RuntimeError(f"{self.label} runner failed: {failed[0]['status']['errorMessage']}")
                if self.proc.poll() is not None:
                    raise RuntimeError(f"{self.label} runner exited with {self.proc.returncode}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.label}: timed out")
                self._cond.wait(left)

    def ready(self, timeout: float) -> None:
        self.send({"kind": "LoadModel", "taskId": f"{self.label}-load"})
        self.send({"kind": "StartWarmup", "taskId": f"{self.label}-warmup"})
        self.wait(lambda m: m.get("taskId") == f"{self.label}-warmup" and m.get("status") == "Complete", timeout)

    def generate(self, task_id: str, content: str, max_tokens: int) -> float:
        return self.send({
            "kind": "TextGeneration",
            "taskId": task_id,
            "commandId": task_id,
            "params": {"messages": [{"role": "user", "content": content}], "maxTokens": max_tokens,
                       "temperature": 0, "seed": None},
        })

    def first_token(self, task_id: str, timeout: float) -> float:
        at, _ = self.wait(lambda m: m.get("commandId") == task_id and m["chunk"]["kind"] == "TokenChunk", timeout)
        return at

    def done(self, task_id: str, timeout: float) -> Dict[str, Any]:
        return self.wait(lambda m: m.get("taskId") == task_id and m.get("status") in ("Complete", "Cancelled", "Failed"), timeout)[1]

    def prompt_tokens(self, task_id: str) -> Optional[int]:
        for _, m in self.events:
            if m.get("commandId") == task_id and m["chunk"]["kind"] == "PrefillProgressChunk":
                return m["chunk"]["totalTokens"]
        return None

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send({"kind": "Shutdown", "taskId": f"{self.label}-bye"})
                self.proc.wait(30)
            except Exception:
                self.proc.kill()


def long_prompt(words: int, salt: str) -> str:
    rng = random.Random(salt)
    return salt + " " + " ".join(rng.choice(WORDS) for _ in range(max(1, words - 1)))


def run(args: argparse.Namespace) -> Dict[str, Any]:
    scale = args.time_scale if args.engine == "test" else 1.0
    # exo's schedule: the seed's stall is exo's runner step (docs/mlx-runner.md).
    common = ["--engine", args.engine, "--schedule", "exo"] + (["--time-scale", str(scale)] if args.engine == "test" else [])
    log = open(args.runner_log, "ab")
    small = Runner("small", ["--model", args.small, *common, *(TEST_SMALL if args.engine == "test" else [])], log)
    large = Runner("large", ["--model", args.large, *common, *(TEST_LARGE if args.engine == "test" else [])], log)
    timeout = args.timeout
    short = "Say hello in five words."
    # The test engine counts one token per word plus 7 template tokens.
    words = args.long_prompt_tokens - 7 if args.engine == "test" else args.long_prompt_tokens
    results: Dict[str, List[float]] = {"alone": [], "busy": [], "busy+queued": []}
    details: List[Dict[str, Any]] = []
    try:
        for runner in (small, large):
            runner.ready(timeout)  # both load first, then both warm up: one at a time is slow
        for trial in range(args.trials):
            t = f"t{trial}"
            sent = small.generate(f"alone-{t}", short, 8)
            results["alone"].append(small.first_token(f"alone-{t}", timeout) - sent)
            small.done(f"alone-{t}", timeout)

            for case in ("busy", "busy+queued"):
                long_id = f"{case}-long-{t}"
                large.generate(long_id, long_prompt(words, f"{case}-{trial}-{random.random()}"), 4)
                if case == "busy+queued":
                    # One more large-model request queued behind the prefill: the runner
                    # acknowledges it only after the prefill's step.
                    time.sleep(0.2 * scale)
                    large.generate(f"{case}-queued-{t}", short, 4)
                time.sleep(args.delay * scale)
                short_id = f"{case}-short-{t}"
                sent = small.generate(short_id, short, 8)
                ttft = small.first_token(short_id, timeout) - sent
                results[case].append(ttft)
                busy = not any(m.get("taskId") == long_id and m.get("status") in ("Complete", "Cancelled")
                               for _, m in large.events)
                small.done(short_id, timeout)
                # Measured: stop the long prompt at its next chunk boundary to save time.
                large.send({"kind": "CancelTask", "cancelledTaskId": long_id})
                large.done(long_id, timeout)
                if case == "busy+queued":
                    large.done(f"{case}-queued-{t}", timeout)
                details.append({"case": case, "trial": trial, "ttftS": ttft, "largeStillBusy": busy,
                                "longPromptTokens": large.prompt_tokens(long_id)})
    finally:
        small.stop()
        large.stop()
        log.close()
    median = {case: statistics.median(values) for case, values in results.items()}
    ratio = median["busy+queued"] / median["busy"] if median["busy"] > 0 else float("inf")
    return {"engine": args.engine, "small": args.small, "large": args.large, "trials": args.trials,
            "ttftS": results, "medianTtftS": median, "queuedOverBusy": ratio, "details": details}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", default="mlx-community/Llama-3.2-1B-Instruct-4bit")
    parser.add_argument("--large", default="mlx-community/Llama-3.2-3B-Instruct-4bit")
    parser.add_argument("--engine", choices=("mlx", "test"), default="mlx")
    parser.add_argument("--long-prompt-tokens", type=int, default=30_000)
    parser.add_argument("--delay", type=float, default=3.5, help="seconds between the long prompt and the short request")
    parser.add_argument("--trials", type=int, default=2)
    parser.add_argument("--time-scale", type=float, default=0.05, help="test engine only")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for any one event")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--runner-log", default="seed-scenario-runners.log", help="the runners' stderr (appended)")
    parser.add_argument("--check", type=float, default=1.2, help="fail unless busy+queued <= this x busy (default 1.2)")
    args = parser.parse_args(argv)

    result = run(args)
    print(f"{'condition':<14} {'median TTFT (s)':>16}   trials")
    for case, values in result["ttftS"].items():
        print(f"{case:<14} {result['medianTtftS'][case]:>16.3f}   {', '.join(f'{v:.3f}' for v in values)}")
    tokens = [d["longPromptTokens"] for d in result["details"] if d["longPromptTokens"]]
    if tokens:
        print(f"long prompt: {tokens[0]} tokens (as the large model's tokenizer counts them)")
    if any(not d["largeStillBusy"] for d in result["details"]):
        print("warning: the large model had finished before the short request's first token; raise --long-prompt-tokens")
    verdict = result["queuedOverBusy"] <= args.check
    print(f"busy+queued / busy = {result['queuedOverBusy']:.2f} (limit {args.check}): {'PASS' if verdict else 'FAIL'}")
    print(f"runner logs: {os.path.abspath(args.runner_log)}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(result, f, indent=2)
    return 0 if verdict else 1


if __name__ == "__main__":
    sys.exit(main())
