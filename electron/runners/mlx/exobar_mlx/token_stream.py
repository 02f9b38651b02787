"""Deterministic output tokens for the test engine: the sim's token stream, ported.

Same seed text, same hash (FNV-1a over UTF-16 code units), same PRNG (mulberry32),
same vocabulary and natural length as electron/runners/sim/token-stream.ts, so a
request gives the same words, token ids and length from the sim and from this
runner's test engine.
"""
from __future__ import annotations

from typing import Callable, Optional, Tuple

NATURAL_LENGTH_MIN = 16
NATURAL_LENGTH_MAX = 48
TOKEN_ID_BASE = 1000
VOCABULARY = (
    "the", "model", "runs", "on", "one", "shared", "GPU", "and", "answers", "quickly",
    "while", "another", "prefills", "a", "long", "prompt", "tokens", "flow", "in", "steps",
    "each", "step", "admits", "new", "request", "batch", "decodes", "together", "cache", "layer",
    "memory", "metal", "stream", "kernel", "queue", "supervisor", "holds", "cancel", "until", "ack",
    "sim", "runner", "reports", "progress", "chunk", "time", "first", "token", "is", "short",
)
_MASK = 0xFFFFFFFF


def hash32(text: str) -> int:
    """FNV-1a over UTF-16 code units, as JavaScript's charCodeAt sees the string."""
    h = 0x811C9DC5
    data = text.encode("utf-16-le", errors="surrogatepass")
    for i in range(0, len(data), 2):
        h ^= data[i] | (data[i + 1] << 8)
        h = (h * 0x01000193) & _MASK
    return h


def mulberry32(seed: int) -> Callable[[], float]:
    """mulberry32 with JavaScript's 32-bit integer semantics; uniform in [0, 1)."""
    state = seed & _MASK

    def next_float() -> float:
        nonlocal state
        state = (state + 0x6D2B79F5) & _MASK
        t = state
        t = ((t ^ (t >> 15)) * (t | 1)) & _MASK
        t = (t ^ ((t + (((t ^ (t >> 7)) * (t | 61)) & _MASK)) & _MASK)) & _MASK
        return ((t ^ (t >> 14)) & _MASK) / 4294967296

    return next_float


def _seed_text(seed: Optional[int], command_id: str) -> str:
    return f"seed:{seed}" if seed is not None else f"command:{command_id}"


def plan_completion(max_tokens: Optional[int], seed: Optional[int], command_id: str) -> Tuple[int, str]:
    """(length, finish reason): exactly maxTokens ('length'), else a natural 16-48 ('stop')."""
    if max_tokens is not None:
        return max_tokens, "length"
    random = mulberry32(hash32(f"{_seed_text(seed, command_id)}:length"))
    span = NATURAL_LENGTH_MAX - NATURAL_LENGTH_MIN + 1
    return NATURAL_LENGTH_MIN + int(random() * span), "stop"


def token_source(seed: Optional[int], command_id: str) -> Callable[[], Tuple[str, int]]:
    """An endless deterministic source of (text, tokenId) for one request."""
    random = mulberry32(hash32(_seed_text(seed, command_id)))
    first = True

    def next_token() -> Tuple[str, int]:
        nonlocal first
        index = int(random() * len(VOCABULARY))
        word = VOCABULARY[index]
        text = word if first else f" {word}"
        first = False
        return text, TOKEN_ID_BASE + index

    return next_token
