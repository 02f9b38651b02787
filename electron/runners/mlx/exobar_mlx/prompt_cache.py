"""The prompt cache: the KV state of prompts already prefilled, reused by later prompts
that start with the same tokens (the conversation so far, a long system prompt, an
agent's tool definitions), least recently used first out, capped in bytes.

The mlx engine keeps mlx-lm's own `LRUPromptCache` (mlx_lm.models.cache, what
mlx_lm.server uses): its trie finds the longest cached prefix, and its rules decide
what may be reused for each cache family (an exact or shorter prefix always; a longer
entry only when its caches can be trimmed, so rotating windows past their size and
state-space caches are never trimmed wrongly). What it lacks, written here: the
counters the runner reports (PromptCacheStats) and, for the test engine, a standard
library stand-in with the same reuse rules for a cache that can be trimmed.

An entry is added only when a prompt's prefill completes, keyed by the tokens in its
cache, so a cancelled partial prefill is never served to another request.
"""
from __future__ import annotations

import copy
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

#: The key mlx-lm's cache files entries under (one model per runner).
MODEL_KEY = "model"


@dataclass
class CacheCounters:
    """Hits, misses and tokens served since the runner started."""

    hits: int = 0
    misses: int = 0
    hit_tokens: int = 0

    def record(self, cached_tokens: int) -> None:
        if cached_tokens > 0:
            self.hits += 1
            self.hit_tokens += cached_tokens
        else:
            self.misses += 1

    def event(self, entries: int, nbytes: int, cap_bytes: int) -> Dict[str, int]:
        """The PromptCacheStats fields."""
        return {
            "entries": int(entries),
            "bytes": int(nbytes),
            "capBytes": int(cap_bytes),
            "hits": self.hits,
            "misses": self.misses,
            "hitTokens": self.hit_tokens,
        }


class MlxPromptCache:
    """mlx-lm's LRUPromptCache with the runner's counters. `lru_class` is
    mlx_lm.models.cache.LRUPromptCache (imported by the engine, with mlx)."""

    def __init__(self, lru_class: Any, cap_bytes: int) -> None:
        self.cap_bytes = cap_bytes
        # Capped in bytes only: the count limit is set out of reach.
        self._lru = lru_class(max_size=1 << 62, max_bytes=cap_bytes)
        self.counters = CacheCounters()

    def fetch(self, tokens: List[int]) -> Tuple[Optional[List[Any]], int]:
        """A private copy of the cache of the longest usable prefix of `tokens`, and how
        many tokens it holds (None, 0 on a miss)."""
        if not tokens:
            self.counters.record(0)
            return None, 0
        cache, rest = self._lru.fetch_nearest_cache(MODEL_KEY, list(tokens))
        cached = len(tokens) - len(rest) if cache is not None else 0
        self.counters.record(cached)
        return (cache, cached) if cached > 0 else (None, 0)

    def insert(self, tokens: List[int], cache: List[Any]) -> None:
        """Caches a copy of `cache`, which holds exactly `tokens`."""
        if tokens:
            self._lru.insert_cache(MODEL_KEY, list(tokens), copy.deepcopy(cache))

    def stats(self) -> Dict[str, int]:
        return self.counters.event(len(self._lru), self._lru.nbytes, self.cap_bytes)


class SimPromptCache:
    """The test engine's prompt cache: token tuples and their simulated bytes, with
    LRUPromptCache's rules for a trimmable cache (a longer entry serves its common
    prefix, an entry that a new one extends is dropped) and recency refreshed on a hit."""

    def __init__(self, cap_bytes: int, bytes_per_token: int) -> None:
        self.cap_bytes = cap_bytes
        self.bytes_per_token = bytes_per_token
        self._entries: "OrderedDict[Tuple[Any, ...], int]" = OrderedDict()
        self.counters = CacheCounters()

    @property
    def nbytes(self) -> int:
        return sum(self._entries.values())

    def fetch(self, tokens: Sequence[Any]) -> int:
        """How many leading tokens of `tokens` the cache serves (0 on a miss)."""
        best, best_key = 0, None
        for key in self._entries:
            common = _common_prefix(key, tokens)
            usable = common if common == len(key) else min(common, len(tokens) - 1)
            if usable > best:
                best, best_key = usable, key
        if best_key is not None:
            self._entries.move_to_end(best_key)
        self.counters.record(best)
        return best

    def insert(self, tokens: Sequence[Any]) -> None:
        key = tuple(tokens)
        if not key:
            return
        for other in [k for k in self._entries if len(k) <= len(key) and key[: len(k)] == k]:
            del self._entries[other]
        self._entries[key] = len(key) * self.bytes_per_token
        while self._entries and self.nbytes > self.cap_bytes:
            self._entries.popitem(last=False)

    def stats(self) -> Dict[str, int]:
        return self.counters.event(len(self._entries), self.nbytes, self.cap_bytes)


def _common_prefix(a: Sequence[Any], b: Sequence[Any]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
