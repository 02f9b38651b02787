"""The `mlx` engine: real models through mlx-lm, used as a library (Metal or CPU).

mlx-lm does the model work: `load` (weights, tokenizer), the tokenizer's chat
template, the model's forward pass with its own caches (`make_prompt_cache`), and
`BatchGenerator` for batched decoding. This module owns the prefill, the way exo's
runner wants it for every cache type:

- Prefill is `tokens[:-1]` in chunks (a job the step loop drives: start_prefill,
  prefill_some per chunk, finish_prefill), each one `model(chunk[None], cache=...)`
  under the generation stream (on the CPU, a stream of the prefill thread's own:
  interleaved_loop.py, layer_eval.py), its cache state evaluated, then a progress
  report and a cancel check. It starts from the prompt cache's longest prefix when there is one
  (prompt_cache.py, mlx-lm's LRUPromptCache) and, complete, is cached. This is the
  arithmetic of mlx_lm.generate's generate_step, chunk for chunk. Nothing is trimmed
  and no token is thrown away, so it is right for KVCache, RotatingKVCache (sliding
  windows), ChunkedKVCache and ArraysCache (state-space/hybrid) alike.
- Only the last prompt token goes to BatchGenerator with the filled cache: the next
  decode step takes one extra next() for every prompt that joined since the last one
  (it computes their first tokens) and returns them with its own; on the CPU that step
  leaves BatchGenerator's lookahead pass to the next one (deferred_lookahead.py).
- Prompts at the same offset with the same cache layout prefill in one pass, their
  caches stacked along the batch axis, unpadded (batched_prefill.py).
- Caches that cannot be merged into a batch (cache_batching.py) are decoded one
  request at a time by the engine's own loop (sequential_decoder.py).
- Failures stay with their request: an exception or out-of-memory in one request's
  prefill is a RequestError; a failing sampler ends only its request; a failing batch
  step ends the requests in it and the generator is rebuilt (the runner keeps serving).
- Sampling state is per request (request_sampler.py).
- Tools, structured output, sampling options and stop sequences are planned per
  request (request_plan.py): the template's tools, a grammar as an mlx-lm logits
  processor, mlx-lm's filters and penalties, the tool calls split from the output, and
  the stop sequences met in it (stop_sequences.py), which end the request at once.

mlx and mlx_lm are imported lazily, inside `load`, so this module imports anywhere.
"""
from __future__ import annotations

import gc
import json
import logging
import os
import sys
import threading
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional, Tuple

from .batched_prefill import detach, layout, stack, unstack
from .cache_batching import Batching, decide_batching, refusal_of
from .device import apply_wired_limit
from . import deferred_lookahead, layer_eval
from .engine import (
    Engine,
    EngineUnavailableError,
    GeneratedToken,
    LoadProgress,
    PrefillJob,
    PreparedRequest,
    RequestError,
)
from .model_resolver import read_total_layers, resolve_model
from .prompt_cache import MlxPromptCache
from .protocol import GenerationParams
from .sampling import PENALTY_CONTEXT
from .tools import template_messages
from .request_plan import ModelCapabilities, PlanState
from .request_sampler import RequestSampler
from .sequential_decoder import SequentialDecoder
from .versions import SUPPORTED_RANGE

log = logging.getLogger("exobar.mlx.engine")

#: exo's sampling default when a request sets no temperature.
DEFAULT_TEMPERATURE = 0.7
WARMUP_PROMPT = "Prompt to warm up the inference engine. Repeat this."


def import_mlx() -> SimpleNamespace:
    """Imports mlx and the parts of mlx-lm this engine uses; clear error when absent."""
    # Belt and braces: the entry point sets these too. No download may ever start.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import mlx.core as mx
        import mlx_lm
        from mlx_lm import load
        import mlx_lm.generate
        from mlx_lm.generate import BatchGenerator, generation_stream
        from mlx_lm.models.cache import make_prompt_cache
    except ImportError as err:
        raise EngineUnavailableError(
            f"MLX is not available to {sys.executable}: {err}. The mlx engine needs mlx-lm {SUPPORTED_RANGE} "
            f"(exobar's 'Set up MLX runtime' installs it; on Linux `pip install \"mlx[cpu]\"` as well)."
        ) from err
    return SimpleNamespace(
        mx=mx,
        version=getattr(mlx_lm, "__version__", "unknown"),
        load=load,
        BatchGenerator=BatchGenerator,
        # The module whose mlx.core the CPU's deferred lookahead stands in for.
        generate_module=sys.modules["mlx_lm.generate"],
        generation_stream=generation_stream,
        make_prompt_cache=make_prompt_cache,
        LRUPromptCache=_lru_prompt_cache_class(),
    )


def _lru_prompt_cache_class() -> Any:
    """mlx-lm's LRUPromptCache, or None in an mlx-lm without it (the cache is refused)."""
    try:
        from mlx_lm.models.cache import LRUPromptCache
    except ImportError:
        return None
    return LRUPromptCache


@dataclass
class _Prefill:
    cache: List[Any]
    sampler: RequestSampler
    plan: Optional[PlanState] = None
    #: Its caches are row views of a stacked pass's (batched_prefill.detach copies them out).
    stacked: bool = False


@dataclass
class _Stack:
    """A group's caches stacked along the batch axis, kept from one of its passes to the
    next: stacking copies every row's whole cache, which took 250 ms of a 530 ms pass of
    8 rows x 8 tokens at 200 tokens each on this CPU (and grows with the prompts)."""

    jobs: List[PrefillJob]
    #: Each job's caches as given out after the last pass (row views of `merged`).
    rows: List[List[Any]]
    merged: List[Any]
    #: The jobs' offset after that pass: a job moved since (alone) needs a new stack.
    done: int


@dataclass
class _Decoding:
    uid: int
    max_tokens: int
    eos: frozenset
    detokenize: Callable[[Optional[int], bool], str]
    sampler: RequestSampler
    produced: int = 0
    plan: Optional[PlanState] = None


def _token_list(encoded: Any) -> List[int]:
    """apply_chat_template's result as a flat list of ids, whatever container it came in."""
    if hasattr(encoded, "keys") and "input_ids" in encoded:
        encoded = encoded["input_ids"]
    if hasattr(encoded, "tolist"):
        encoded = encoded.tolist()
    if encoded and isinstance(encoded[0], list):
        encoded = encoded[0]
    return [int(t) for t in encoded]


def _describe_failure(err: BaseException) -> str:
    text = f"{type(err).__name__}: {err}"
    if isinstance(err, MemoryError) or "malloc" in str(err) or "out of memory" in str(err).lower():
        return f"out of memory: {text}"
    return text


class MlxEngine(Engine):
    name = "mlx"

    def __init__(
        self,
        model_ref: str,
        prefill_chunk: int = 4096,
        max_batch: int = 8,
        default_max_tokens: int = 4096,
        importer: Callable[[], SimpleNamespace] = import_mlx,
        env: Optional[Dict[str, str]] = None,
        home: Optional[Path] = None,
        wired_limit: Optional[int] = None,
        prompt_cache_bytes: int = 0,
    ) -> None:
        self.model_ref = model_ref
        self.prompt_cache_bytes = prompt_cache_bytes
        self.prompt_cache: Optional[MlxPromptCache] = None
        #: Why the prompt cache is off although a cap was given (after load), else None.
        self.prompt_cache_reason: Optional[str] = None
        #: False during warm-up: its prompt is neither looked up nor cached.
        self._caching = True
        self.prefill_chunk = prefill_chunk
        self.max_batch = max_batch
        self.default_max_tokens = default_max_tokens
        self.wired_limit = wired_limit
        self._importer = importer
        self._env = env if env is not None else dict(os.environ)
        self._home = home
        self.api: Optional[SimpleNamespace] = None
        self.model: Any = None
        self.tokenizer: Any = None
        self.model_dir: Optional[Path] = None
        self.batching: Optional[Batching] = None
        self.capabilities: Optional[ModelCapabilities] = None
        self.applied_wired_limit: Optional[int] = None
        self._gen: Any = None
        self._sequential: Optional[SequentialDecoder] = None
        self._eos: frozenset = frozenset()
        self._decoding: Dict[str, _Decoding] = {}
        self._by_uid: Dict[int, str] = {}
        #: Tokens from the extra next() a decode step takes for joined prompts, handed out with its own.
        self._held: List[GeneratedToken] = []
        #: Prompts joined the generator since its last next(): the next decode step takes one more.
        self._joined = False
        #: On the CPU: the lookahead deferred while prompts join (deferred_lookahead.py).
        self._lookahead: Optional[deferred_lookahead.DeferrableAsyncEval] = None
        #: Each prefilling thread's last stacked group, reused while the same prompts go on together.
        self._stacks: Dict[int, _Stack] = {}
        #: Prompt tokens prefilled since MLX's buffer cache was last freed.
        self._uncleared_tokens = 0
        #: The thread that loaded the model (mlx-lm's generation_stream belongs to it) and
        #: the stream of each other thread that prefills (MLX streams are per thread).
        self._owner: Optional[threading.Thread] = None
        self._threads = threading.local()

    # ------------------------------------------------------------------ lifecycle
    def load(self, on_progress: LoadProgress) -> None:
        # Resolve first: a missing model is reported before MLX is even imported.
        self.model_dir = resolve_model(self.model_ref, self._env, self._home)
        total = read_total_layers(self.model_dir) or 1
        on_progress(0, total)
        api = self._importer()
        self.api = api
        log.info("loading %s with mlx-lm %s", self.model_dir, api.version)
        # Lazy load, then evaluate layer by layer so the supervisor sees
        # RunnerLoading{layersLoaded,totalLayers} move, as exo reports it.
        model, tokenizer = api.load(str(self.model_dir), lazy=True)
        layers = list(getattr(model, "layers", []) or [])
        total = len(layers) or total
        for index, layer in enumerate(layers):
            api.mx.eval(layer.parameters())
            on_progress(index + 1, total)
        api.mx.eval(model.parameters())
        if not layers:
            on_progress(total, total)
        self.model, self.tokenizer = model, tokenizer
        eos = getattr(tokenizer, "eos_token_ids", None)
        if not eos:
            eos_id = getattr(tokenizer, "eos_token_id", None)
            eos = [eos_id] if eos_id is not None else []
        self._eos = frozenset(int(t) for t in eos)
        self.capabilities = ModelCapabilities(model, tokenizer, self.model_dir.name)
        self.batching = decide_batching(api.make_prompt_cache(model), self._model_type())
        log.info("caches %s: %s", ", ".join(self.batching.cache_types), self.batching.reason or "batched decoding")
        self._start_prompt_cache(api)
        self._start_decoder()
        self._owner = threading.current_thread()
        metal = getattr(api.mx, "metal", None)
        on_cpu = metal is not None and not metal.is_available()
        self.prefill_beside_decode = on_cpu and layer_eval.install(model, api.mx) > 0
        generate = getattr(api, "generate_module", None)
        self._lookahead = deferred_lookahead.install(generate, api.mx) if on_cpu and generate is not None and self._gen is not None else None
        log.info("prefill %s", "on a thread of its own beside the decode steps (CPU)" if self.prefill_beside_decode else "and decode on one thread")

    def _start_prompt_cache(self, api: SimpleNamespace) -> None:
        if self.prompt_cache_bytes <= 0:
            return
        lru_class = getattr(api, "LRUPromptCache", None)
        self.prompt_cache_reason = (
            f"mlx-lm {api.version} has no LRUPromptCache" if lru_class is None else refusal_of(api.make_prompt_cache(self.model))
        )
        if self.prompt_cache_reason is not None:
            log.warning("prompt cache off: %s", self.prompt_cache_reason)
            return
        self.prompt_cache = MlxPromptCache(lru_class, self.prompt_cache_bytes)
        log.info("prompt cache on: %d bytes", self.prompt_cache_bytes)

    def _model_type(self) -> Optional[str]:
        try:
            assert self.model_dir is not None
            return json.loads((self.model_dir / "config.json").read_text()).get("model_type")
        except Exception:
            return None

    def _start_decoder(self) -> None:
        api = self._require_api()
        assert self.batching is not None
        if self.batching.mode == "sequential":
            self._sequential = SequentialDecoder(api.mx, self.model, api.generation_stream)
        else:
            self._gen = api.BatchGenerator(
                self.model,
                # Every prompt that finished its prefill in a step joins on one next(): the
                # prompt is a single token already.
                prefill_batch_size=self.max_batch,
                completion_batch_size=self.max_batch,
                prefill_step_size=self.prefill_chunk,
                max_tokens=self.default_max_tokens,
            )
        # After BatchGenerator: it raises the wired limit to the whole working set.
        self.applied_wired_limit = apply_wired_limit(api.mx, self.wired_limit)

    def concurrency_limit(self) -> Optional[int]:
        if self.batching is not None and self.batching.mode == "sequential":
            return 1
        return None

    def load_details(self) -> Dict[str, Any]:
        if self.batching is None:
            return {}
        return {
            "batching": self.batching.mode,
            "cacheTypes": self.batching.cache_types,
            **({"batchingReason": self.batching.reason} if self.batching.reason else {}),
            **({"promptCacheReason": self.prompt_cache_reason} if self.prompt_cache_reason else {}),
        }

    def features(self) -> Dict[str, bool]:
        if self.capabilities is None:
            return super().features()
        return self.capabilities.features()

    def warmup(self) -> None:
        # The real path, end to end: template, chunked prefill, handoff, two tokens.
        request = self.prepare(
            "warmup", "warmup", GenerationParams([{"role": "user", "content": WARMUP_PROMPT}], 2, 0.0, None), 2
        )
        # Neither looked up nor cached, its finish included: a user's first prompt must
        # not be served the warm-up's.
        self._caching = False
        try:
            started = time.perf_counter()
            self.prefill(request, lambda *_: None)
            elapsed = time.perf_counter() - started
            # A short prompt's rate, overheads included: a conservative first estimate.
            if elapsed > 0:
                self.prefill_rate_hint = max(1.0, request.prompt_tokens / elapsed)
            for _ in range(8):
                if any(t.finish_reason or t.error for t in self.decode_step()) or not self._decoding:
                    break
            self.remove("warmup")
        finally:
            self._caching = True

    def close(self) -> None:
        gen, self._gen = self._gen, None
        if gen is not None and hasattr(gen, "close"):
            gen.close()
        self._sequential = None
        self._stacks.clear()
        self._decoding.clear()
        self._by_uid.clear()
        self._held.clear()
        self.prompt_cache = None
        self.model = None
        self.tokenizer = None
        gc.collect()
        if self.api is not None:
            self._clear_cache()

    def _clear_cache(self) -> None:
        mx = self._require_api().mx
        clear = getattr(mx, "clear_cache", None) or getattr(getattr(mx, "metal", None), "clear_cache", None)
        if clear is not None:
            clear()

    # ------------------------------------------------------------------ requests
    def _require_api(self) -> SimpleNamespace:
        if self.api is None:
            raise EngineUnavailableError("the model is not loaded")
        return self.api

    def _require(self) -> SimpleNamespace:
        if self.api is None or self.model is None or (self._gen is None and self._sequential is None):
            raise EngineUnavailableError("the model is not loaded")
        return self.api

    def _encode(self, messages: List[Dict[str, Any]], tools: Optional[List[Dict[str, Any]]] = None) -> List[int]:
        tokenizer = self.tokenizer
        chat = template_messages(messages)
        if getattr(tokenizer, "has_chat_template", False) or getattr(tokenizer, "chat_template", None):
            extra = {"tools": tools} if tools else {}
            return _token_list(tokenizer.apply_chat_template(chat, add_generation_prompt=True, **extra))
        text = "\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\nassistant:"
        return _token_list(tokenizer.encode(text))

    def prepare(
        self, request_id: str, command_id: str, params: GenerationParams, default_max_tokens: int
    ) -> PreparedRequest:
        self._require()
        assert self.capabilities is not None
        plan = self.capabilities.plan(params.options, [])  # RequestError: the model cannot honour it
        try:
            tokens = self._encode(params.messages, plan.template_tools)
        except Exception as err:
            raise RequestError(f"the chat template could not be applied: {type(err).__name__}: {err}") from err
        if not tokens:
            raise RequestError("the prompt encodes to no tokens")
        return PreparedRequest(
            request_id=request_id,
            command_id=command_id,
            prompt_tokens=len(tokens),
            max_tokens=params.max_tokens if params.max_tokens is not None else default_max_tokens,
            temperature=params.temperature,
            seed=params.seed,
            payload=tokens,
            plan=plan,
        )

    def start_prefill(self, request: PreparedRequest) -> PrefillJob:
        api = self._require()
        tokens: List[int] = request.payload
        temperature = DEFAULT_TEMPERATURE if request.temperature is None else request.temperature
        plan = self._start_plan(request)
        sampler = RequestSampler(api.mx, temperature, request.seed, plan.filters if plan else ())
        # The cache holds tokens[:-1]: the last prompt token goes to the decoder.
        cache, cached = (None, 0)
        if self.prompt_cache is not None and self._caching:
            try:
                cache, cached = self.prompt_cache.fetch(tokens[:-1])
            except Exception as err:  # a cache that fails is a miss, never a failed request
                log.warning("prompt cache lookup failed: %s", _describe_failure(err))
                cache, cached = None, 0
        if cache is None:
            cache = api.make_prompt_cache(self.model)
        else:
            # Evaluated on this thread: the copy is lazy, and the prefill thread cannot
            # evaluate arrays of this thread's streams.
            api.mx.eval([c.state for c in cache])
        request.cached_tokens = cached
        return PrefillJob(request, done=cached, end=len(tokens) - 1, total=len(tokens), state=_Prefill(cache, sampler, plan), cached=cached)

    def prefill_some(self, job: PrefillJob, max_tokens: int) -> int:
        """One chunk, model(chunk[None], cache=...) under the generation stream and its
        cache state evaluated: generate_step's arithmetic, chunk for chunk."""
        api = self._require()
        mx = api.mx
        tokens: List[int] = job.request.payload
        piece = tokens[job.done : job.done + min(max(1, max_tokens), job.remaining)]
        try:
            with mx.stream(self._prefill_stream(api)):
                self.model(mx.array(piece)[None], cache=job.state.cache)
                mx.eval([c.state for c in job.state.cache])
            self._prefilled(len(piece))
        except Exception as err:  # this request's failure (an OOM included), not the runner's
            self._clear_cache()
            raise RequestError(f"prefill failed: {_describe_failure(err)}") from err
        job.done += len(piece)
        job.chunks += 1
        return len(piece)

    def _prefill_stream(self, api: SimpleNamespace) -> Any:
        """mlx-lm's generation stream on the loading thread, a stream of its own on the
        prefill thread (a stream made on one thread cannot be used on another). There a
        pass is evaluated layer by layer while something decodes, whose steps need MLX's
        task slots (layer_eval.py), and whole otherwise (15-25 % faster)."""
        if self._owner is None or threading.current_thread() is self._owner:
            return api.generation_stream
        layer_eval.evaluate_layers_on_this_thread(bool(self._decoding))
        stream = getattr(self._threads, "stream", None)
        if stream is None:
            stream = self._threads.stream = api.mx.new_stream(api.mx.default_device())
        return stream

    def can_prefill_together(self, a: PrefillJob, b: PrefillJob) -> bool:
        """Same offset and the same cache layout (batched_prefill.py): no padding needed."""
        if a.done != b.done or a.state is None or b.state is None:
            return False
        mine = layout(a.state.cache)
        return mine is not None and mine == layout(b.state.cache)

    def prefill_together(self, jobs: List[PrefillJob], tokens_each: int) -> List[Tuple[PrefillJob, RequestError]]:
        """One pass over the same chunk length of every prompt, their caches stacked along
        the batch axis and split back after it (batched_prefill.py)."""
        if len(jobs) < 2:
            return super().prefill_together(jobs, tokens_each)
        api = self._require()
        mx = api.mx
        n = min([max(1, tokens_each)] + [job.remaining for job in jobs])
        tokens = [job.request.payload[job.done : job.done + n] for job in jobs]
        try:
            with mx.stream(self._prefill_stream(api)):
                merged = self._stacked(jobs, mx)
                self.model(mx.array(tokens), cache=merged)
                mx.eval([c.state for c in merged])
            self._prefilled(n * len(jobs))
        except Exception as err:
            # One pass cannot tell whose prompt failed (an out-of-memory may also be the
            # batch's size): each goes alone, so a failure is its own request's.
            self._stacks.pop(threading.get_ident(), None)
            self._clear_cache()
            log.warning("a batched prefill failed (%s): its prompts prefill one by one", _describe_failure(err))
            return super().prefill_together(jobs, n)
        with mx.stream(self._prefill_stream(api)):
            rows = [[unstack(cache, index) for cache in merged] for index in range(len(jobs))]
            # Evaluated here (views, no copy): a lazy array can only be evaluated on its
            # stream's thread, and the rows are read on the loop's thread after the chunk.
            mx.eval([c.state for row in rows for c in row])
        for job, row in zip(jobs, rows):
            job.state.cache = row
            job.state.stacked = True
            job.done += n
            job.chunks += 1
        self._stacks[threading.get_ident()] = _Stack(list(jobs), rows, merged, jobs[0].done)
        return []

    def _prefilled(self, tokens: int) -> None:
        """Frees MLX's buffer cache once every `prefill_chunk` prompt tokens, as generate_step
        does after each of its prefill steps. Not after every interleaved chunk: those are
        tens of tokens, and a pass whose buffers come fresh from the system was 10-15 %
        slower on this CPU (8 rows x 8 tokens: 165 against 196 tokens/s)."""
        self._uncleared_tokens += tokens
        if self._uncleared_tokens >= self.prefill_chunk:
            self._uncleared_tokens = 0
            self._clear_cache()

    def _stacked(self, jobs: List[PrefillJob], mx: Any) -> List[Any]:
        """The jobs' caches stacked: the last pass's when the same jobs still hold its rows."""
        last = self._stacks.pop(threading.get_ident(), None)
        if (
            last is not None
            and len(last.jobs) == len(jobs)
            and all(a is b and a.state.cache is row and a.done == last.done for a, b, row in zip(last.jobs, jobs, last.rows))
        ):
            return last.merged
        return [stack([job.state.cache[i] for job in jobs], mx) for i in range(len(jobs[0].state.cache))]

    def _unstack_job(self, job: PrefillJob) -> None:
        """A job leaves its group (complete or dropped): the group's stack is let go."""
        for thread, kept in list(self._stacks.items()):
            if any(j is job for j in kept.jobs):
                del self._stacks[thread]

    def drop_prefill(self, job: PrefillJob) -> None:
        self._unstack_job(job)
        super().drop_prefill(job)

    def finish_prefill(self, job: PrefillJob) -> None:
        self._require()
        request = job.request
        tokens: List[int] = request.payload
        cache, sampler, plan = job.state.cache, job.state.sampler, job.state.plan
        if job.state.stacked:
            mx = self._require_api().mx
            cache = [detach(c, mx) for c in cache]
        self._unstack_job(job)
        job.state = None
        # A prefill's end frees the buffers its passes left, as generate_step's last step does.
        self._uncleared_tokens = 0
        self._clear_cache()
        if self.prompt_cache is not None and self._caching:
            try:
                self.prompt_cache.insert(tokens[:-1], cache)
            except Exception as err:
                log.warning("prompt cache insert failed: %s", _describe_failure(err))
        try:
            if self._sequential is not None:
                uid = self._sequential.insert(tokens[-1], cache, sampler, plan.processors if plan else ())
            else:
                extra = {"logits_processors": [plan.processors]} if plan and plan.processors else {}
                # all_tokens: the generator keeps the tokens its cache holds, so a finished
                # request's cache (prompt and reply) can be keyed for the prompt cache.
                uid = int(
                    self._gen.insert(
                        [[tokens[-1]]], max_tokens=[request.max_tokens], caches=[cache], samplers=[sampler],
                        all_tokens=[list(tokens[:-1])], **extra,
                    )[0]
                )
        except Exception as err:
            raise RequestError(f"the request could not join the batch: {_describe_failure(err)}") from err
        self._by_uid[uid] = request.request_id
        self._decoding[request.request_id] = _Decoding(
            uid=uid, max_tokens=request.max_tokens, eos=self._eos, detokenize=self._new_detokenizer(), sampler=sampler,
            plan=plan,
        )
        if self._gen is not None:
            self._joined = True

    def _start_plan(self, request: PreparedRequest) -> Optional[PlanState]:
        """The request's filters, logits processors and tool-call stream (None: a plain request)."""
        plan = request.plan
        if plan is None:
            return None
        # The batch's processors see the prompt already (insert's all_tokens, given for the
        # prompt cache, starts their context with it); the sequential decoder's start at the
        # last prompt token, so the penalties get the prompt's tail prepended there only.
        plan.prompt_tail = list(request.payload[-PENALTY_CONTEXT - 1 : -1]) if self._sequential is not None else []
        try:
            return plan.start()
        except Exception as err:
            raise RequestError(f"the request's decoding could not be set up: {type(err).__name__}: {err}") from err

    def prompt_cache_stats(self) -> Optional[Dict[str, int]]:
        return self.prompt_cache.stats() if self.prompt_cache is not None else None

    def _new_detokenizer(self) -> Callable[[Optional[int], bool], str]:
        """A per-request (token, last) -> new text function (mlx-lm hands out a fresh
        streaming detokenizer on every access)."""
        detok = self.tokenizer.detokenizer
        detok.reset()

        def streaming(token: Optional[int], last: bool) -> str:
            if token is not None:
                detok.add_token(token)
            if last:
                detok.finalize()
            return detok.last_segment

        return streaming

    def decode_step(self) -> List[GeneratedToken]:
        self._require()
        # BatchGenerator computes a new request's first token on the next() after
        # insert and returns it on the one after. Taking that first next() here, for
        # every prompt that joined since the last step at once, puts their first
        # tokens in this step; the other requests' tokens it returns go out with them.
        # On the CPU both next()s leave their lookahead pass to the next step
        # (deferred_lookahead.py): the first tokens come one pass sooner.
        joined, self._joined = self._joined, False
        with self._lookahead.deferring() if joined and self._lookahead is not None else nullcontext():
            if joined:
                first = self._advance()  # before reading _held: a failed step replaces it
                self._held.extend(first)
            held, self._held = self._held, []
            return held + self._advance()

    def _advance(self) -> List[GeneratedToken]:
        """One next() of the decoder, as tokens (or errors) per request."""
        try:
            responses = self._sequential.next() if self._sequential is not None else self._gen.next()[1]
        except Exception as err:
            return self._fail_batch(err)
        out: List[GeneratedToken] = []
        for response in responses:
            request_id = self._by_uid.get(int(response.uid))
            state = self._decoding.get(request_id) if request_id is not None else None
            if state is None:
                continue
            error = state.sampler.error or (state.plan.error if state.plan else None)
            if error is not None:
                out.append(GeneratedToken(request_id, -1, "", None, error=error))
                self.remove(request_id)
                continue
            out.append(self._token(request_id, state, int(response.token), response.finish_reason, response))
        return out

    def _token(
        self, request_id: str, state: _Decoding, token: int, finish: Optional[str], response: Any = None
    ) -> GeneratedToken:
        state.produced += 1
        if token in state.eos:
            finish, text = "stop", state.detokenize(None, True)
        else:
            if finish is None and state.produced >= state.max_tokens:
                finish = "length"
            text = state.detokenize(token, finish is not None)
        text, finish, stop_sequence = self._apply_stops(state, text, finish)
        if finish is not None:
            finish = "stop" if finish == "stop" else "length"
            # At once, a stop sequence's end included: the slot takes no further decode.
            self._finish(request_id, response)
        stream = state.plan.tool_stream if state.plan else None
        if stream is None:
            return GeneratedToken(request_id, token, text, finish, stop_sequence=stop_sequence)
        text, calls = stream.feed(text)
        if finish is not None:
            held, last = stream.finish(stopped=finish == "stop")
            text, calls = text + held, calls + last
            if stream.unparsed:
                log.warning("request %s: a tool call did not parse (%s)", request_id, stream.unparsed)
            if finish == "stop" and stream.calls_made > 0:
                finish = "tool_calls"
        return GeneratedToken(
            request_id, token, text, finish, tool_calls=calls or None, stop_sequence=stop_sequence if finish == "stop" else None
        )

    @staticmethod
    def _apply_stops(state: _Decoding, text: str, finish: Optional[str]) -> "tuple[str, Optional[str], Optional[str]]":
        """(text, finish, stop sequence) after the request's stop sequences: the text
        before a match, and finish 'stop' naming it; at a natural end, the held-back
        text that turned out to be no stop sequence."""
        watch = state.plan.stop_watch if state.plan else None
        if watch is None:
            return text, finish, None
        text = watch.feed(text)
        if watch.matched is not None:
            return text, "stop", watch.matched
        if finish is not None:
            text += watch.flush()
        return text, finish, None

    def _finish(self, request_id: str, response: Any) -> None:
        """Drops a finished request (the generator may have dropped it already); its cache,
        prompt and reply, goes to the prompt cache, so a chat's next turn, which sends
        the reply back, finds it (mlx_lm.server does the same)."""
        state = self._decoding.get(request_id)
        if self.prompt_cache is not None and self._caching and state is not None and self._gen is not None:
            try:
                if getattr(response, "prompt_cache", None) is not None:
                    self.prompt_cache.insert(list(response.all_tokens), response.prompt_cache)
                else:
                    for cache, tokens in self._gen.remove([state.uid], return_prompt_caches=True).values():
                        self.prompt_cache.insert(list(tokens), cache)
            except Exception as err:  # the cache is an optimisation: the request still ends well
                log.warning("caching a finished request failed: %s", _describe_failure(err))
        self.remove(request_id)

    def _fail_batch(self, err: BaseException) -> List[GeneratedToken]:
        """A step that failed as a whole: its requests end with the error, the decoder is
        rebuilt and the runner keeps serving."""
        message = f"decode step failed: {_describe_failure(err)}"
        log.error("%s (%d requests end with it)", message, len(self._decoding))
        failed = [GeneratedToken(request_id, -1, "", None, error=message) for request_id in self._decoding]
        self._held = [t for t in self._held if t.request_id not in self._decoding]
        self._joined = False
        self._decoding.clear()
        self._by_uid.clear()
        gen, self._gen = self._gen, None
        if gen is not None:
            gen.close()
        self._sequential = None
        gc.collect()
        self._clear_cache()
        self._start_decoder()
        return failed

    def remove(self, request_id: str) -> None:
        state = self._decoding.pop(request_id, None)
        if state is None:
            return
        self._by_uid.pop(state.uid, None)
        if self._sequential is not None:
            self._sequential.remove(state.uid)
        elif self._gen is not None:
            self._gen.remove([state.uid])

    def batch_size(self) -> int:
        return len(self._decoding)

    def peak_memory_bytes(self) -> int:
        if self.api is None:
            return 0
        mx = self.api.mx
        getter = getattr(mx, "get_peak_memory", None) or getattr(getattr(mx, "metal", None), "get_peak_memory", None)
        return int(getter()) if getter is not None else 0
