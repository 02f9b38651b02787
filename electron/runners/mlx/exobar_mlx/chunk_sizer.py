"""The interleaved schedule's prefill chunk, sized from the runner's own prefill rate.

A fixed token count is wrong by 10x between a CPU and a Mac's GPU, so the chunk is as
many tokens as the measured rate does in `--prefill-chunk-ms`, bounded to [16, 4096]
(interleavedChunkTokens in shared/runner-protocol.ts). The rate is a moving average of
the chunks already run (each chunk's tokens over its own duration, decode steps
excluded); before any measurement the engine's warm-up rate (when it has one) or a
conservative first chunk stands in.
"""
from __future__ import annotations

from typing import Optional

from .protocol import MAX_INTERLEAVED_CHUNK_TOKENS, MIN_INTERLEAVED_CHUNK_TOKENS

#: The first chunk when nothing has been measured yet.
FIRST_CHUNK_TOKENS = 256
#: Weight of the newest chunk in the moving average.
SMOOTHING = 0.5
#: Chunks smaller than this say more about overheads than about the rate.
MIN_MEASURED_TOKENS = 16


def bounded_chunk(rate_tokens_per_s: float, chunk_ms: float) -> int:
    tokens = round(rate_tokens_per_s * chunk_ms / 1000.0)
    return max(MIN_INTERLEAVED_CHUNK_TOKENS, min(MAX_INTERLEAVED_CHUNK_TOKENS, tokens))


class ChunkSizer:
    def __init__(self, chunk_ms: float, rate_hint: Optional[float] = None) -> None:
        self.chunk_ms = chunk_ms
        #: Prefill tokens per second (of simulated time for the test engine), or None.
        self.rate: Optional[float] = rate_hint if rate_hint and rate_hint > 0 else None

    def tokens(self) -> int:
        if self.rate is None:
            return FIRST_CHUNK_TOKENS
        return bounded_chunk(self.rate, self.chunk_ms)

    def observe(self, tokens: int, seconds: float) -> None:
        if tokens < MIN_MEASURED_TOKENS or seconds <= 0:
            return
        rate = tokens / seconds
        self.rate = rate if self.rate is None else SMOOTHING * rate + (1 - SMOOTHING) * self.rate
