"""exobar's MLX runner: a runner process speaking the JSON-lines runner protocol.

The protocol is defined in shared/runner-protocol.ts; this package mirrors it in
Python. Nothing here imports mlx or mlx_lm at module level: only the mlx engine
does, lazily, so the runner (and its test engine) work on any machine.
"""
