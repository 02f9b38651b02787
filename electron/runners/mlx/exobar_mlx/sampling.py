"""A request's sampling options as mlx-lm's own filters and logits processors.

mlx-lm's make_sampler chains top-p, min-p and top-k filters before a categorical draw
from MLX's global random state; the runner keeps the draw per request (request_sampler.py:
a seed is the request's own whatever decodes beside it), so it takes the same filters
(sample_utils.apply_top_p / apply_min_p / apply_top_k, in make_sampler's order) and
makes the draw itself. The penalties are make_logits_processors' processors unchanged:
mlx-lm's semantics, over the last 20 tokens of the request's context.

All are honoured with temperature > 0 only for the filters (greedy decoding takes the
best token whatever the filters keep, as in mlx-lm); the penalties change the logits
and so apply to greedy decoding too.
"""
from __future__ import annotations

from typing import Any, Callable, List

from .request_options import Sampling

#: mlx-lm's default context of the repetition, presence and frequency penalties.
PENALTY_CONTEXT = 20

Filter = Callable[[Any], Any]


def sampling_filters(sampling: Sampling, vocab_size: int) -> List[Filter]:
    """logprobs -> logprobs filters, make_sampler's chain for these options."""
    if not (sampling.top_p or sampling.min_p or sampling.top_k):
        return []
    from mlx_lm.sample_utils import apply_min_p, apply_top_k, apply_top_p

    filters: List[Filter] = []
    if sampling.top_p is not None and 0 < sampling.top_p < 1.0:
        filters.append(lambda x, p=sampling.top_p: apply_top_p(x, p))
    if sampling.min_p:
        filters.append(lambda x, p=sampling.min_p: apply_min_p(x, p, 1))
    # apply_top_k refuses k >= vocabulary size: keeping every token is no filter at all.
    if sampling.top_k and sampling.top_k < vocab_size:
        filters.append(lambda x, k=sampling.top_k: apply_top_k(x, k))
    return filters


def penalty_processors(sampling: Sampling) -> List[Callable[[Any, Any], Any]]:
    """(tokens, logits) -> logits processors for the penalties, from mlx-lm."""
    if not (sampling.repetition_penalty or sampling.presence_penalty or sampling.frequency_penalty):
        return []
    from mlx_lm.sample_utils import make_logits_processors

    return make_logits_processors(
        repetition_penalty=sampling.repetition_penalty,
        repetition_context_size=PENALTY_CONTEXT,
        presence_penalty=sampling.presence_penalty,
        presence_context_size=PENALTY_CONTEXT,
        frequency_penalty=sampling.frequency_penalty,
        frequency_context_size=PENALTY_CONTEXT,
    )


def with_prompt_tail(processor: Any, tail: List[int]) -> Any:
    """A context processor (mlx-lm's penalties) that also sees the prompt's last tokens:
    the sequential decoder's context starts at the last prompt token, mlx-lm's generate
    at the first. An empty tail (the batch, whose context holds the prompt) is no wrapper."""
    if not tail:
        return processor
    import mlx.core as mx

    prefix = mx.array(tail, dtype=mx.int32)

    def wrapped(tokens: Any, logits: Any) -> Any:
        return processor(mx.concatenate([prefix, tokens.astype(mx.int32)]), logits)

    return wrapped
