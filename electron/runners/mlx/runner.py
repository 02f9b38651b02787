#!/usr/bin/env python3
"""exobar's MLX runner: one model, the JSON-lines runner protocol on stdin/stdout.

    python3 electron/runners/mlx/runner.py --model <local dir | HF repo id> [--engine mlx|test]

See docs/mlx-runner.md. Standard library only until the mlx engine loads a model.
"""
import os
import sys

if sys.version_info < (3, 10):
    sys.stderr.write(f"exobar mlx runner needs Python 3.10+, this is {sys.version.split()[0]}\n")
    sys.exit(2)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from exobar_mlx.main import run_and_exit  # noqa: E402

if __name__ == "__main__":
    run_and_exit()
