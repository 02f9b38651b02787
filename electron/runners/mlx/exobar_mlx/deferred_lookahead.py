"""On the CPU, a joining prompt's first token one forward pass sooner.

mlx-lm's BatchGenerator decodes one token ahead: each step starts the next token's
forward pass with `mx.async_eval` and returns the token before it. On a GPU that pass
runs while the step returns. On the CPU `async_eval` returns only once the pass is
nearly done (MLX lets at most ten tasks be in flight, MAX_ACTIVE_TASKS, and a one-token
pass of the tiny llama is hundreds of operations: async_eval took 19-22 ms of a
20-24 ms step, measured), so a token comes out after the pass of the token after it.
In steady decoding that costs nothing (a step is one pass either way), but a prompt
joining the batch waits two passes for its first token: the step it joins on took
35-50 ms after a 1,220-token prompt, 22-27 ms with the lookahead deferred, the same
tokens.

So mlx_lm.generate sees mlx.core through `DeferrableAsyncEval`: everything is mlx.core's
own, except that while `deferring()` is on, `async_eval` starts nothing and the pass it
was given stays lazy until the next step evaluates it (that step needed it anyway: it
is the next token's pass). The engine defers during the step a prompt joins on, on the
CPU only. Written here because mlx-lm has no switch for it; the object replaces only
the `mx` name inside mlx_lm.generate, and only that module's code sees the difference.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Optional


class DeferrableAsyncEval:
    """mlx.core as mlx_lm.generate sees it, with async_eval skipped while deferring."""

    def __init__(self, mx: Any) -> None:
        self._mx = mx
        self._deferring = False
        #: async_eval calls skipped so far (what the tests count).
        self.deferred = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mx, name)

    def async_eval(self, *args: Any, **kwargs: Any) -> None:
        if self._deferring:
            self.deferred += 1
            return
        self._mx.async_eval(*args, **kwargs)

    @contextmanager
    def deferring(self) -> Iterator[None]:
        """async_eval starts nothing until the block ends (on the thread that decodes)."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False


def install(module: Any, mx: Any) -> Optional[DeferrableAsyncEval]:
    """Puts a DeferrableAsyncEval in `module` (mlx_lm.generate; once per process); None
    when that module's `mx` is not mlx.core (an mlx-lm laid out otherwise: left as it is)."""
    current = getattr(module, "mx", None)
    if isinstance(current, DeferrableAsyncEval):
        return current
    if current is not mx:
        return None
    deferrable = DeferrableAsyncEval(mx)
    module.mx = deferrable
    return deferrable
