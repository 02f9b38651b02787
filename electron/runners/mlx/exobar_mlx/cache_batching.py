"""Can this model's caches join a batch? Decided once, at load, from the real caches.

BatchGenerator merges each request's prompt cache into a batch cache
(mlx_lm.generate._merge_caches): every layer's cache class must have `merge`, else
the first decode step raises, for one request as for eight. KVCache,
RotatingKVCache, ArraysCache and CacheList merge (a CacheList when its parts do);
ChunkedKVCache (Llama 4) does not. A model with such a cache is served one request
at a time by the engine's own decode loop instead of crashing later.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, List, Optional

#: Model families known by cache class, for messages that name what the user loaded.
_FAMILY_OF_CACHE = {
    "ChunkedKVCache": "Llama 4 (chunked attention)",
}


@dataclass(frozen=True)
class Batching:
    #: "batched": requests decode together; "sequential": one request at a time.
    mode: str
    #: The cache classes of the model's layers, first-seen order.
    cache_types: List[str]
    #: Why the mode is sequential (None when batched).
    reason: Optional[str] = None


def _leaves(cache: Any) -> Iterable[Any]:
    parts = getattr(cache, "caches", None)
    if isinstance(parts, (list, tuple)):
        for part in parts:
            yield from _leaves(part)
    yield cache


def _unmergeable(cache: Any) -> Optional[str]:
    for leaf in _leaves(cache):
        if not hasattr(type(leaf), "merge"):
            return type(leaf).__name__
    return None


def decide_batching(caches: List[Any], model_type: Optional[str] = None) -> Batching:
    """How the engine serves a model whose fresh prompt cache is `caches`."""
    kinds: List[str] = []
    for cache in caches:
        name = type(cache).__name__
        if name not in kinds:
            kinds.append(name)
    for cache in caches:
        bad = _unmergeable(cache)
        if bad is not None:
            family = _FAMILY_OF_CACHE.get(bad, f"model type {model_type or 'unknown'}")
            return Batching(
                "sequential",
                kinds,
                f"{family}: its {bad} cannot be merged into a batch by mlx-lm, so this model "
                f"serves one request at a time",
            )
    return Batching("batched", kinds)


#: Cache classes the prompt cache refuses, and why. ChunkedKVCache says it can always
#: be trimmed, but once a prompt is longer than the attention chunk its front is gone
#: and a trim leaves other keys than the prefix's: a prefix reused so gives other tokens
#: (measured on the tiny Llama 4).
_PROMPT_CACHE_REFUSED = {
    "ChunkedKVCache": "its ChunkedKVCache drops the front of a prompt longer than the attention chunk, "
    "so a cached prefix cannot be cut back to the prompts that share it",
}
#: The same, by config.json's model_type, for the hello (sent before the model loads).
_CACHE_OF_MODEL_TYPE = {"llama4": "ChunkedKVCache"}


def refusal_for_model_type(model_type: Optional[str]) -> Optional[str]:
    """Why the prompt cache is refused for a model of this type, or None."""
    cache = _CACHE_OF_MODEL_TYPE.get(model_type or "")
    if cache is None:
        return None
    return f"{_FAMILY_OF_CACHE.get(cache, model_type)}: {_PROMPT_CACHE_REFUSED[cache]}"


def refusal_of(caches: List[Any]) -> Optional[str]:
    """Why this model's caches cannot go in the prompt cache, or None when they can.

    mlx-lm's LRUPromptCache weighs each entry by its caches' `nbytes` and copies them
    with deepcopy; which entries may serve a prompt (exact, shorter, or a longer one
    only when every cache can be trimmed) it decides itself per cache, so KVCache,
    RotatingKVCache, ArraysCache and CacheList qualify. Refused: a cache class without
    `nbytes` (it would break the byte cap) and those of _PROMPT_CACHE_REFUSED.
    """
    for cache in caches:
        for leaf in _leaves(cache):
            name = type(leaf).__name__
            if name in _PROMPT_CACHE_REFUSED:
                return f"{_FAMILY_OF_CACHE.get(name, name)}: {_PROMPT_CACHE_REFUSED[name]}"
            if not hasattr(type(leaf), "nbytes"):
                return f"its {name} does not report its size, so it cannot be kept within the cache's byte cap"
    return None
