"""The engine interface: what the step loop needs from an inference backend.

The step loop (step_loop.py) owns the protocol semantics: when tasks are read, when
cancels are checked, which events go out in which order. An engine only does the
work: load, warm up, tokenize, prefill one prompt in chunks, run one batched decode
step. Two engines implement it: `mlx` (mlx-lm on Apple silicon) and `test`
(deterministic, standard library only, for CI).

A prefill is a job the loop drives chunk by chunk (start_prefill, prefill_some,
finish_prefill or drop_prefill): the exo schedule runs a whole job inside one step
(`prefill`), the interleaved schedule one chunk per step between decode steps. A job
starts from the longest prefix the engine's prompt cache holds (when it has one) and
is cached only when it finishes, so a cancelled partial prefill is never served.
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

from .protocol import GenerationParams

#: Called after each prefill chunk with (processed, total) prompt tokens. It may raise
#: PrefillCancelled, which the engine must let through after dropping the request.
PrefillProgress = Callable[[int, int], None]
#: Called while loading with (layersLoaded, totalLayers).
LoadProgress = Callable[[int, int], None]


class PrefillCancelled(BaseException):
    """Raised from a prefill-progress callback to stop a prefill at a chunk boundary.

    A BaseException, like exo's, so library code that catches Exception while
    prefilling cannot swallow it.
    """


class EngineError(Exception):
    """A failure the runner reports as an ErrorChunk and a failed status."""


class ModelNotFoundError(EngineError):
    """The model is neither a local directory nor in a local cache. Never downloaded."""


class EngineUnavailableError(EngineError):
    """The engine cannot run here (e.g. mlx/mlx-lm missing or too old)."""


class RequestError(EngineError):
    """This one request cannot be served (e.g. its chat template failed); others go on."""


@dataclass
class PreparedRequest:
    """A tokenized request, ready to prefill."""

    request_id: str
    command_id: str
    prompt_tokens: int
    max_tokens: int
    temperature: Optional[float]
    seed: Optional[int]
    #: Engine-private data (the token ids for mlx, the prompt text for the test engine).
    payload: Any = None
    #: Engine-private decoding plan: tools, grammar, sampling (request_plan.py for mlx).
    plan: Any = None
    #: Prompt tokens served from the prompt cache (set when its prefill starts; 0 on a miss).
    cached_tokens: int = 0


@dataclass
class PrefillJob:
    """One prompt's prefill in progress: `done` prompt tokens are in its cache (the
    cached ones included); it is complete at `end` (the mlx engine leaves the last token
    to the decoder); progress is reported against `total`, the prompt's tokens."""

    request: PreparedRequest
    done: int
    end: int
    total: int
    #: Engine-private state (the cache being filled, the sampler).
    state: Any = None
    #: Prefill chunks run so far.
    chunks: int = 0

    #: Prompt tokens served from the prompt cache when it started.
    cached: int = 0

    @property
    def remaining(self) -> int:
        return max(0, self.end - self.done)

    def progress(self) -> "tuple[int, int]":
        """PrefillProgressChunk's (processed, total): the tokens prefilled, the cached ones
        left out, so a supervisor's learnt prefill rate stays true after a hit."""
        return self.done - self.cached, self.total - self.cached


@dataclass
class GeneratedToken:
    request_id: str
    token_id: int
    text: str
    #: 'stop', 'length' or 'tool_calls' on the request's last token, else None.
    finish_reason: Optional[str] = None
    #: Set when this request failed in the step (its sampler, or the step as a whole):
    #: the request ends with this error and the others go on. token_id/text are unused.
    error: Optional[str] = None
    #: Tool calls this token completed [{id, name, arguments}]: a ToolCallChunk before it.
    tool_calls: Optional[List[Dict[str, str]]] = None
    #: With finish 'stop': the request's stop sequence that ended it (None: the model did).
    stop_sequence: Optional[str] = None


class Engine(ABC):
    #: 'mlx' or 'test', as reported in the hello.
    name: str = "engine"
    #: Real seconds per reported second in the stats: the test engine reports simulated
    #: throughput (as the sim does), so its time scale divides the measured durations.
    time_scale: float = 1.0

    @abstractmethod
    def load(self, on_progress: LoadProgress) -> None:
        """Loads the model, reporting layers as they load. Raises EngineError."""

    @abstractmethod
    def warmup(self) -> None:
        """Runs a tiny generation so the first real request pays no compile cost."""

    @abstractmethod
    def prepare(
        self, request_id: str, command_id: str, params: GenerationParams, default_max_tokens: int
    ) -> PreparedRequest:
        """Applies the chat template and tokenizes. Raises RequestError."""

    #: Prompt tokens per prefill chunk, read before every chunk: the step loop sets it
    #: from the supervisor's pacing (SetPrefillPacing).
    prefill_chunk: int = 4096

    #: A first prefill rate (tokens/s) measured during warm-up, or None: the interleaved
    #: schedule sizes its first chunk from it.
    prefill_rate_hint: Optional[float] = None

    #: Can prefill passes run on a second thread while the loop's thread runs decode steps
    #: (interleaved_loop.py)? Only `prefill_some`/`prefill_together` are called there, and
    #: only on jobs the loop's thread leaves alone until the pass is over.
    prefill_beside_decode: bool = False

    def enter_prefill_thread(self) -> None:
        """Called once on the prefill thread, before its first chunk."""

    def prefill(self, request: PreparedRequest, on_chunk: PrefillProgress) -> None:
        """Prefills the prompt in chunks of `prefill_chunk` (read anew before each), calling
        on_chunk after each one but the last, then once with processed == total before the
        first token (both counting the tokens prefilled, not those the cache served). On return the request decodes with the batch. If on_chunk raises
        PrefillCancelled the request is dropped (never cached) and the exception propagates."""
        job = self.start_prefill(request)
        try:
            while job.remaining > 0:
                self.prefill_some(job, self.prefill_chunk)
                if job.remaining > 0:
                    on_chunk(*job.progress())
            on_chunk(job.total - job.cached, job.total - job.cached)
        except BaseException:
            self.drop_prefill(job)
            raise
        self.finish_prefill(job)

    @abstractmethod
    def start_prefill(self, request: PreparedRequest) -> PrefillJob:
        """Starts a prefill, from the prompt cache's longest prefix when there is one
        (setting request.cached_tokens). Raises RequestError."""

    @abstractmethod
    def prefill_some(self, job: PrefillJob, max_tokens: int) -> int:
        """Runs one prefill chunk of at most `max_tokens`; returns the tokens it did.
        Raises RequestError (the job is dropped by the caller)."""

    def can_prefill_together(self, a: PrefillJob, b: PrefillJob) -> bool:
        """Can one prefill chunk take the same number of tokens from both prompts in one
        pass? Only at the same offset: a chunk that needs no padding."""
        return a.done == b.done

    def prefill_together(self, jobs: List[PrefillJob], tokens_each: int) -> List[Tuple[PrefillJob, RequestError]]:
        """One chunk of `tokens_each` tokens (at most each job's remaining) for every job of
        a group `can_prefill_together` formed; returns the jobs that failed, each with its
        error (the caller drops them). Here one job after another; an engine that can
        batch them overrides it."""
        failed: List[Tuple[PrefillJob, RequestError]] = []
        for job in jobs:
            try:
                self.prefill_some(job, tokens_each)
            except RequestError as err:
                failed.append((job, err))
        return failed

    @abstractmethod
    def finish_prefill(self, job: PrefillJob) -> None:
        """A complete job: caches its prompt (when the cache is on) and joins the batch.
        Raises RequestError."""

    def drop_prefill(self, job: PrefillJob) -> None:
        """A cancelled or failed job: everything it holds is dropped, nothing is cached."""
        job.state = None

    def prompt_cache_stats(self) -> Optional[Dict[str, int]]:
        """The PromptCacheStats fields (entries, bytes, capBytes, hits, misses,
        hitTokens), or None when the cache is off."""
        return None

    def pause(self, seconds: float) -> None:
        """The pacing's pause after a prefill chunk: compute nothing for `seconds` (wall
        clock), so another model on the same GPU gets it."""
        time.sleep(seconds)

    def concurrency_limit(self) -> Optional[int]:
        """After load: at most this many requests at once (1 for a model whose caches
        cannot be batched), or None for no engine limit beyond --max-batch."""
        return None

    def load_details(self) -> Dict[str, Any]:
        """Extra fields for the RunnerLoaded status (e.g. how requests are batched)."""
        return {}

    def features(self) -> Dict[str, bool]:
        """What requests the engine can honour: {tools, structuredOutput}."""
        return {"tools": False, "structuredOutput": False}

    @abstractmethod
    def decode_step(self) -> List[GeneratedToken]:
        """One decode step for every request in the batch: one token each."""

    @abstractmethod
    def remove(self, request_id: str) -> None:
        """Drops a request from the batch (cancellation); unknown ids are ignored."""

    @abstractmethod
    def batch_size(self) -> int:
        """Requests currently decoding."""

    @abstractmethod
    def peak_memory_bytes(self) -> int:
        """Peak memory of this runner so far, in bytes."""

    @abstractmethod
    def close(self) -> None:
        """Frees the model and everything it holds (clean shutdown)."""
