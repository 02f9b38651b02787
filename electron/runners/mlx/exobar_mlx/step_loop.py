"""The step loop: exo's generation semantics on top of any engine (`--schedule exo`).

The interleaved schedule (interleaved_loop.py) is a subclass that changes only when
requests are admitted and how their prefill is cut between decode steps.

What a real exo runner does, and what this loop reproduces (docs/mlx-runner.md):
- New tasks are read only between generation steps, and every task read is
  acknowledged then; a generation task waits in a queue inside the runner until the
  batch has room (exo hands each task to its engine, which queues it). At most one is
  admitted per step, and the step that admits a prompt includes its whole prefill, so a
  long prompt delays everything behind it, acknowledgements included.
- Prefill runs in chunks (4096 tokens by default) with a PrefillProgressChunk after
  each; cancellations are checked at every chunk boundary, the last one included
  (before the first token), and every ~100 decode steps.
- A cancellation for a task waiting in the runner's queue removes it at once (at the
  next step boundary or cancel check); one for a task the runner has not read yet is
  dropped (logged), as exo's engine only cancels tasks it knows.
- Up to `max_batch` requests decode together, one token each per step.
- Prefill pacing (protocol 2): a SetPrefillPacing is read between steps, when idle
  and at every prefill-chunk boundary, acknowledged there (PrefillPacingApplied) and
  used from the next chunk: that chunk size, and a pause after each chunk but the last.
- Lifecycle: Idle -> Loading -> Loaded -> WarmingUp -> Ready -> Running <-> Ready
  -> ShuttingDown -> Shutdown (exit 0); any fatal error -> RunnerFailed, exit 1.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable, Deque, Dict, List, Optional

from .engine import Engine, EngineError, GeneratedToken, PrefillCancelled, PreparedRequest, RequestError
from .inbox import Inbox
from .protocol import ProtocolWriter, Task, fault_of

log = logging.getLogger("exobar.mlx.loop")

#: exo checks for cancellations every ~100 decode steps.
CANCEL_CHECK_INTERVAL = 100
#: Tokens a crashing request emits before the process exits (the sim's CRASH_AFTER_TOKENS).
CRASH_AFTER_TOKENS = 3


class FatalRunnerError(Exception):
    """Ends the runner: reported as RunnerFailed, exit code 1."""


@dataclass
class ActiveRequest:
    task_id: str
    command_id: str
    request: PreparedRequest
    fault: Optional[str]
    prefill_started_at: float
    prefill_ended_at: float = 0.0
    completion_tokens: int = 0
    decoding: bool = False


@dataclass
class LoopOptions:
    max_batch: int = 8
    default_max_tokens: int = 4096
    cancel_check_interval: int = CANCEL_CHECK_INTERVAL


@dataclass
class LoopHooks:
    """Process-level effects, injectable so tests can observe them."""

    clock: Callable[[], float] = time.monotonic
    #: Called for the crash fault prompt; must not return.
    crash: Callable[[], None] = lambda: None
    #: Called for the hang fault prompt; must not return.
    hang: Callable[[], None] = lambda: None


class StepLoop:
    def __init__(
        self,
        engine: Engine,
        out: ProtocolWriter,
        inbox: Inbox,
        options: Optional[LoopOptions] = None,
        hooks: Optional[LoopHooks] = None,
    ) -> None:
        self.engine = engine
        self.out = out
        self.inbox = inbox
        self.options = options or LoopOptions()
        self.hooks = hooks or LoopHooks()
        self.status = "RunnerIdle"
        self.active: Dict[str, ActiveRequest] = {}
        #: Acknowledged generation tasks waiting for room in the batch.
        self.waiting: Deque[Task] = deque()
        self.seen: set = set()
        self.steps_since_cancel_check = 0
        #: The engine's own chunk: what a pacing with chunkTokens null goes back to.
        self.default_prefill_chunk = engine.prefill_chunk
        #: The current pacing's pause after a prefill chunk, in seconds.
        self.pacing_pause_s = 0.0
        #: The PromptCacheStats last sent (None: none yet).
        self.reported_cache_stats: Optional[dict] = None

    # ------------------------------------------------------------------ main loop
    def run(self) -> int:
        """Runs until Shutdown, stdin EOF or a fatal error; returns the exit code."""
        self._set_status("RunnerIdle")
        try:
            while True:
                code = self._generation_step() if self.active or self.waiting else self._idle_step()
                if code is not None:
                    return code
        except FatalRunnerError as err:
            return self._fail_runner(str(err))
        except Exception as err:  # never a silent exit: whatever broke is reported
            log.exception("runner failed")
            return self._fail_runner(f"{type(err).__name__}: {err}")

    def _idle_step(self) -> Optional[int]:
        self.inbox.wait()
        self._apply_pacings(None)
        self._check_cancels(None)
        item = self.inbox.pop_task()
        if isinstance(item, Task) and item.kind == "TextGeneration":
            # The first request's step: its admission and prefill, then a decode step
            # (exo's handle_generation_tasks).
            self._handle(item)
            return self._generation_step()
        if item is not None:
            return self._handle(item)
        if self.inbox.closed:
            log.info("stdin closed: shutting down")
            return self._shutdown(None)
        return None

    def _generation_step(self) -> Optional[int]:
        """One step: read every queued task, admit at most one (with its whole prefill), decode once."""
        code = self._admit_between_steps()
        if code is not None:
            return code
        if self.engine.batch_size() > 0:
            try:
                tokens = self.engine.decode_step()
            except Exception as err:
                raise FatalRunnerError(f"decode step failed: {type(err).__name__}: {err}") from err
            self._emit_tokens(tokens)
            self.steps_since_cancel_check += 1
            if self.steps_since_cancel_check >= self.options.cancel_check_interval:
                self._check_cancels(None)

        self._ready_when_idle()
        return None

    def _admit_between_steps(self) -> Optional[int]:
        # A queued Shutdown overtakes generation tasks still unread (as in the sim);
        # otherwise every queued task is read (and acknowledged), and one waiting
        # request is admitted if the batch has room.
        shutdown = self.inbox.take_shutdown()
        if shutdown is not None:
            return self._handle(shutdown)
        self._apply_pacings(None)
        item = self.inbox.pop_task()
        while item is not None:
            code = self._handle(item)
            if code is not None:
                return code
            item = self.inbox.pop_task()
        waiting_ids = {task.task_id for task in self.waiting}
        for cancel in self.inbox.take_cancels_for(waiting_ids):
            self._cancel_waiting(cancel.cancelled_task_id)
        if self.waiting and not self._batch_full():
            self._admit(self.waiting.popleft())
        elif not self.waiting and not self.active and self.inbox.closed:
            log.info("stdin closed during generation: shutting down")
            return self._shutdown(None)
        return None

    def _ready_when_idle(self) -> None:
        # Running <-> Ready: back to Ready as soon as nothing is admitted any more
        # (finished, cancelled in prefill, or failed before its first token).
        if not self.active and not self.waiting and self.status == "RunnerRunning":
            self._set_status("RunnerReady")

    def _batch_full(self) -> bool:
        # A waiting request (acknowledged, not admitted) stays in the runner's queue
        # while the batch, or the engine's own limit, is full.
        limit = self.options.max_batch
        engine_limit = self.engine.concurrency_limit()
        if engine_limit is not None:
            limit = min(limit, engine_limit)
        return len(self.active) >= limit

    # ------------------------------------------------------------------ tasks
    def _handle(self, item: object) -> Optional[int]:
        assert isinstance(item, Task)
        if item.task_id in self.seen:
            log.warning("ignored repeated task %s (%s)", item.task_id, item.kind)
            return None
        self.seen.add(item.task_id)
        if item.kind == "LoadModel":
            return self._load(item)
        if item.kind == "StartWarmup":
            return self._warmup(item)
        if item.kind == "TextGeneration":
            self._accept(item)
            return None
        if item.kind == "Shutdown":
            return self._shutdown(item)
        raise FatalRunnerError(f"unknown task kind {item.kind}")

    def _reject_out_of_order(self, task: Task, expected: str) -> None:
        message = f"{task.kind} is not allowed while the runner is {self.status} (needs {expected})"
        log.warning("rejected task %s: %s", task.task_id, message)
        self.out.acknowledged(task.task_id)
        if task.command_id is not None:
            self.out.error(task.command_id, message)
        self.out.task_status(task.task_id, "Failed")

    def _load(self, task: Task) -> Optional[int]:
        if self.status != "RunnerIdle":
            self._reject_out_of_order(task, "RunnerIdle")
            return None
        self.out.acknowledged(task.task_id)
        self.out.task_status(task.task_id, "Running")

        def on_layer(loaded: int, total: int) -> None:
            total = max(1, int(total))
            self._set_status("RunnerLoading", layersLoaded=max(0, min(int(loaded), total)), totalLayers=total)

        try:
            self.engine.load(on_layer)
        except Exception as err:
            return self._fail_lifecycle(task, "loading the model failed", err)
        self._set_status("RunnerLoaded", **self.engine.load_details())
        self.out.task_status(task.task_id, "Complete")
        return None

    def _warmup(self, task: Task) -> Optional[int]:
        if self.status != "RunnerLoaded":
            self._reject_out_of_order(task, "RunnerLoaded")
            return None
        self.out.acknowledged(task.task_id)
        self.out.task_status(task.task_id, "Running")
        self._set_status("RunnerWarmingUp")
        try:
            self.engine.warmup()
        except Exception as err:
            return self._fail_lifecycle(task, "warm-up failed", err)
        self._set_status("RunnerReady")
        self.out.task_status(task.task_id, "Complete")
        return None

    def _fail_lifecycle(self, task: Task, what: str, err: BaseException) -> int:
        message = f"{what}: {err}" if isinstance(err, EngineError) else f"{what}: {type(err).__name__}: {err}"
        if not isinstance(err, EngineError):
            log.error("%s", message, exc_info=err)
        # A lifecycle task has no command id; its task id stands in so the error text
        # reaches the supervisor as a chunk as well as in the failed status.
        self.out.error(task.task_id, message)
        self.out.task_status(task.task_id, "Failed")
        return self._fail_runner(message)

    def _fail_runner(self, message: str) -> int:
        for state in list(self.active.values()):
            self.out.error(state.command_id, f"runner failed: {message}")
            self.out.task_status(state.task_id, "Failed")
        self.active.clear()
        self._fail_waiting(f"runner failed: {message}")
        self._set_status("RunnerFailed", errorMessage=message)
        log.error("runner failed: %s", message)
        try:
            self.engine.close()
        except Exception:
            log.exception("freeing the engine after a failure also failed")
        return 1

    def _shutdown(self, task: Optional[Task]) -> int:
        if task is not None:
            self.out.acknowledged(task.task_id)
            self.out.task_status(task.task_id, "Running")
        self._set_status("RunnerShuttingDown")
        # Admitted requests will never finish: each ends with an error, never a hang.
        for state in list(self.active.values()):
            if state.decoding:
                self.engine.remove(state.task_id)
            self.out.error(state.command_id, "runner shut down before the request finished")
            self.out.task_status(state.task_id, "Failed")
        self.active.clear()
        self._fail_waiting("runner shut down before the request finished")
        try:
            self.engine.close()
        except Exception:
            log.exception("freeing the model failed during shutdown")
        if task is not None:
            self.out.task_status(task.task_id, "Complete")
        self._set_status("RunnerShutdown")
        log.info("shut down")
        return 0

    # ------------------------------------------------------------------ generation
    def _accept(self, task: Task) -> None:
        """Acknowledges a generation task read between steps; it waits for the batch."""
        if self.status not in ("RunnerReady", "RunnerRunning"):
            self._reject_out_of_order(task, "RunnerReady")
            return
        self.out.acknowledged(task.task_id)
        self.out.task_status(task.task_id, "Running")
        if self.status != "RunnerRunning":
            self._set_status("RunnerRunning")
        self.waiting.append(task)

    def _fail_waiting(self, message: str) -> None:
        for task in self.waiting:
            assert task.command_id is not None
            self.out.error(task.command_id, message)
            self.out.task_status(task.task_id, "Failed")
        self.waiting.clear()

    def _cancel_waiting(self, task_id: str) -> bool:
        task = next((t for t in self.waiting if t.task_id == task_id), None)
        if task is None:
            return False
        self.waiting.remove(task)
        assert task.command_id is not None
        log.info("task %s cancelled while waiting for the batch", task_id)
        self.out.token(task.command_id, "", -1, finish_reason="cancelled",
                       usage=self._usage_of(0, 0, 0), stats=None)
        self.out.task_status(task_id, "Cancelled")
        return True

    def _fault_at_admission(self, task: Task) -> Optional[str]:
        """The task's fault prompt, if any; a hang one hangs here, as a wedged GPU would."""
        assert task.params is not None
        fault = fault_of(task.params)
        if fault == "hang":
            # A wedged GPU: the runner stays alive and says nothing more.
            log.error("fault prompt: hanging on task %s (alive, silent)", task.task_id)
            self.hooks.hang()
        return fault

    def _admit(self, task: Task) -> None:
        """Admits an acknowledged task: its whole prefill, inside this step."""
        assert task.params is not None and task.command_id is not None
        fault = self._fault_at_admission(task)
        try:
            request = self.engine.prepare(
                task.task_id, task.command_id, task.params, self.options.default_max_tokens
            )
        except RequestError as err:
            self._fail_request(task.task_id, task.command_id, str(err))
            return
        # Its turn has come: the 0-token progress tells the node its prefill begins now, so
        # the time it waited in this runner behind earlier prompts is not counted as prefill.
        self.out.prefill_progress(task.command_id, 0, int(request.prompt_tokens))
        state = ActiveRequest(
            task_id=task.task_id,
            command_id=task.command_id,
            request=request,
            fault=fault,
            prefill_started_at=self.hooks.clock(),
        )
        reported = 0

        def on_chunk(processed: int, total: int) -> None:
            nonlocal reported
            processed = min(int(processed), int(total))
            if processed > reported:
                self.out.prefill_progress(state.command_id, processed, int(total))
                reported = processed
            # exo checks cancellations at every prefill-chunk boundary.
            self._check_cancels(state)
            # A pacing read here shapes the next chunk; its pause leaves the GPU to others.
            self._apply_pacings(state.command_id)
            if processed < int(total) and self.pacing_pause_s > 0:
                self.engine.pause(self.pacing_pause_s)

        try:
            self.engine.prefill(request, on_chunk)
        except PrefillCancelled:
            self._cancel(state, reason="cancelled during prefill")
            return
        except RequestError as err:
            self._fail_request(state.task_id, state.command_id, str(err))
            return
        except Exception as err:
            raise FatalRunnerError(f"prefill failed: {type(err).__name__}: {err}") from err
        prefilled = request.prompt_tokens - request.cached_tokens
        if reported < prefilled:
            # An engine that skipped the last report still owes the final boundary's
            # progress and cancel check before the first token.
            on_chunk(prefilled, prefilled)
        state.prefill_ended_at = self.hooks.clock()
        state.decoding = True
        self.active[state.task_id] = state
        self._report_cache()

    def _report_cache(self) -> None:
        """PromptCacheStats, when the engine has a prompt cache and they changed: after a
        request's prefill (a lookup and the prompt cached) and after a request finishes
        (the mlx engine caches the whole conversation, the reply included, then)."""
        stats = self.engine.prompt_cache_stats()
        if stats is not None and stats != self.reported_cache_stats:
            self.reported_cache_stats = stats
            self.out.prompt_cache_stats(stats)

    def _fail_request(self, task_id: str, command_id: str, message: str) -> None:
        log.warning("request %s failed: %s", task_id, message)
        self.out.error(command_id, message)
        self.out.task_status(task_id, "Failed")

    def _emit_tokens(self, tokens: List[GeneratedToken]) -> None:
        self._emit_each(tokens)
        if any(token.finish_reason is not None for token in tokens):
            # A finished request's conversation may be cached now: after its last token.
            self._report_cache()

    def _emit_each(self, tokens: List[GeneratedToken]) -> None:
        for token in tokens:
            state = self.active.get(token.request_id)
            if state is None:
                continue
            if token.error is not None:
                # This request's failure: the engine has dropped it, the others go on.
                del self.active[state.task_id]
                self._fail_request(state.task_id, state.command_id, token.error)
                continue
            if state.fault == "crash" and (
                state.completion_tokens >= CRASH_AFTER_TOKENS or token.finish_reason is not None
            ):
                log.error("fault prompt: crashing mid-generation of %s (exit 1)", state.task_id)
                self.hooks.crash()
            state.completion_tokens += 1
            if token.tool_calls:
                self.out.tool_calls(state.command_id, token.tool_calls)
            if token.finish_reason is None:
                self.out.token(state.command_id, token.text, token.token_id)
                continue
            self.out.token(
                state.command_id,
                token.text,
                token.token_id,
                finish_reason=token.finish_reason,
                usage=self._usage(state),
                stats=self._stats(state),
                stop_sequence=token.stop_sequence,
            )
            self.out.task_status(state.task_id, "Complete")
            del self.active[state.task_id]

    def _usage(self, state: ActiveRequest) -> dict:
        return self._usage_of(state.request.prompt_tokens, state.completion_tokens, state.request.cached_tokens)

    def _usage_of(self, prompt: int, completion: int, cached: int) -> dict:
        """A request's usage; `cachedTokens` only when the prompt cache is on (protocol 3,
        as the sim does: without a cache there is nothing to count)."""
        usage = {"promptTokens": prompt, "completionTokens": completion}
        if self.engine.prompt_cache_stats() is not None:
            usage["cachedTokens"] = cached
        return usage

    def _stats(self, state: ActiveRequest) -> dict:
        now = self.hooks.clock()
        scale = self.engine.time_scale or 1.0
        prefill_s = (state.prefill_ended_at - state.prefill_started_at) / scale
        decode_s = (now - state.prefill_ended_at) / scale
        return {
            # The rate of the tokens prefilled: those the prompt cache served took no time.
            "promptTps": (state.request.prompt_tokens - state.request.cached_tokens) / prefill_s if prefill_s > 0 else 0.0,
            "generationTps": state.completion_tokens / decode_s if decode_s > 0 else 0.0,
            "promptTokens": state.request.prompt_tokens,
            "generationTokens": state.completion_tokens,
            "peakMemoryBytes": max(0, int(self.engine.peak_memory_bytes())),
        }

    # ------------------------------------------------------------------ pacing
    def _apply_pacings(self, prefilling_command_id: Optional[str]) -> None:
        """Applies every SetPrefillPacing that has arrived, acknowledging each."""
        for pacing in self.inbox.drain_pacings():
            self.engine.prefill_chunk = pacing.chunk_tokens or self.default_prefill_chunk
            self.pacing_pause_s = pacing.pause_ms / 1000.0
            self.out.pacing_applied(pacing, prefilling_command_id)
            log.info(
                "prefill pacing %s: chunk %d, pause %d ms%s",
                pacing.pacing_id,
                self.engine.prefill_chunk,
                pacing.pause_ms,
                f" (during the prefill of {prefilling_command_id})" if prefilling_command_id else "",
            )

    # ------------------------------------------------------------------ cancellation
    def _check_cancels(self, prefilling: Optional[ActiveRequest]) -> None:
        """Applies queued cancellations. Raises PrefillCancelled when `prefilling` is hit."""
        self.steps_since_cancel_check = 0
        hit_prefilling = False
        for cancel in self.inbox.drain_cancels():
            target = cancel.cancelled_task_id
            if prefilling is not None and target == prefilling.task_id:
                hit_prefilling = True
            elif target in self.active:
                self._cancel(self.active[target], reason="cancelled")
            elif self._cancel_waiting(target):
                pass
            else:
                # exo's engine only cancels tasks it has admitted; the supervisor holds
                # a cancel until the acknowledgement, so this one was sent too early.
                log.info("dropped cancel for %s: not admitted by this runner", target)
        if hit_prefilling:
            raise PrefillCancelled()

    def _cancel(self, state: ActiveRequest, reason: str) -> None:
        log.info("task %s %s after %d tokens", state.task_id, reason, state.completion_tokens)
        if state.decoding:
            self.engine.remove(state.task_id)
        self.active.pop(state.task_id, None)
        self.out.token(
            state.command_id,
            "",
            -1,
            finish_reason="cancelled",
            usage=self._usage(state),
            stats=None,
        )
        self.out.task_status(state.task_id, "Cancelled")

    # ------------------------------------------------------------------ status
    def _set_status(self, kind: str, **details: object) -> None:
        self.status = kind
        self.out.runner_status(kind, **details)
