"""A per-request sampler with its own random state, and a record of its failure.

mlx-lm's make_sampler draws from MLX's global random state, so a request's seed is
only its own while it decodes alone. This sampler owns a PRNG key made from the
request's seed (or from the OS when it has none) and splits it at every draw: the
tokens of a seeded request are the same on every run, whatever decodes beside it.

It runs inside BatchGenerator's step, where an exception would end the whole batch.
A failure is kept on the sampler instead (the engine ends that request with an error
after the step) and the greedy choice stands in, so the batch goes on.

`filters` are mlx-lm's top-p / min-p / top-k filters for the request (sampling.py),
applied before the draw as make_sampler applies them.
"""
from __future__ import annotations

import logging
import secrets
from typing import Any, Callable, List, Optional, Sequence

log = logging.getLogger("exobar.mlx.sampler")


class RequestSampler:
    def __init__(self, mx: Any, temperature: float, seed: Optional[int], filters: Sequence[Callable[[Any], Any]] = ()) -> None:
        self.mx = mx
        self.filters: List[Callable[[Any], Any]] = list(filters)
        self.temperature = float(temperature)
        self.seed = seed
        self.error: Optional[str] = None
        self._key = mx.random.key((seed if seed is not None else secrets.randbits(63)) % (1 << 63)) if temperature > 0 else None

    def __call__(self, logprobs: Any) -> Any:
        if self.error is None:
            try:
                return self._sample(logprobs)
            except Exception as err:  # this request's failure, not the batch's
                self.error = f"sampling failed: {type(err).__name__}: {err}"
                log.warning("%s", self.error)
        return self.mx.argmax(logprobs, axis=-1)

    def _sample(self, logprobs: Any) -> Any:
        mx = self.mx
        if self._key is None:
            return mx.argmax(logprobs, axis=-1)
        for keep in self.filters:
            logprobs = keep(logprobs)
        keys = mx.random.split(self._key)
        self._key = keys[0]
        return mx.random.categorical(logprobs * (1.0 / self.temperature), key=keys[1])
