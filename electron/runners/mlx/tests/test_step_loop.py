"""The step loop's semantics, in process, on the test engine with zero timings."""
import threading
import time
import unittest
from typing import Callable, List, Optional

from exobar_mlx.engine import EngineError, GeneratedToken
from exobar_mlx.inbox import Inbox
from exobar_mlx.protocol import Cancel, ProtocolWriter, SetPacing, parse_input_line
from exobar_mlx.step_loop import LoopHooks, LoopOptions, StepLoop
from exobar_mlx.test_engine import TestEngine, TestTimings

from .helpers import CapturingWriter, describe, generation

import json

ZERO = TestTimings(
    admit_overhead_s=0, prefill_fixed_s=0, prefill_tokens_per_s=1e12, decode_step_s=0,
    batch_step_growth=0, total_layers=4, load_s=0, warmup_s=0,
)


class Fault(BaseException):
    pass


class HookedEngine(TestEngine):
    """The test engine with callbacks at prefill-chunk boundaries and after decode steps."""

    def __init__(self, **kwargs):
        super().__init__(timings=ZERO, **kwargs)
        self.on_prefill_chunk: Callable[[str, int], None] = lambda request_id, processed: None
        self.after_decode: Callable[[int], None] = lambda step: None
        self.steps = 0
        self.fail_decode = False

    def prefill(self, request, on_chunk):
        def wrapped(processed, total):
            self.on_prefill_chunk(request.request_id, processed)
            on_chunk(processed, total)

        super().prefill(request, wrapped)

    def decode_step(self) -> List[GeneratedToken]:
        if self.fail_decode:
            raise RuntimeError("GPU said no")
        tokens = super().decode_step()
        self.steps += 1
        self.after_decode(self.steps)
        return tokens


class Harness:
    """A loop on its own thread. `loop_class` picks the schedule (StepLoop: exo)."""

    def __init__(self, engine=None, max_batch=8, hooks: Optional[LoopHooks] = None, loop_class=StepLoop, **loop_kwargs):
        self.engine = engine or HookedEngine(prefill_chunk=10)
        self.capture = CapturingWriter()
        self.inbox = Inbox()
        self.loop = loop_class(self.engine, ProtocolWriter(self.capture), self.inbox,
                               LoopOptions(max_batch=max_batch, default_max_tokens=64), hooks, **loop_kwargs)
        self.code = None
        self.error: Optional[BaseException] = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        try:
            self.code = self.loop.run()
        except BaseException as err:  # a fault hook ends the loop
            self.error = err

    def put(self, *messages):
        for m in messages:
            self.inbox.put(parse_input_line(json.dumps(m)))

    def start_ready(self):
        self.put({"kind": "LoadModel", "taskId": "load"}, {"kind": "StartWarmup", "taskId": "warm"})
        self.thread.start()
        self.wait_label("task:warm:Complete")
        return self

    def labels(self) -> List[str]:
        return [describe(m) for m in self.capture.messages]

    def wait_label(self, label: str, timeout=10.0):
        deadline = time.monotonic() + timeout
        while label not in self.labels():
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise AssertionError(f"no {label} in {self.labels()}")
            time.sleep(0.002)

    def shutdown(self) -> int:
        self.put({"kind": "Shutdown", "taskId": "bye"})
        self.thread.join(10)
        assert not self.thread.is_alive(), "loop did not stop"
        return self.code

    def index(self, label: str) -> int:
        return self.labels().index(label)


class LifecycleTest(unittest.TestCase):
    def test_full_lifecycle_in_the_sims_order(self):
        h = Harness().start_ready()
        h.put(generation("t1", words=5, max_tokens=2))
        h.wait_label("task:t1:Complete")
        self.assertEqual(h.shutdown(), 0)
        labels = h.labels()
        self.assertEqual(
            labels,
            ["runner:RunnerIdle", "ack:load", "task:load:Running"]
            + ["runner:RunnerLoading"] * 5
            + ["runner:RunnerLoaded", "task:load:Complete",
               "ack:warm", "task:warm:Running", "runner:RunnerWarmingUp", "runner:RunnerReady", "task:warm:Complete",
               "ack:t1", "task:t1:Running", "runner:RunnerRunning", "prefill:cmd-t1:0/12", "prefill:cmd-t1:10/12",
               "prefill:cmd-t1:12/12", "token:cmd-t1:None", "token:cmd-t1:length", "task:t1:Complete", "runner:RunnerReady",
               "ack:bye", "task:bye:Running", "runner:RunnerShuttingDown", "task:bye:Complete", "runner:RunnerShutdown"],
        )
        loading = [m["status"] for m in h.capture.messages if describe(m) == "runner:RunnerLoading"]
        self.assertEqual([s["layersLoaded"] for s in loading], [0, 1, 2, 3, 4])
        self.assertTrue(h.engine.closed)

    def test_final_token_carries_usage_and_stats(self):
        h = Harness().start_ready()
        h.put(generation("t1", words=20, max_tokens=4))
        h.wait_label("task:t1:Complete")
        h.shutdown()
        final = [m for m in h.capture.messages if describe(m) == "token:cmd-t1:length"][0]["chunk"]
        self.assertEqual(final["usage"], {"promptTokens": 27, "completionTokens": 4})
        self.assertEqual(final["stats"]["promptTokens"], 27)
        self.assertEqual(final["stats"]["generationTokens"], 4)
        self.assertGreater(final["stats"]["peakMemoryBytes"], 0)

    def test_prefill_progress_after_each_chunk(self):
        h = Harness().start_ready()
        h.put(generation("t1", words=28, max_tokens=1))  # 35 prompt tokens, chunks of 10
        h.wait_label("task:t1:Complete")
        h.shutdown()
        progress = [l for l in h.labels() if l.startswith("prefill:")]
        self.assertEqual(progress, ["prefill:cmd-t1:0/35", "prefill:cmd-t1:10/35", "prefill:cmd-t1:20/35", "prefill:cmd-t1:30/35", "prefill:cmd-t1:35/35"])

    def test_out_of_order_tasks_are_answered(self):
        h = Harness()
        h.put(generation("early"), {"kind": "StartWarmup", "taskId": "w0"})
        h.thread.start()
        h.wait_label("task:w0:Failed")
        h.put({"kind": "LoadModel", "taskId": "l1"})
        h.wait_label("task:l1:Complete")
        h.put({"kind": "LoadModel", "taskId": "l2"})
        h.wait_label("task:l2:Failed")
        self.assertEqual(h.shutdown(), 0)
        labels = h.labels()
        for expected in (["ack:early", "error:cmd-early", "task:early:Failed"], ["ack:w0", "task:w0:Failed"],
                         ["ack:l2", "task:l2:Failed"]):
            start = labels.index(expected[0])
            self.assertEqual(labels[start:start + len(expected)], expected)

    def test_stdin_eof_shuts_down_cleanly(self):
        h = Harness().start_ready()
        h.inbox.close()
        h.thread.join(10)
        self.assertEqual(h.code, 0)
        self.assertEqual(h.labels()[-1], "runner:RunnerShutdown")


class AdmissionTest(unittest.TestCase):
    def test_at_most_one_admission_per_step_and_prefill_inside_the_step(self):
        h = Harness().start_ready()
        h.put(generation("t1", max_tokens=5), generation("t2", max_tokens=5), generation("t3", max_tokens=5))
        h.wait_label("task:t3:Complete")
        h.shutdown()
        labels = h.labels()
        # All three are read (and acknowledged) at once; t2 is admitted only after t1's
        # whole prefill and one decode step, t3 after t2's.
        self.assertLess(h.index("ack:t3"), h.index("prefill:cmd-t1:10/12"))
        self.assertLess(h.index("prefill:cmd-t1:12/12"), h.index("token:cmd-t1:None"))
        self.assertLess(h.index("token:cmd-t1:None"), h.index("prefill:cmd-t2:10/12"))
        self.assertLess(h.index("prefill:cmd-t2:12/12"), h.index("prefill:cmd-t3:10/12"))
        between = labels[h.index("prefill:cmd-t2:10/12"):h.index("prefill:cmd-t3:10/12")]
        self.assertEqual(sum(1 for l in between if l == "token:cmd-t1:None"), 1)

    def test_batch_is_capped_and_tasks_beyond_it_wait_acknowledged(self):
        h = Harness(max_batch=2).start_ready()
        h.put(generation("t1", max_tokens=6), generation("t2", max_tokens=6), generation("t3", max_tokens=2))
        h.wait_label("task:t3:Complete")
        h.shutdown()
        self.assertLess(h.index("ack:t3"), h.index("token:cmd-t1:None"))
        self.assertLess(h.index("task:t1:Complete"), h.index("prefill:cmd-t3:12/12"))

    def test_a_cancel_removes_a_waiting_task_at_the_next_step(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine, max_batch=1).start_ready()
        engine.after_decode = lambda step: step == 3 and h.inbox.put(Cancel("t2"))
        h.put(generation("t1", max_tokens=200), generation("t2", max_tokens=3))
        h.wait_label("task:t1:Complete")
        h.shutdown()
        labels = h.labels()
        self.assertLess(h.index("task:t2:Cancelled"), h.index("task:t1:Complete"))
        self.assertFalse(any(label.startswith("prefill:cmd-t2") for label in labels))
        self.assertLess(h.index("ack:t2"), h.index("token:cmd-t2:cancelled"))
        tokens_before = labels[: h.index("task:t2:Cancelled")].count("token:cmd-t1:None")
        self.assertLessEqual(tokens_before, 4)

    def test_shutdown_overtakes_queued_generation_tasks(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine).start_ready()

        def at_step(step):
            if step == 3:
                h.put(generation("queued"), {"kind": "Shutdown", "taskId": "bye"})

        engine.after_decode = at_step
        h.put(generation("t1", max_tokens=50))
        h.thread.join(10)
        self.assertEqual(h.code, 0)
        labels = h.labels()
        self.assertNotIn("ack:queued", labels)
        self.assertIn("error:cmd-t1", labels)
        self.assertLess(h.index("task:t1:Failed"), h.index("task:bye:Complete"))
        self.assertEqual(labels[-1], "runner:RunnerShutdown")


class CancelTest(unittest.TestCase):
    def test_cancel_at_a_prefill_chunk_boundary(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine).start_ready()

        def chunk(request_id, processed):
            if request_id == "t1" and processed == 20:
                h.inbox.put(Cancel("t1"))

        engine.on_prefill_chunk = chunk
        h.put(generation("t1", words=50, max_tokens=5))
        h.wait_label("task:t1:Cancelled")
        h.shutdown()
        labels = h.labels()
        self.assertEqual(
            labels[h.index("ack:t1"):h.index("task:t1:Cancelled") + 2],
            ["ack:t1", "task:t1:Running", "runner:RunnerRunning", "prefill:cmd-t1:0/57", "prefill:cmd-t1:10/57", "prefill:cmd-t1:20/57",
             "token:cmd-t1:cancelled", "task:t1:Cancelled", "runner:RunnerReady"],
        )
        final = [m for m in h.capture.messages if describe(m) == "token:cmd-t1:cancelled"][0]["chunk"]
        self.assertEqual(final["usage"], {"promptTokens": 57, "completionTokens": 0})

    def test_cancel_after_the_last_chunk_stops_before_the_first_token(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine).start_ready()
        engine.on_prefill_chunk = lambda rid, processed: processed == 12 and h.inbox.put(Cancel("t1"))
        h.put(generation("t1", words=5, max_tokens=5))
        h.wait_label("task:t1:Cancelled")
        h.shutdown()
        self.assertFalse(any(l == "token:cmd-t1:None" for l in h.labels()))

    def test_cancel_for_a_task_not_yet_admitted_is_dropped(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine).start_ready()

        def chunk(request_id, processed):
            if request_id == "t1" and processed == 10:
                h.put(generation("t2", max_tokens=3))
                h.inbox.put(Cancel("t2"))  # arrives while t2 waits in the queue

        engine.on_prefill_chunk = chunk
        h.put(generation("t1", words=30, max_tokens=3))
        h.wait_label("task:t2:Complete")
        h.shutdown()
        self.assertNotIn("task:t2:Cancelled", h.labels())

    def test_cancel_during_decode_applies_at_the_next_100_step_check(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine).start_ready()
        engine.after_decode = lambda step: step == 5 and h.inbox.put(Cancel("t1"))
        h.put(generation("t1", max_tokens=250))
        h.wait_label("task:t1:Cancelled")
        h.shutdown()
        final = [m for m in h.capture.messages if describe(m) == "token:cmd-t1:cancelled"][0]["chunk"]
        self.assertEqual(final["usage"]["completionTokens"], 100)


class FailureTest(unittest.TestCase):
    def test_crash_fault_after_three_tokens(self):
        def crash():
            raise Fault("crash")

        h = Harness(hooks=LoopHooks(crash=crash)).start_ready()
        h.put(generation("t1", max_tokens=10, content="EXOBAR RUNNER MUST CRASH"))
        h.thread.join(10)
        self.assertEqual(str(h.error), "crash")
        self.assertEqual(sum(1 for l in h.labels() if l == "token:cmd-t1:None"), 3)

    def test_hang_fault_right_after_admission(self):
        def hang():
            raise Fault("hang")

        h = Harness(hooks=LoopHooks(hang=hang)).start_ready()
        h.put(generation("t1", max_tokens=10, content="x EXOBAR RUNNER MUST HANG"))
        h.thread.join(10)
        self.assertEqual(str(h.error), "hang")
        self.assertEqual(h.labels()[-3:], ["ack:t1", "task:t1:Running", "runner:RunnerRunning"])

    def test_load_failure_is_an_error_chunk_a_failed_status_and_exit_1(self):
        class Broken(HookedEngine):
            def load(self, on_progress):
                raise EngineError("model 'x' is not on this Mac")

        h = Harness(Broken())
        h.put({"kind": "LoadModel", "taskId": "load"})
        h.thread.start()
        h.thread.join(10)
        self.assertEqual(h.code, 1)
        self.assertEqual(h.labels()[-3:], ["error:load", "task:load:Failed", "runner:RunnerFailed"])
        failed = h.capture.messages[-1]["status"]
        self.assertIn("not on this Mac", failed["errorMessage"])

    def test_decode_failure_fails_every_active_request(self):
        engine = HookedEngine(prefill_chunk=10)
        h = Harness(engine).start_ready()
        engine.after_decode = lambda step: step == 2 and setattr(engine, "fail_decode", True)
        h.put(generation("t1", max_tokens=50))
        h.thread.join(10)
        self.assertEqual(h.code, 1)
        self.assertEqual(h.labels()[-3:], ["error:cmd-t1", "task:t1:Failed", "runner:RunnerFailed"])
        self.assertIn("GPU said no", h.capture.messages[-1]["status"]["errorMessage"])



class PacingTest(unittest.TestCase):
    def test_a_pacing_read_at_a_chunk_boundary_shapes_the_next_chunk_and_pauses(self):
        engine = HookedEngine(prefill_chunk=100)
        pauses: List[float] = []
        engine.pause = pauses.append  # the pause is observed, not slept
        h = Harness(engine).start_ready()

        def chunk(request_id, processed):
            if request_id == "t1" and processed == 100:
                h.inbox.put(SetPacing("p1", 64, 30))

        engine.on_prefill_chunk = chunk
        h.put(generation("t1", words=400, max_tokens=2))
        h.wait_label("task:t1:Complete")
        h.shutdown()
        labels = h.labels()
        progress = [label for label in labels if label.startswith("prefill:cmd-t1:") and not label.startswith("prefill:cmd-t1:0/")]
        # Read after the first 100-token chunk, acknowledged there, 64-token chunks from the next one.
        self.assertEqual(progress[:4], ["prefill:cmd-t1:100/407", "prefill:cmd-t1:164/407", "prefill:cmd-t1:228/407", "prefill:cmd-t1:292/407"])
        self.assertEqual(progress[-1], "prefill:cmd-t1:407/407")
        applied = next(m for m in h.capture.messages if m["type"] == "PrefillPacingApplied")
        self.assertEqual(applied, {"type": "PrefillPacingApplied", "pacingId": "p1", "chunkTokens": 64, "pauseMs": 30, "commandId": "cmd-t1"})
        self.assertLess(labels.index("prefill:cmd-t1:100/407"), h.capture.messages.index(applied))
        self.assertLess(h.capture.messages.index(applied), labels.index("prefill:cmd-t1:164/407"))
        # A pause after every chunk from the one it was read at on, but the prompt's last.
        self.assertEqual(pauses, [0.03] * (len(progress) - 1))

    def test_a_pacing_while_idle_is_acknowledged_at_once_and_null_goes_back_to_the_default_chunk(self):
        engine = HookedEngine(prefill_chunk=100)
        h = Harness(engine).start_ready()
        h.inbox.put(SetPacing("small", 64, 0))
        deadline = time.monotonic() + 5
        while not any(m["type"] == "PrefillPacingApplied" for m in h.capture.messages):
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.002)
        self.assertEqual(engine.prefill_chunk, 64)
        h.inbox.put(SetPacing("full", None, 0))
        deadline = time.monotonic() + 5
        while sum(m["type"] == "PrefillPacingApplied" for m in h.capture.messages) < 2:
            self.assertLess(time.monotonic(), deadline)
            time.sleep(0.002)
        self.assertEqual(engine.prefill_chunk, 100)
        applied = [m for m in h.capture.messages if m["type"] == "PrefillPacingApplied"]
        self.assertEqual([m["commandId"] for m in applied], [None, None])
        self.assertEqual(h.shutdown(), 0)


class EngineLimitsTest(unittest.TestCase):
    def test_an_error_token_fails_only_its_request(self):
        class OneFails(HookedEngine):
            def decode_step(self):
                out = []
                for token in super().decode_step():
                    if token.request_id == "bad":
                        self.remove("bad")
                        token = GeneratedToken("bad", -1, "", None, error="sampling failed: boom")
                    out.append(token)
                return out

        h = Harness(engine=OneFails(prefill_chunk=10)).start_ready()
        h.put(generation("ok", max_tokens=4), generation("bad", max_tokens=4))
        h.wait_label("task:ok:Complete")
        labels = h.labels()
        self.assertIn("error:cmd-bad", labels)
        self.assertIn("task:bad:Failed", labels)
        self.assertNotIn("runner:RunnerFailed", labels)
        self.assertEqual(h.shutdown(), 0)

    def test_an_engine_limit_of_one_admits_the_next_request_when_the_first_ends(self):
        class OneAtATime(HookedEngine):
            def concurrency_limit(self):
                return 1

        h = Harness(engine=OneAtATime(prefill_chunk=10)).start_ready()
        h.put(generation("a", max_tokens=3), generation("b", max_tokens=3))
        h.wait_label("task:b:Complete")
        self.assertLess(h.index("ack:b"), h.index("task:a:Complete"))
        self.assertLess(h.index("task:a:Complete"), h.index("prefill:cmd-b:12/12"))
        self.assertEqual(h.shutdown(), 0)


if __name__ == "__main__":
    unittest.main()
