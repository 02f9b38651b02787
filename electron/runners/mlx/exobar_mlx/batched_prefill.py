"""Prompts prefilled together: one forward pass over the same-length chunk of several
prompts whose caches are at the same offset, with nothing padded.

mlx-lm's BatchGenerator prefills prompts of different lengths together by padding them
on the right and masking the padding (PromptProcessingBatch.prompt): the attention sees
other shapes than a prompt alone does, and the state-space and rotating caches need
their `prepare`/`finalize` to undo it. Here only rows that need no padding go together:
every prompt of the group has prefilled the same number of tokens, its caches have the
same layout, and the chunk takes as many tokens from each. The batch's causal mask is
then the one a prompt alone gets, each row's attention and recurrences see only that
row, and the caches are split back to one per prompt after the pass, so the rest of the
engine (the handoff to BatchGenerator, the prompt cache) is unchanged. A row split off
is a view of the stacked arrays, which keeps all of them alive: a prompt that ends its
prefill has its caches copied out (`detach`, as BatchKVCache.extract copies with
mx.contiguous), so the prompt cache counts the bytes it really holds.

Rows are stacked along the caches' batch axis, which mlx-lm's own cache classes keep
for every batch size: KVCache and RotatingKVCache (keys, values) and ArraysCache (its
arrays), inside a CacheList too. Any other class (ChunkedKVCache: Llama 4, which
decodes one request at a time anyway) or a cache left in a padded batch state is not
stacked: its prompts prefill one by one.
"""
from __future__ import annotations

import copy
from typing import Any, List, Optional, Tuple

#: Where mlx-lm's cache classes live: only those are stacked (their batch axis is known).
_MLX_LM_CACHE_MODULE = "mlx_lm.models.cache"
_KV_CLASSES = ("KVCache", "RotatingKVCache")


def _kind(cache: Any) -> Optional[str]:
    cls = type(cache)
    if cls.__module__ != _MLX_LM_CACHE_MODULE:
        return None
    if cls.__name__ in _KV_CLASSES or cls.__name__ in ("ArraysCache", "CacheList"):
        return cls.__name__
    return None


def _shape(array: Any) -> Optional[Tuple[int, ...]]:
    return None if array is None else tuple(array.shape[1:])


def layout(caches: List[Any]) -> Optional[Tuple[Any, ...]]:
    """What must be equal for two prompts' caches to be stacked (offsets, rotation index,
    every array's shape past the batch axis), or None when they can never be stacked."""
    out: List[Any] = []
    for cache in caches:
        sig = _leaf_layout(cache)
        if sig is None:
            return None
        out.append(sig)
    return tuple(out)


def _leaf_layout(cache: Any) -> Optional[Tuple[Any, ...]]:
    kind = _kind(cache)
    if kind is None:
        return None
    if kind == "CacheList":
        parts = [_leaf_layout(part) for part in cache.caches]
        return None if any(p is None for p in parts) else (kind, tuple(parts))
    if kind == "ArraysCache":
        if cache.left_padding is not None or cache.lengths is not None:
            return None  # a padded batch's leftovers: its masks would differ per row
        return (kind, tuple(_shape(a) for a in cache.cache))
    if kind == "RotatingKVCache":
        return (kind, cache.offset, cache._idx, cache.keep, cache.max_size, _shape(cache.keys))
    return (kind, cache.offset, _shape(_kv_valid(cache, cache.keys)))


def _kv_valid(cache: Any, array: Any) -> Any:
    """A KVCache's keys or values up to its offset (it allocates in steps of 256)."""
    if array is None or type(cache).__name__ != "KVCache":
        return array
    return array[..., : cache.offset, :]


def stack(rows: List[Any], mx: Any) -> Any:
    """One cache holding `rows` (caches of one layer, equal layouts) along the batch axis."""
    first = rows[0]
    merged = copy.copy(first)
    kind = _kind(first)
    if kind == "CacheList":
        merged.caches = tuple(stack([r.caches[i] for r in rows], mx) for i in range(len(first.caches)))
    elif kind == "ArraysCache":
        merged.cache = [
            None if first.cache[i] is None else mx.concatenate([r.cache[i] for r in rows], axis=0)
            for i in range(len(first.cache))
        ]
    elif first.keys is not None:
        merged.keys = mx.concatenate([_kv_valid(r, r.keys) for r in rows], axis=0)
        merged.values = mx.concatenate([_kv_valid(r, r.values) for r in rows], axis=0)
    return merged


def unstack(merged: Any, index: int) -> Any:
    """Row `index` of a stacked cache, as a cache of its own (views of the stacked arrays)."""
    return _mapped(merged, lambda array: array[index : index + 1], lambda _cache, array: array[index : index + 1])


def detach(cache: Any, mx: Any) -> Any:
    """A cache of one row with arrays of its own (copies), so it no longer keeps the
    stacked arrays it was split from alive."""
    return _mapped(cache, mx.contiguous, lambda kv, array: mx.contiguous(_kv_valid(kv, array)))


def _mapped(cache: Any, array_fn: Any, kv_fn: Any) -> Any:
    """A shallow copy of `cache` with each of its arrays passed through a function: an
    ArraysCache's through `array_fn(array)`, keys and values through `kv_fn(cache, array)`."""
    out = copy.copy(cache)
    kind = _kind(cache)
    if kind == "CacheList":
        out.caches = tuple(_mapped(part, array_fn, kv_fn) for part in cache.caches)
    elif kind == "ArraysCache":
        out.cache = [None if a is None else array_fn(a) for a in cache.cache]
    elif cache.keys is not None:
        out.keys = kv_fn(cache, cache.keys)
        out.values = kv_fn(cache, cache.values)
    return out