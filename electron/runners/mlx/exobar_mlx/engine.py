"""The engine interface: what the step loop needs from an inference backend.

The step loop (step_loop.py) owns the protocol semantics: when tasks are read, when
cancels are checked, which events go out in which order. An engine only does the
work: load, warm up, tokenize, prefill one prompt in chunks, run one batched decode
step. Two engines implement it: `mlx` (mlx-lm on Apple silicon) and `test`
(deterministic, standard library only, for CI).
"""
from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

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

    @abstractmethod
    def prefill(self, request: PreparedRequest, on_chunk: PrefillProgress) -> None:
        """Prefills the prompt in chunks of `prefill_chunk` (read anew before each), calling on_chunk after each one (and once more
        with processed == total before the first token). On return the request decodes
        with the batch. If on_chunk raises PrefillCancelled the request is dropped and
        the exception propagates."""

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
