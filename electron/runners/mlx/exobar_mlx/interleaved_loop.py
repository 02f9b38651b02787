"""The interleaved schedule (`--schedule interleaved`, the default): the step loop of
step_loop.py with admission and prefill cut so a long prompt never freezes the other
streams of its model.

One step:
1. a queued Shutdown overtakes the rest; pacings are applied; every queued task is read
   and acknowledged; every queued cancel is applied (waiting, prefilling or decoding);
2. every waiting request that fits the batch is admitted (tokenized, its prefill job
   started from the prompt cache's longest prefix);
3. at most one prefill chunk: about `--prefill-chunk-ms` of prefill at the measured
   rate (chunk_sizer.py), given to the prompts in the order they arrived, those at the
   same offset as the first together in one pass (equal shares, no padding:
   batched_prefill.py), so prompts waiting together end together; what the chunk has
   left goes to the next group; a prompt whose prefill completes joins
   the batch (and the prompt cache). Prompts sent together but admitted a step apart
   (the first one's chunk was running when the others came) are at most
   CATCH_UP_CHUNKS chunks behind it: they go first, up to its offset, and from there
   one pass takes them all. (Without it, eight prompts sent at once prefilled as one
   alone, then seven stacked while the first one's decode took its share of the time.)
   Each row of a pass over several prompts takes at least MIN_STACKED_ROW_TOKENS;
4. one decode step for the batch;
5. the pacing's pause, after a chunk when a prefill is still under way.
So tasks are read, acknowledged and cancels applied between short steps, and the
streams already decoding get a token after every chunk.

The machine is shared by request, not by step, up to half each: after a chunk that
took T seconds the steps that follow only decode, for T x decoding / prefilling
requests but at most T, before the next chunk. One stream beside one long prompt
keeps about half its decode rate (one decode step per 250 ms chunk would leave it a
tenth on a GPU, less on a CPU) and the prompt's prefill takes about twice as long;
eight prompts arriving together while one stream decodes lose only an eighth of their
prefill time to it; however many streams decode, a prompt's prefill gets at least
half the time. With nothing decoding, chunks follow each other at once.

An engine that can prefill beside decode (`prefill_beside_decode`: the mlx engine on the
CPU) runs the chunks on a prefill thread of its own instead, one after another, while
this thread goes on with the steps (tasks, cancels, admission, decode steps): a chunk
that ended is settled at the next step (its progress, its failures, its prompts joining
the batch) and the next one starts; with nothing decoding one prompt's chunk runs on
this thread, as above (nothing to run beside it), and several prompts' chunks run on
both threads at once, the later half of the prompts on the prefill thread.
The time is then not shared but spent twice: on this CPU MLX runs a forward pass on one
core, and the second core had nothing to do while the other waited (the bench: a
stream beside a 1,500-token prompt kept 0.71-0.89 of its rate, and the prompt's first
token came 1.12-1.44x its time alone, against 0.51 and 1.9-2.4x sharing the time).
A chunk's prompts are its own until it ends: a cancel ends its request at once, and the
job is dropped in the engine after the chunk (`_drop_after`). On a GPU the runner keeps
sharing the time: two threads feeding one GPU are not measured here.

Prompts are stacked only where no padding is needed (same offset, same cache layout),
not padded on the right as mlx-lm's BatchGenerator does: each row then computes what it
would alone (generate_step's arithmetic for every cache family), and greedy tokens equal
mlx-lm's own with one request or eight. An engine that cannot stack a model's caches
(Llama 4's ChunkedKVCache) runs the group's prompts one after another.
"""
from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Set, Tuple

from .chunk_sizer import ChunkSizer
from .engine import Engine, PrefillJob, RequestError
from .inbox import Inbox
from .protocol import CATCH_UP_CHUNKS, DEFAULT_PREFILL_CHUNK_MS, MIN_STACKED_ROW_TOKENS, ProtocolWriter, Task
from .step_loop import ActiveRequest, FatalRunnerError, LoopHooks, LoopOptions, StepLoop

log = logging.getLogger("exobar.mlx.loop")


@dataclass
class _Chunk:
    """What one prefill chunk did, for `_settle`."""

    started: float
    #: Prompts it was planned over (the decoding streams' share after it is measured by them).
    prompts: int
    touched: Set[str] = field(default_factory=set)
    failed: List[Tuple[ActiveRequest, RequestError]] = field(default_factory=list)


class InterleavedLoop(StepLoop):
    def __init__(
        self,
        engine: Engine,
        out: ProtocolWriter,
        inbox: Inbox,
        options: Optional[LoopOptions] = None,
        hooks: Optional[LoopHooks] = None,
        prefill_chunk_ms: float = DEFAULT_PREFILL_CHUNK_MS,
    ) -> None:
        super().__init__(engine, out, inbox, options, hooks)
        self.sizer = ChunkSizer(prefill_chunk_ms)
        #: Admitted requests still prefilling, in arrival order (also in self.active).
        self.prefilling: List[ActiveRequest] = []
        self.jobs: Dict[str, PrefillJob] = {}
        #: Until this clock time the steps only decode (the decoding streams' share).
        self.decode_until = 0.0
        #: The prefill thread (engines that prefill beside decode) and its chunk under way.
        self._worker: Optional[ThreadPoolExecutor] = None
        self._in_flight: Optional["Future[_Chunk]"] = None
        #: Jobs dropped while a chunk ran: dropped in the engine when it ends.
        self._drop_after: List[PrefillJob] = []

    def _warmup(self, task: Task) -> Optional[int]:
        code = super()._warmup(task)
        if self.sizer.rate is None and self.engine.prefill_rate_hint:
            self.sizer.rate = self.engine.prefill_rate_hint / (self.engine.time_scale or 1.0)
        return code

    def _generation_step(self) -> Optional[int]:
        shutdown = self.inbox.take_shutdown()
        if shutdown is not None:
            return self._handle(shutdown)
        self._apply_pacings(self.prefilling[0].command_id if self.prefilling else None)
        item = self.inbox.pop_task()
        while item is not None:
            code = self._handle(item)
            if code is not None:
                return code
            item = self.inbox.pop_task()
        self._check_cancels(None)
        while self.waiting and not self._batch_full():
            self._admit(self.waiting.popleft())
        if not self.waiting and not self.active and self.inbox.closed:
            log.info("stdin closed during generation: shutting down")
            return self._shutdown(None)
        beside = self.engine.prefill_beside_decode
        if beside:
            self._prefill_beside()
        chunked = not beside and bool(self.prefilling) and (self.engine.batch_size() == 0 or self.hooks.clock() >= self.decode_until)
        if chunked:
            self._prefill_chunk()
        if self.engine.batch_size() > 0:
            try:
                tokens = self.engine.decode_step()
            except Exception as err:
                raise FatalRunnerError(f"decode step failed: {type(err).__name__}: {err}") from err
            self._emit_tokens(tokens)
        if chunked and self.prefilling and self.pacing_pause_s > 0:
            self.engine.pause(self.pacing_pause_s)
        self._ready_when_idle()
        return None

    def _chunk_tokens(self) -> int:
        tokens = self.sizer.tokens()
        if self.engine.prefill_chunk != self.default_prefill_chunk:
            # A pacing's chunk (SetPrefillPacing) caps the measured one.
            tokens = min(tokens, self.engine.prefill_chunk)
        return tokens

    def _admit(self, task: Task) -> None:
        """Admits an acknowledged task: tokenized, its prefill job started (no chunk yet)."""
        assert task.params is not None and task.command_id is not None
        fault = self._fault_at_admission(task)
        try:
            request = self.engine.prepare(task.task_id, task.command_id, task.params, self.options.default_max_tokens)
            job = self.engine.start_prefill(request)
        except RequestError as err:
            self._fail_request(task.task_id, task.command_id, str(err))
            return
        except Exception as err:
            raise FatalRunnerError(f"prefill failed: {type(err).__name__}: {err}") from err
        state = ActiveRequest(
            task_id=task.task_id,
            command_id=task.command_id,
            request=request,
            fault=fault,
            prefill_started_at=self.hooks.clock(),
        )
        self.active[state.task_id] = state
        self.jobs[state.task_id] = job
        self.prefilling.append(state)
        # Its prefill begins with the next chunk: the 0-token progress tells the node so, and
        # the time it waited in this runner is not counted as prefill (the cached tokens left out).
        self.out.prefill_progress(state.command_id, 0, job.total - job.cached)

    def _prefill_chunk(self) -> None:
        """One chunk of prefill on the loop's thread, settled at once."""
        self._settle(self._run_chunk(self._planned(), self._chunk_tokens(), 0.0))

    def _prefill_beside(self) -> None:
        """The chunks on the prefill thread, one after another while the loop's thread
        decodes: a chunk that ended is settled (at once when nothing decodes), then the
        next one starts, on the prefill thread while something decodes. With nothing
        decoding, one prompt's chunk runs here (with nothing to run beside it, a chunk here
        costs no hand-over), and several prompts' chunks run on both threads at once."""
        if self._in_flight is not None and (self._in_flight.done() or self.engine.batch_size() == 0):
            chunk = self._in_flight.result()  # the chunk's FatalRunnerError is raised here
            self._in_flight = None
            self._settle(chunk)
        if self._in_flight is not None or not self.prefilling:
            return
        planned, budget = self._planned(), self._chunk_tokens()
        if self.engine.batch_size() > 0:
            self._in_flight = self._prefill_thread().submit(self._run_chunk, planned, budget, self.pacing_pause_s)
        elif len(planned) > 1:
            self._prefill_on_both_threads(planned, budget)
        else:
            self._settle(self._run_chunk(planned, budget, self.pacing_pause_s))

    def _prefill_on_both_threads(self, planned: List[Tuple[ActiveRequest, PrefillJob]], budget: int) -> None:
        """The later half of the prompts (in arrival order) on the prefill thread, the
        earlier half here, a chunk each at once; both settled together. On this CPU a
        pass runs on one core: eight 200-token prompts prefilled in two stacked groups
        of four on two threads took 0.62 of their time as one group of eight (four
        trials, one process), the compute's share of their first tokens."""
        half = (len(planned) + 1) // 2
        # In flight before this thread's chunk: a failure here waits for it (_stop_prefill_thread).
        self._in_flight = self._prefill_thread().submit(self._run_chunk, planned[half:], budget, self.pacing_pause_s)
        here = self._run_chunk(planned[:half], budget, self.pacing_pause_s)
        there = self._in_flight.result()
        self._in_flight = None
        self._settle(
            _Chunk(
                started=min(here.started, there.started),
                prompts=here.prompts + there.prompts,
                touched=here.touched | there.touched,
                failed=here.failed + there.failed,
            )
        )

    def _prefill_thread(self) -> ThreadPoolExecutor:
        if self._worker is None:
            self._worker = ThreadPoolExecutor(1, "prefill", initializer=self.engine.enter_prefill_thread)
        return self._worker

    def _planned(self) -> List[Tuple[ActiveRequest, PrefillJob]]:
        """The prompts a chunk may take, in arrival order, with their jobs."""
        return [(s, self.jobs[s.task_id]) for s in self.prefilling if self.jobs[s.task_id].remaining > 0]

    def _run_chunk(self, prompts: List[Tuple[ActiveRequest, PrefillJob]], budget: int, pause_s: float) -> _Chunk:
        """About `budget` tokens of prefill over `prompts`: in arrival order, those at the
        same offset together (one pass over the same number of tokens from each, no
        padding). Touches only these jobs and the engine's prefill (it may run on the
        prefill thread); what it did is settled by `_settle` on the loop's thread."""
        catch_up = CATCH_UP_CHUNKS * budget
        jobs = {s.task_id: job for s, job in prompts}
        chunk = _Chunk(started=self.hooks.clock(), prompts=len(prompts))
        while budget > 0:
            failed = {s.task_id for s, _ in chunk.failed}
            pending = [s for s, job in prompts if job.remaining > 0 and s.task_id not in failed]
            if not pending:
                break
            group, cap = self._next_group(pending, jobs, catch_up)
            share = budget // len(group)
            # A stacked pass of a few tokens a row is slow: rows get a floor (protocol.py).
            floor = MIN_STACKED_ROW_TOKENS if len(group) > 1 else 1
            if share < floor and chunk.touched:
                break  # the chunk is spent; too little is left for this group
            chunk.touched.update(s.task_id for s in group)
            each = min([max(floor, share)] + [jobs[s.task_id].remaining for s in group] + ([cap] if cap is not None else []))
            budget -= max(1, self._pass(group, jobs, each, chunk))
        if pause_s > 0 and any(job.remaining > 0 for job in jobs.values()):
            self.engine.pause(pause_s)
        return chunk

    def _pass(self, group: List[ActiveRequest], jobs: Dict[str, PrefillJob], each: int, chunk: _Chunk) -> int:
        """One forward pass over `each` tokens of every prompt of the group; the prompts
        whose part of it failed go to the chunk's failures. Returns the tokens it prefilled."""
        group_jobs = [jobs[s.task_id] for s in group]
        started = self.hooks.clock()
        before = sum(job.done for job in group_jobs)
        try:
            failed = self.engine.prefill_together(group_jobs, each)
        except Exception as err:
            raise FatalRunnerError(f"prefill failed: {type(err).__name__}: {err}") from err
        done = sum(job.done for job in group_jobs) - before
        self.sizer.observe(done, (self.hooks.clock() - started) / (self.engine.time_scale or 1.0))
        for job, err in failed:
            state = next(s for s in group if jobs[s.task_id] is job)
            chunk.failed.append((state, err))
        return done

    def _settle(self, chunk: _Chunk) -> None:
        """On the loop's thread: the chunk's failed prompts fail, the others report their
        progress or, complete, join the batch; the drops it held back are done."""
        for job in self._drop_after:
            self.engine.drop_prefill(job)
        self._drop_after.clear()
        for state, err in chunk.failed:
            if state in self.prefilling:  # not cancelled while the chunk ran
                self._drop(state)
                self._fail_request(state.task_id, state.command_id, str(err))
        for state in list(self.prefilling):
            job = self.jobs[state.task_id]
            if job.remaining > 0:
                if state.task_id in chunk.touched:
                    self.out.prefill_progress(state.command_id, *job.progress())
            else:
                self._complete(state, job)
        if self.engine.prefill_beside_decode:
            return  # the decode steps' share is the one-thread schedule's (the prefill thread needs none)
        decoding = sum(1 for s in self.active.values() if s.decoding)
        if decoding > 0 and self.prefilling:
            spent = self.hooks.clock() - chunk.started
            self.decode_until = self.hooks.clock() + spent * min(1.0, decoding / max(1, chunk.prompts))

    def _next_group(
        self, pending: List[ActiveRequest], jobs: Dict[str, PrefillJob], catch_up: int
    ) -> Tuple[List[ActiveRequest], Optional[int]]:
        """The prompts the chunk's next pass takes (arrival order) and how many tokens each
        may go at most (None: no cap). The first prompt's group, unless prompts at most
        `catch_up` tokens behind it wait: then those farthest behind, up to the next offset
        a prompt is at, where they join it."""
        lead = jobs[pending[0].task_id]
        behind = [s for s in pending if lead.done - catch_up <= jobs[s.task_id].done < lead.done]
        first = min(behind, key=lambda s: jobs[s.task_id].done) if behind else pending[0]
        job = jobs[first.task_id]
        group = [s for s in pending if s is first or self.engine.can_prefill_together(job, jobs[s.task_id])]
        if not behind:
            return group, None
        ahead = min(jobs[s.task_id].done for s in pending if jobs[s.task_id].done > job.done)
        return group, ahead - job.done

    def _complete(self, state: ActiveRequest, job: PrefillJob) -> None:
        prefilled = job.total - job.cached
        self.out.prefill_progress(state.command_id, prefilled, prefilled)
        self.prefilling.remove(state)
        del self.jobs[state.task_id]
        try:
            self.engine.finish_prefill(job)
        except RequestError as err:
            self.active.pop(state.task_id, None)
            self._fail_request(state.task_id, state.command_id, str(err))
            return
        except Exception as err:
            raise FatalRunnerError(f"prefill failed: {type(err).__name__}: {err}") from err
        state.prefill_ended_at = self.hooks.clock()
        state.decoding = True
        self._report_cache()

    def _drop(self, state: ActiveRequest) -> None:
        """Forgets a prefilling request; its partial prefill is never cached. While a chunk
        runs on the prefill thread its job is dropped when the chunk ends."""
        job = self.jobs.pop(state.task_id, None)
        if job is not None:
            if self._in_flight is not None:
                self._drop_after.append(job)
            else:
                self.engine.drop_prefill(job)
        if state in self.prefilling:
            self.prefilling.remove(state)
        self.active.pop(state.task_id, None)

    def _cancel(self, state: ActiveRequest, reason: str) -> None:
        if not state.decoding:
            self._drop(state)
            reason = "cancelled during prefill"
        super()._cancel(state, reason)

    def _fail_runner(self, message: str) -> int:
        self._drop_all()
        return super()._fail_runner(message)

    def _shutdown(self, task: Optional[Task]) -> int:
        # Prefilling requests stay in self.active: the base ends each with an error.
        self._drop_all()
        return super()._shutdown(task)

    def _drop_all(self) -> None:
        self._stop_prefill_thread()
        for job in [*self.jobs.values(), *self._drop_after]:
            self.engine.drop_prefill(job)
        self.jobs.clear()
        self._drop_after.clear()
        self.prefilling.clear()

    def _stop_prefill_thread(self) -> None:
        """Waits for the chunk under way (its outcome no longer matters) and ends the thread."""
        if self._in_flight is not None:
            try:
                self._in_flight.result()
            except Exception as err:
                log.warning("the prefill chunk under way at the end failed: %s", err)
            self._in_flight = None
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None
