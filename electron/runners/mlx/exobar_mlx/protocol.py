"""The runner protocol in Python: input validation and output messages.

Mirrors shared/runner-protocol.ts (PROTOCOL_VERSION 3): stdin carries one task or
cancel per line, stdout one event per line, the first being a Hello. Input is checked
here with the same limits as the zod schemas, because this is a process boundary
(docs/architecture.md, invariant 5): a bad line is answered or logged, never fatal.
"""
from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from typing import IO, Any, List, Optional, Union

from .request_options import NO_OPTIONS, OptionError, RequestOptions, parse_message_tool_fields, parse_options

#: 2 added prefill pacing (SetPrefillPacing / PrefillPacingApplied); 3 the schedules
#: and the prompt cache (the hello's schedule and promptCache, Usage.cachedTokens,
#: PromptCacheStats).
PROTOCOL_VERSION = 3
SCHEDULES = ("exo", "interleaved")
DEFAULT_SCHEDULE = "interleaved"
#: --prefill-chunk-ms: its default and the bounds shared/runner-protocol.ts sets.
DEFAULT_PREFILL_CHUNK_MS = 250
MIN_PREFILL_CHUNK_MS = 10
MAX_PREFILL_CHUNK_MS = 10_000
#: The interleaved prefill chunk's bounds in tokens, whatever the measured rate says (the
#: floor is below the pacing's: a 64-token chunk took seconds on a loaded CPU).
MIN_INTERLEAVED_CHUNK_TOKENS = 16
MAX_INTERLEAVED_CHUNK_TOKENS = 4096
#: How prompts share a chunk (shared/runner-protocol.ts): a prompt at most this many
#: chunks behind the first catches up with it (they arrived together), and each row of a
#: pass over several prompts takes at least this many tokens (8 rows x 2-4 tokens ran
#: 151-160 tokens/s on this CPU, 8 rows x 8: 201, one row of 16: 202).
CATCH_UP_CHUNKS = 2
MIN_STACKED_ROW_TOKENS = 8
#: The pacing limits of shared/runner-protocol.ts.
MIN_PACED_CHUNK_TOKENS = 64
MAX_PACED_CHUNK_TOKENS = 4096
MAX_PACING_PAUSE_MS = 1000

ROLES = ("system", "user", "assistant", "developer", "tool")
TASK_KINDS = ("LoadModel", "StartWarmup", "TextGeneration", "Shutdown")
FAULT_CRASH = "EXOBAR RUNNER MUST CRASH"
FAULT_HANG = "EXOBAR RUNNER MUST HANG"
_MAX_ID = 200


@dataclass(frozen=True)
class GenerationParams:
    messages: List[dict]
    max_tokens: Optional[int]
    temperature: Optional[float]
    seed: Optional[int]
    #: Tools, tool choice, response format and sampling options (request_options.py).
    options: RequestOptions = NO_OPTIONS


@dataclass(frozen=True)
class Task:
    kind: str
    task_id: str
    command_id: Optional[str] = None
    params: Optional[GenerationParams] = None


@dataclass(frozen=True)
class Cancel:
    cancelled_task_id: str


@dataclass(frozen=True)
class SetPacing:
    """SetPrefillPacing: chunk size (None: the runner's own) and the pause after each
    chunk but a prompt's last, from the next chunk on."""

    pacing_id: str
    chunk_tokens: Optional[int]
    pause_ms: int


RunnerInput = Union[Task, Cancel, SetPacing]


class InputError(ValueError):
    """A stdin line that is not a valid RunnerInput: logged on stderr and ignored, as
    the sim does (docs/runner-protocol.md). Nothing is acknowledged for it."""


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and 1 <= len(value) <= _MAX_ID


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) or (
        isinstance(value, float) and value.is_integer()
    )


def _parse_params(raw: Any) -> GenerationParams:
    if not isinstance(raw, dict):
        raise InputError("params must be an object")
    messages = raw.get("messages")
    if not isinstance(messages, list) or len(messages) == 0:
        raise InputError("params.messages must be a non-empty array")
    clean = []
    for i, message in enumerate(messages):
        if not isinstance(message, dict):
            raise InputError(f"params.messages[{i}] must be an object")
        role, content = message.get("role"), message.get("content")
        if role not in ROLES:
            raise InputError(f"params.messages[{i}].role must be one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise InputError(f"params.messages[{i}].content must be a string")
        try:
            tool_fields = parse_message_tool_fields(message, f"params.messages[{i}]")
        except OptionError as err:
            raise InputError(str(err)) from None
        clean.append({"role": role, "content": content, **tool_fields})
    if "maxTokens" not in raw:
        raise InputError("params.maxTokens is required (a positive integer or null)")
    max_tokens = raw["maxTokens"]
    if max_tokens is not None and not (_is_int(max_tokens) and max_tokens > 0):
        raise InputError("params.maxTokens must be a positive integer or null")
    temperature = raw.get("temperature")
    if temperature is not None and not (
        isinstance(temperature, (int, float)) and not isinstance(temperature, bool) and 0 <= temperature <= 2
    ):
        raise InputError("params.temperature must be a number from 0 to 2 or null")
    seed = raw.get("seed")
    if seed is not None and not _is_int(seed):
        raise InputError("params.seed must be an integer or null")
    try:
        options = parse_options(raw)
    except OptionError as err:
        raise InputError(str(err)) from None
    return GenerationParams(
        messages=clean,
        max_tokens=None if max_tokens is None else int(max_tokens),
        temperature=None if temperature is None else float(temperature),
        seed=None if seed is None else int(seed),
        options=options,
    )


def parse_input_line(line: str) -> RunnerInput:
    """Parses one stdin line; raises InputError for anything the zod schema would reject."""
    try:
        raw = json.loads(line)
    except ValueError as err:
        raise InputError(f"not JSON ({err})") from None
    if not isinstance(raw, dict):
        raise InputError("not a JSON object")
    kind = raw.get("kind")
    if kind == "CancelTask":
        if not _is_id(raw.get("cancelledTaskId")):
            raise InputError("CancelTask.cancelledTaskId must be a string of 1-200 characters")
        return Cancel(raw["cancelledTaskId"])
    if kind == "SetPrefillPacing":
        return _parse_pacing(raw)
    if kind not in TASK_KINDS:
        raise InputError(f"unknown kind {kind!r}")
    task_id = raw.get("taskId")
    if not _is_id(task_id):
        raise InputError(f"{kind}.taskId must be a string of 1-200 characters")
    if kind != "TextGeneration":
        return Task(kind=kind, task_id=task_id)
    command_id = raw.get("commandId")
    if not _is_id(command_id):
        raise InputError("TextGeneration.commandId must be a string of 1-200 characters")
    params = _parse_params(raw.get("params"))
    return Task(kind=kind, task_id=task_id, command_id=command_id, params=params)


def _parse_pacing(raw: dict) -> SetPacing:
    if not _is_id(raw.get("pacingId")):
        raise InputError("SetPrefillPacing.pacingId must be a string of 1-200 characters")
    if "chunkTokens" not in raw:
        raise InputError("SetPrefillPacing.chunkTokens is required (an integer or null)")
    chunk = raw["chunkTokens"]
    if chunk is not None and not (_is_int(chunk) and MIN_PACED_CHUNK_TOKENS <= chunk <= MAX_PACED_CHUNK_TOKENS):
        raise InputError(
            f"SetPrefillPacing.chunkTokens must be an integer from {MIN_PACED_CHUNK_TOKENS} to {MAX_PACED_CHUNK_TOKENS} or null"
        )
    pause = raw.get("pauseMs")
    if not (_is_int(pause) and 0 <= pause <= MAX_PACING_PAUSE_MS):
        raise InputError(f"SetPrefillPacing.pauseMs must be an integer from 0 to {MAX_PACING_PAUSE_MS}")
    return SetPacing(raw["pacingId"], None if chunk is None else int(chunk), int(pause))


def fault_of(params: GenerationParams) -> Optional[str]:
    """'crash' or 'hang' when a message carries a fault prompt (exo-style debug prompts)."""
    for message in params.messages:
        if FAULT_CRASH in message["content"]:
            return "crash"
        if FAULT_HANG in message["content"]:
            return "hang"
    return None


class ProtocolWriter:
    """Writes protocol messages, one JSON object per line, flushed at once (the runner's
    stream is a LinePump, whose thread does the writing: line_pump.py).

    Only this object writes to the protocol stream; the runner points fd 1 at stderr
    so a stray print from a library (mlx-lm prints some warnings) lands in the log
    instead of corrupting the stream.
    """

    def __init__(self, stream: IO[str]):
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, message: dict) -> None:
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def hello(self, engine: str, model: str, pid: int, env: dict, fast_synch: bool, **extra: Any) -> None:
        """The first line. `extra` carries the engine's own facts (device, skipped
        Apple-only features, wired limit; docs/runner-protocol.md)."""
        self.send(
            {
                "type": "Hello",
                "protocolVersion": PROTOCOL_VERSION,
                "engine": engine,
                "model": model,
                "pid": pid,
                "env": env,
                "fastSynch": fast_synch,
                **extra,
            }
        )

    def acknowledged(self, task_id: str) -> None:
        self.send({"type": "TaskAcknowledged", "taskId": task_id})

    def task_status(self, task_id: str, status: str) -> None:
        self.send({"type": "TaskStatusUpdated", "taskId": task_id, "status": status})

    def runner_status(self, kind: str, **details: Any) -> None:
        self.send({"type": "RunnerStatusUpdated", "status": {"kind": kind, **details}})

    def chunk(self, command_id: str, chunk: dict) -> None:
        self.send({"type": "ChunkGenerated", "commandId": command_id, "chunk": chunk})

    def prefill_progress(self, command_id: str, processed: int, total: int) -> None:
        self.chunk(command_id, {"kind": "PrefillProgressChunk", "processedTokens": processed, "totalTokens": total})

    def token(
        self,
        command_id: str,
        text: str,
        token_id: int,
        finish_reason: Optional[str] = None,
        usage: Optional[dict] = None,
        stats: Optional[dict] = None,
        stop_sequence: Optional[str] = None,
    ) -> None:
        chunk = {
            "kind": "TokenChunk",
            "text": text,
            "tokenId": token_id,
            "finishReason": finish_reason,
            "usage": usage,
            "stats": stats,
        }
        if stop_sequence is not None:  # optional, never null: the stop sequence met
            chunk["stopSequence"] = stop_sequence
        self.chunk(command_id, chunk)

    def pacing_applied(self, pacing: "SetPacing", command_id: Optional[str]) -> None:
        self.send(
            {
                "type": "PrefillPacingApplied",
                "pacingId": pacing.pacing_id,
                "chunkTokens": pacing.chunk_tokens,
                "pauseMs": pacing.pause_ms,
                "commandId": command_id,
            }
        )

    def tool_calls(self, command_id: str, calls: List[dict]) -> None:
        """Complete tool calls [{id, name, arguments (JSON text)}], before the token that ends them."""
        self.chunk(command_id, {"kind": "ToolCallChunk", "toolCalls": calls})

    def prompt_cache_stats(self, stats: dict) -> None:
        """The prompt cache after a request's prefill: entries, bytes, capBytes, hits,
        misses, hitTokens (counters since the runner started)."""
        self.send({"type": "PromptCacheStats", **stats})

    def error(self, command_id: str, message: str) -> None:
        self.chunk(command_id, {"kind": "ErrorChunk", "errorMessage": message})
