"""The `mlx` engine: real models on Apple silicon through mlx-lm, used as a library.

mlx-lm does the work: `load` (weights, tokenizer), the tokenizer's chat template,
`stream_generate` with a prompt-progress callback for the chunked prefill, the
sampler from `make_sampler`, and `BatchGenerator` for batched decoding. This module
only wires them to the step loop, the way exo's runner does (exo-explore/exo,
src/exo/worker/engines/mlx/generator): prefill each new prompt on its own KV cache
with stream_generate (max_tokens=1, progress after every chunk, a cancel raises out of
the callback), trim the cache by two tokens and hand the last two prompt tokens plus
the cache to BatchGenerator, which then decodes it with the rest of the batch.

mlx and mlx_lm are imported lazily, inside `load`, so this module imports anywhere
(the runner, its tests, a Linux CI machine). mlx-lm's API moves between releases;
the few places that differ are probed once at load (`_probe_batch_api`) and the
minimum is stated in the error when it is not met.
"""
from __future__ import annotations

import gc
import inspect
import logging
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, List, Optional

from .engine import (
    Engine,
    EngineUnavailableError,
    GeneratedToken,
    LoadProgress,
    PrefillProgress,
    PreparedRequest,
    RequestError,
)
from .model_resolver import read_total_layers, resolve_model
from .protocol import GenerationParams

log = logging.getLogger("exobar.mlx.engine")

#: exo's sampling default when a request sets no temperature.
DEFAULT_TEMPERATURE = 0.7
#: The oldest mlx-lm whose BatchGenerator.insert accepts prefilled caches.
MIN_MLX_LM = "0.30"
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
        from mlx_lm.generate import BatchGenerator, stream_generate
        from mlx_lm.models.cache import can_trim_prompt_cache, make_prompt_cache, trim_prompt_cache
        from mlx_lm.sample_utils import make_sampler
    except ImportError as err:
        raise EngineUnavailableError(
            f"MLX is not available to {sys.executable}: {err}. The mlx engine needs macOS on Apple "
            f"silicon with mlx-lm >= {MIN_MLX_LM} installed (exobar's 'Set up MLX runtime' does this)."
        ) from err
    return SimpleNamespace(
        mx=mx,
        version=getattr(mlx_lm, "__version__", "unknown"),
        load=load,
        BatchGenerator=BatchGenerator,
        stream_generate=stream_generate,
        make_prompt_cache=make_prompt_cache,
        can_trim_prompt_cache=can_trim_prompt_cache,
        trim_prompt_cache=trim_prompt_cache,
        make_sampler=make_sampler,
    )


@dataclass
class _Decoding:
    uid: int
    max_tokens: int
    eos: frozenset
    detokenize: Callable[[int, bool], str]
    produced: int = 0


@dataclass
class _BatchApi:
    insert_takes_samplers: bool
    kwargs: Dict[str, Any] = field(default_factory=dict)


def _accepts(fn: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _probe_batch_api(api: SimpleNamespace, max_batch: int, prefill_chunk: int, default_max_tokens: int) -> _BatchApi:
    """The BatchGenerator arguments this mlx-lm release understands."""
    if not _accepts(api.BatchGenerator.insert, "caches"):
        raise EngineUnavailableError(
            f"mlx-lm {api.version} is too old: BatchGenerator.insert cannot take a prefilled cache "
            f"(needs mlx-lm >= {MIN_MLX_LM}; upgrade with `pip install -U mlx-lm`)"
        )
    wanted = {
        # One prompt per prefill batch: a new request joins the decode batch as soon as
        # its (already prefilled) cache is inserted, never waiting for companions.
        "prefill_batch_size": 1,
        "completion_batch_size": max_batch,
        "prefill_step_size": prefill_chunk,
        "max_tokens": default_max_tokens,
    }
    init = api.BatchGenerator.__init__
    kwargs = {k: v for k, v in wanted.items() if _accepts(init, k)}
    return _BatchApi(insert_takes_samplers=_accepts(api.BatchGenerator.insert, "samplers"), kwargs=kwargs)


def _token_list(encoded: Any) -> List[int]:
    """apply_chat_template's result as a flat list of ids, whatever container it came in."""
    if hasattr(encoded, "keys") and "input_ids" in encoded:
        encoded = encoded["input_ids"]
    if hasattr(encoded, "tolist"):
        encoded = encoded.tolist()
    if encoded and isinstance(encoded[0], list):
        encoded = encoded[0]
    return [int(t) for t in encoded]


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
    ) -> None:
        self.model_ref = model_ref
        self.prefill_chunk = prefill_chunk
        self.max_batch = max_batch
        self.default_max_tokens = default_max_tokens
        self._importer = importer
        self._env = env if env is not None else dict(os.environ)
        self._home = home
        self.api: Optional[SimpleNamespace] = None
        self.model: Any = None
        self.tokenizer: Any = None
        self.model_dir: Optional[Path] = None
        self._gen: Any = None
        self._batch_api: Optional[_BatchApi] = None
        self._fresh_detokenizers = False
        self._eos: frozenset = frozenset()
        self._decoding: Dict[str, _Decoding] = {}
        self._by_uid: Dict[int, str] = {}

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
        # Older mlx-lm hands out one shared detokenizer; newer a fresh one per access.
        self._fresh_detokenizers = tokenizer.detokenizer is not tokenizer.detokenizer
        self._batch_api = _probe_batch_api(api, self.max_batch, self.prefill_chunk, self.default_max_tokens)
        if not self._batch_api.insert_takes_samplers:
            log.warning("mlx-lm %s takes no per-request sampler: every request decodes greedily", api.version)
        self._gen = api.BatchGenerator(model, **self._batch_api.kwargs)

    def warmup(self) -> None:
        api = self._require()
        tokens = self._encode([{"role": "user", "content": WARMUP_PROMPT}])
        sampler = api.make_sampler(temp=0.0)
        for _ in api.stream_generate(self.model, self.tokenizer, api.mx.array(tokens), max_tokens=4, sampler=sampler):
            pass

    def close(self) -> None:
        gen, self._gen = self._gen, None
        if gen is not None and hasattr(gen, "close"):
            gen.close()
        self._decoding.clear()
        self._by_uid.clear()
        self.model = None
        self.tokenizer = None
        gc.collect()
        if self.api is not None:
            mx = self.api.mx
            clear = getattr(mx, "clear_cache", None) or getattr(getattr(mx, "metal", None), "clear_cache", None)
            if clear is not None:
                clear()

    # ------------------------------------------------------------------ requests
    def _require(self) -> SimpleNamespace:
        if self.api is None or self.model is None or self._gen is None:
            raise EngineUnavailableError("the model is not loaded")
        return self.api

    def _encode(self, messages: List[Dict[str, str]]) -> List[int]:
        tokenizer = self.tokenizer
        # Most chat templates know no "developer" role; it means system.
        chat = [{"role": "system" if m["role"] == "developer" else m["role"], "content": m["content"]} for m in messages]
        if getattr(tokenizer, "has_chat_template", False) or getattr(tokenizer, "chat_template", None):
            return _token_list(tokenizer.apply_chat_template(chat, add_generation_prompt=True))
        text = "\n".join(f"{m['role']}: {m['content']}" for m in chat) + "\nassistant:"
        return _token_list(tokenizer.encode(text))

    def prepare(
        self, request_id: str, command_id: str, params: GenerationParams, default_max_tokens: int
    ) -> PreparedRequest:
        self._require()
        try:
            tokens = self._encode(params.messages)
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
        )

    def prefill(self, request: PreparedRequest, on_chunk: PrefillProgress) -> None:
        api = self._require()
        assert self._batch_api is not None
        tokens: List[int] = request.payload
        total = len(tokens)
        if request.seed is not None:
            # One global generator: with several requests in the batch a seed makes a
            # run repeatable only when it decodes alone.
            api.mx.random.seed(request.seed)
        temperature = DEFAULT_TEMPERATURE if request.temperature is None else request.temperature
        sampler = api.make_sampler(temp=temperature)
        cache = api.make_prompt_cache(self.model)

        if total > 2 and api.can_trim_prompt_cache(cache):
            head = api.mx.array(tokens[:-1])

            def progress(processed: int, of: int) -> None:
                # stream_generate reports (0, n) first, then after every chunk, then (n, n)
                # once the first token is computed: the boundary before any token.
                if processed <= 0:
                    return
                on_chunk(total if processed >= of else processed, total)

            # max_tokens=1 fills the cache with the prompt (plus one throwaway token);
            # a PrefillCancelled raised by on_chunk leaves through this loop.
            for _ in api.stream_generate(
                self.model,
                self.tokenizer,
                head,
                max_tokens=1,
                sampler=api.make_sampler(temp=0.0),
                prompt_cache=cache,
                prefill_step_size=self.prefill_chunk,
                prompt_progress_callback=progress,
            ):
                break
            # The cache now holds tokens[:-1] plus the throwaway token; drop two so the
            # batch re-reads the last two prompt tokens and samples the first real token.
            api.trim_prompt_cache(cache, 2)
            tail = tokens[-2:]
        else:
            if total > 2:
                log.warning("this model's cache cannot be trimmed: BatchGenerator prefills it whole (no chunk progress)")
            tail = tokens
        on_chunk(total, total)

        kwargs: Dict[str, Any] = {"max_tokens": [request.max_tokens], "caches": [cache]}
        if self._batch_api.insert_takes_samplers:
            kwargs["samplers"] = [sampler]
        uid = int(self._gen.insert([tail], **kwargs)[0])
        self._by_uid[uid] = request.request_id
        self._decoding[request.request_id] = _Decoding(
            uid=uid, max_tokens=request.max_tokens, eos=self._eos, detokenize=self._new_detokenizer()
        )

    def _new_detokenizer(self) -> Callable[[int, bool], str]:
        """A per-request (token, last) -> new text function."""
        tokenizer = self.tokenizer
        if self._fresh_detokenizers:
            detok = tokenizer.detokenizer
            detok.reset()

            def streaming(token: Optional[int], last: bool) -> str:
                if token is not None:
                    detok.add_token(token)
                if last:
                    detok.finalize()
                return detok.last_segment

            return streaming
        # Shared detokenizer (older mlx-lm): decode the request's tokens so far and send
        # what is new, holding back an incomplete UTF-8 sequence until it completes.
        ids: List[int] = []
        sent = [0]

        def incremental(token: Optional[int], last: bool) -> str:
            if token is not None:
                ids.append(token)
            text = tokenizer.decode(ids)
            if not last and text.endswith("\ufffd"):
                return ""
            new = text[sent[0]:]
            sent[0] = len(text)
            return new

        return incremental

    def decode_step(self) -> List[GeneratedToken]:
        self._require()
        result = self._gen.next()
        # Newer mlx-lm returns (prompt responses, generation responses).
        responses = result[-1] if isinstance(result, tuple) else result
        out: List[GeneratedToken] = []
        for response in responses or []:
            request_id = self._by_uid.get(int(response.uid))
            state = self._decoding.get(request_id) if request_id is not None else None
            if state is None:
                continue
            token = int(response.token)
            state.produced += 1
            finish = response.finish_reason
            if token in state.eos:
                finish, text = "stop", state.detokenize(None, True)
            else:
                if finish is None and state.produced >= state.max_tokens:
                    finish = "length"
                text = state.detokenize(token, finish is not None)
            if finish is not None:
                finish = "stop" if finish == "stop" else "length"
                if response.finish_reason is None:
                    # We ended it (EOS or length), so the generator must drop it too.
                    self._gen.remove([state.uid])
                self._forget(request_id)
            out.append(GeneratedToken(request_id, token, text, finish))
        return out

    def _forget(self, request_id: str) -> None:
        state = self._decoding.pop(request_id, None)
        if state is not None:
            self._by_uid.pop(state.uid, None)

    def remove(self, request_id: str) -> None:
        state = self._decoding.get(request_id)
        if state is None:
            return
        if self._gen is not None:
            self._gen.remove([state.uid])
        self._forget(request_id)

    def batch_size(self) -> int:
        return len(self._decoding)

    def peak_memory_bytes(self) -> int:
        if self.api is None:
            return 0
        mx = self.api.mx
        getter = getattr(mx, "get_peak_memory", None) or getattr(getattr(mx, "metal", None), "get_peak_memory", None)
        return int(getter()) if getter is not None else 0
