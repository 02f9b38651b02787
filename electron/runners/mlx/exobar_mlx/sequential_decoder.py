"""Decoding one request at a time, for models whose caches cannot join a batch.

BatchGenerator merges caches into batch caches, which a ChunkedKVCache (Llama 4)
cannot do. Such a model is decoded here instead, one forward pass per token on the
request's own cache: the arithmetic of mlx_lm.generate's generate_step, so greedy
output equals mlx_lm.generate's. The engine admits one request at a time for it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence


@dataclass
class SequentialResponse:
    uid: int
    token: int
    finish_reason: Optional[str] = None


@dataclass
class _Sequence:
    next_input: int
    cache: List[Any]
    sampler: Any
    #: mlx-lm logits processors, called with the request's context as BatchGenerator
    #: calls them: the last prompt token, then every token generated.
    processors: Sequence[Any] = ()
    context: List[int] = field(default_factory=list)


class SequentialDecoder:
    def __init__(self, mx: Any, model: Any, stream: Any) -> None:
        self.mx = mx
        self.model = model
        self.stream = stream
        self._sequences: Dict[int, _Sequence] = {}
        self._uid = 0

    def insert(self, last_prompt_token: int, cache: List[Any], sampler: Any, processors: Sequence[Any] = ()) -> int:
        uid = self._uid
        self._uid += 1
        self._sequences[uid] = _Sequence(int(last_prompt_token), cache, sampler, tuple(processors))
        return uid

    def next(self) -> List[SequentialResponse]:
        """One token for each sequence (the engine keeps it to one)."""
        mx = self.mx
        out: List[SequentialResponse] = []
        for uid, sequence in list(self._sequences.items()):
            with mx.stream(self.stream):
                logits = self.model(mx.array([[sequence.next_input]]), cache=sequence.cache)[:, -1, :]
                if sequence.processors:
                    sequence.context.append(sequence.next_input)
                    context = mx.array(sequence.context)
                    for processor in sequence.processors:
                        logits = processor(context, logits)
                logprobs = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
                token = sequence.sampler(logprobs)
                mx.eval(token)
            sequence.next_input = int(token.item())
            out.append(SequentialResponse(uid, sequence.next_input))
        return out

    def remove(self, uid: int) -> None:
        self._sequences.pop(uid, None)
