"""The `test` engine: deterministic, standard library only, for CI.

It does no inference. It counts prompt tokens with the rule of shared/token-count.ts,
produces the sim's deterministic tokens (token_stream.py) and spends time-scaled
durations for admission, prefill chunks and decode steps, so the step loop above it
behaves like a real runner with known timings. Defaults are the sim's Llama 3.2 1B.

Tools are scripted as the sim scripts them: a request whose toolChoice is 'required' or
a named function gets one call (that function, or the first tool, with arguments
`{}`) as its first token, finish reason 'tool_calls'; 'auto' gets ordinary text.
Structured output is not simulated here: such a request fails with a clear error.

Its prompt cache (prompt_cache.SimPromptCache) matches the prompt's words and template
tokens; a cached prefix costs no prefill time, and each entry weighs what the KV
cache of its tokens would.
"""
from __future__ import annotations

import resource
import sys
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from .engine import Engine, GeneratedToken, LoadProgress, PrefillJob, PreparedRequest, RequestError
from .pacer import Pacer
from .prompt_cache import SimPromptCache
from .protocol import GenerationParams
from .token_count import prompt_tokens
from .token_stream import hash32, plan_completion, token_source


@dataclass
class TestTimings:
    """Seconds at time scale 1 (the sim catalog's meaning of each field)."""

    admit_overhead_s: float = 0.07
    prefill_fixed_s: float = 0.154
    prefill_tokens_per_s: float = 12_000.0
    decode_step_s: float = 0.004
    batch_step_growth: float = 0.08
    total_layers: int = 16
    load_s: float = 0.8
    warmup_s: float = 0.2
    #: Bytes of KV cache per prompt token (Llama 3.2 1B: 16 layers x 8 KV heads x 64 x K,V x fp16).
    kv_bytes_per_token: int = 32768


@dataclass
class _Decoding:
    length: int
    finish_reason: str
    next_token: Callable[[], Tuple[str, int]]
    produced: int = 0
    #: The scripted call of a forced tool choice, sent as the first (and last) token.
    tool_call: Optional[Dict[str, str]] = None


class TestEngine(Engine):
    name = "test"

    def __init__(
        self,
        timings: Optional[TestTimings] = None,
        time_scale: float = 1.0,
        prefill_chunk: int = 4096,
        pacer: Optional[Pacer] = None,
        prompt_cache_bytes: int = 0,
    ) -> None:
        self.timings = timings or TestTimings()
        self.prompt_cache = (
            SimPromptCache(prompt_cache_bytes, self.timings.kv_bytes_per_token) if prompt_cache_bytes > 0 else None
        )
        self.time_scale = time_scale
        self.prefill_chunk = prefill_chunk
        self.pacer = pacer or Pacer()
        self._batch: Dict[str, _Decoding] = {}
        self.loaded = False
        self.closed = False

    def _spend(self, seconds: float) -> None:
        self.pacer.wait(seconds * self.time_scale)

    def pause(self, seconds: float) -> None:
        super().pause(seconds)
        # The pause is not simulated work: no credit for the next chunk.
        self.pacer.resync()

    def load(self, on_progress: LoadProgress) -> None:
        total = max(1, self.timings.total_layers)
        self.pacer.resync()
        on_progress(0, total)
        for layer in range(1, total + 1):
            self._spend(self.timings.load_s / total)
            on_progress(layer, total)
        self.loaded = True

    def warmup(self) -> None:
        self.pacer.resync()
        self._spend(self.timings.warmup_s)

    def features(self) -> Dict[str, bool]:
        return {"tools": True, "structuredOutput": False}

    def prepare(
        self, request_id: str, command_id: str, params: GenerationParams, default_max_tokens: int
    ) -> PreparedRequest:
        if params.options.response_format is not None:
            raise RequestError("the test engine does not do structured output (responseFormat)")
        forced = params.options.forced_tool
        if forced is not None and forced not in {t.name for t in params.options.tools}:
            raise RequestError(f"toolChoice names the function {forced!r}, which is not among the request's tools")
        self.pacer.resync()
        # CPU side of admission (chat template, tokenizer).
        self._spend(self.timings.admit_overhead_s)
        tokens = prompt_tokens(params.messages)
        return PreparedRequest(
            request_id=request_id,
            command_id=command_id,
            prompt_tokens=len(tokens),
            max_tokens=params.max_tokens if params.max_tokens is not None else default_max_tokens,
            temperature=params.temperature,
            seed=params.seed,
            payload=(params, tokens),
        )

    def start_prefill(self, request: PreparedRequest) -> PrefillJob:
        tokens = request.payload[1]
        if self.prompt_cache is not None:
            request.cached_tokens = self.prompt_cache.fetch(tokens)
        return PrefillJob(request, done=request.cached_tokens, end=len(tokens), total=len(tokens), cached=request.cached_tokens)

    def prefill_some(self, job: PrefillJob, max_tokens: int) -> int:
        tokens = min(max(1, max_tokens), job.remaining)
        # The fixed part (a prompt's first chunk) is paid once per prompt, hit or miss.
        fixed = self.timings.prefill_fixed_s if job.chunks == 0 else 0.0
        self._spend(fixed + tokens / self.timings.prefill_tokens_per_s)
        job.done += tokens
        job.chunks += 1
        return tokens

    def finish_prefill(self, job: PrefillJob) -> None:
        request = job.request
        params, tokens = request.payload
        if self.prompt_cache is not None:
            self.prompt_cache.insert(tokens)
        # Seeded by the command id (or the seed), as the sim's stream is.
        length, finish = plan_completion(params.max_tokens, params.seed, request.command_id)
        if length > request.max_tokens:
            length, finish = request.max_tokens, "length"
        decoding = _Decoding(length, finish, token_source(params.seed, request.command_id))
        if params.options.must_call:
            name = params.options.forced_tool or params.options.tools[0].name
            decoding.tool_call = {"id": f"call_{hash32(request.command_id):08x}", "name": name, "arguments": "{}"}
            decoding.length, decoding.finish_reason = 1, "tool_calls"
        self._batch[request.request_id] = decoding

    def prompt_cache_stats(self) -> Optional[Dict[str, int]]:
        return self.prompt_cache.stats() if self.prompt_cache is not None else None

    def decode_step(self) -> List[GeneratedToken]:
        if not self._batch:
            return []
        size = len(self._batch)
        self._spend(self.timings.decode_step_s * (1 + self.timings.batch_step_growth * (size - 1)))
        out: List[GeneratedToken] = []
        for request_id, state in list(self._batch.items()):
            text, token_id = state.next_token()
            state.produced += 1
            finish = state.finish_reason if state.produced >= state.length else None
            if state.tool_call is not None:
                out.append(GeneratedToken(request_id, token_id, "", finish, tool_calls=[state.tool_call]))
            else:
                out.append(GeneratedToken(request_id, token_id, text, finish))
            if finish is not None:
                del self._batch[request_id]
        return out

    def remove(self, request_id: str) -> None:
        self._batch.pop(request_id, None)

    def batch_size(self) -> int:
        return len(self._batch)

    def peak_memory_bytes(self) -> int:
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        # ru_maxrss is in kilobytes on Linux and in bytes on macOS.
        return int(peak if sys.platform == "darwin" else peak * 1024)

    def close(self) -> None:
        self._batch.clear()
        self.closed = True
