"""The interleaved schedule with an engine that prefills beside decode (the mlx engine on
the CPU): chunks run on the prefill thread while the loop's thread decodes, reads tasks
and applies cancels; what a chunk did is settled on the loop's thread. Each pass here is
held at a gate the test opens, so every assertion waits on an event, never on time."""
import threading
import unittest

from exobar_mlx.engine import Engine, RequestError
from exobar_mlx.interleaved_loop import InterleavedLoop
from exobar_mlx.protocol import Cancel

from .helpers import generation
from .test_interleaved_loop import ChunkHookedEngine, FixedSizer, InterleavedHarness


class GatedEngine(ChunkHookedEngine):
    """Each pass of the prompts in `held` waits until the test opens `gate`; `passing` is
    set while one waits. Records the threads passes ran on and every engine event in order."""

    prefill_beside_decode = True

    def __init__(self, held=(), **kwargs):
        super().__init__(**kwargs)
        self.held = set(held)
        self.gate = threading.Event()
        self.passing = threading.Event()
        #: request id -> the threads its passes ran on
        self.pass_threads = {}
        self.events = []
        self.failing = set()
        self.fatal = False
        self.entered = []
        self.held_on = None

    def enter_prefill_thread(self):
        self.entered.append(threading.current_thread())

    def prefill_some(self, job, max_tokens):
        request_id = job.request.request_id
        self.pass_threads.setdefault(request_id, set()).add(threading.current_thread())
        if request_id in self.held and not self.gate.is_set():
            self.held_on = threading.current_thread()
            self.passing.set()
            self.gate.wait(30)
        if self.fatal:
            raise RuntimeError("the device is gone")
        if request_id in self.failing:
            raise RequestError(f"prefill failed: {request_id} is too long for memory")
        done = super().prefill_some(job, max_tokens)
        self.events.append(f"pass:{request_id}")
        return done

    def prefill_together(self, jobs, tokens_each):
        # One job after another through prefill_some above, as the Engine base does.
        return Engine.prefill_together(self, jobs, tokens_each)

    def drop_prefill(self, job):
        self.events.append(f"drop:{job.request.request_id}")
        super().drop_prefill(job)


def beside(engine, chunk=10):
    h = InterleavedHarness(engine=engine, loop_class=InterleavedLoop)
    h.loop.sizer = FixedSizer(chunk)
    return h.start_ready()


def queued_before_start(engine, *requests, chunk=10):
    """A harness whose loop starts with `requests` already queued, so one step admits them all."""
    h = InterleavedHarness(engine=engine, loop_class=InterleavedLoop)
    h.loop.sizer = FixedSizer(chunk)
    h.put({"kind": "LoadModel", "taskId": "load"}, {"kind": "StartWarmup", "taskId": "warm"}, *requests)
    h.thread.start()
    return h


def tokens_of(h, command):
    return [l for l in h.labels() if l.startswith(f"token:{command}:")]


class PrefillBesideDecodeTest(unittest.TestCase):
    def start_long_beside(self, engine, stream_tokens):
        """A stream decodes; at its decode step 2 a long prompt arrives; returns once the
        long prompt's pass is held on the prefill thread."""
        h = beside(engine)
        engine.after_decode = lambda step: step == 2 and h.put(generation("long", words=93, max_tokens=3))
        h.put(generation("stream", max_tokens=stream_tokens))
        self.assertTrue(engine.passing.wait(30))
        return h

    def test_the_streams_decode_to_the_end_while_a_chunk_is_held_on_the_prefill_thread(self):
        engine = GatedEngine(held={"long"})
        h = self.start_long_beside(engine, 300)
        # The long prompt's pass is held: the loop's thread goes on decoding regardless.
        h.wait_label("task:stream:Complete", timeout=30)
        self.assertNotIn("task:long:Complete", h.labels())
        engine.gate.set()
        h.wait_label("task:long:Complete", timeout=30)
        self.assertEqual(h.shutdown(), 0)
        self.assertEqual(len(tokens_of(h, "cmd-stream")), 300)
        # The stream's own prompt, with nothing decoding, on the loop's thread; the long
        # prompt's held pass, beside the stream, on the prefill thread (set up once); its
        # passes after the stream ended on the loop's thread again.
        self.assertEqual(engine.pass_threads["stream"], {h.thread})
        self.assertEqual(engine.entered, [engine.held_on])
        self.assertNotIn(engine.held_on, (h.thread, threading.main_thread()))
        self.assertEqual(engine.pass_threads["long"], {engine.held_on, h.thread})

    def test_a_cancel_during_a_chunk_ends_the_request_at_once_and_its_job_is_dropped_after_the_pass(self):
        engine = GatedEngine(held={"long"})
        h = self.start_long_beside(engine, 10**6)
        h.inbox.put(Cancel("long"))
        h.wait_label("task:long:Cancelled", timeout=30)
        # Cancelled at once, while the pass still holds its job: not dropped under it.
        self.assertNotIn("drop:long", engine.events)
        engine.gate.set()
        h.inbox.put(Cancel("stream"))
        h.wait_label("task:stream:Cancelled", timeout=30)
        self.assertEqual(h.shutdown(), 0)
        self.assertEqual(engine.events.count("drop:long"), 1)
        self.assertLess(engine.events.index("pass:long"), engine.events.index("drop:long"))
        cancelled = h.index("task:long:Cancelled")
        self.assertFalse(any(l.startswith("prefill:cmd-long") for l in h.labels()[cancelled:]))
        self.assertNotIn("task:long:Complete", h.labels())

    def test_a_prompt_whose_pass_fails_fails_alone_and_the_others_go_on(self):
        engine = GatedEngine()
        engine.failing = {"bad"}
        h = beside(engine)
        h.put(generation("stream", max_tokens=20))
        h.wait_label("token:cmd-stream:None")
        h.put(generation("bad", words=40, max_tokens=3), generation("good", words=40, max_tokens=3))
        h.wait_label("task:good:Complete", timeout=30)
        h.wait_label("task:stream:Complete", timeout=30)
        self.assertEqual(h.shutdown(), 0)
        self.assertIn("task:bad:Failed", h.labels())
        self.assertIn("drop:bad", engine.events)

    def test_a_pass_that_breaks_the_engine_fails_the_runner_with_its_reason(self):
        engine = GatedEngine(held={"long"})
        h = self.start_long_beside(engine, 10**6)
        engine.fatal = True
        engine.gate.set()
        h.thread.join(30)
        self.assertFalse(h.thread.is_alive())
        self.assertNotEqual(h.code, 0)
        errors = [m["chunk"]["errorMessage"] for m in h.capture.messages
                  if m["type"] == "ChunkGenerated" and m["chunk"]["kind"] == "ErrorChunk"]
        self.assertTrue(any("the device is gone" in e for e in errors), errors)

    def test_a_shutdown_during_a_chunk_waits_for_the_pass_then_drops_its_job(self):
        engine = GatedEngine(held={"long"})
        h = self.start_long_beside(engine, 10**6)
        h.put({"kind": "Shutdown", "taskId": "bye"})
        engine.gate.set()
        h.thread.join(30)
        self.assertFalse(h.thread.is_alive())
        self.assertEqual(h.code, 0)
        self.assertLess(engine.events.index("pass:long"), engine.events.index("drop:long"))
        self.assertNotIn("task:long:Complete", h.labels())
        self.assertIn("task:stream:Failed", h.labels())

    def test_with_nothing_decoding_several_prompts_prefill_on_both_threads_at_once(self):
        engine = GatedEngine(held={"first"})
        second_passed = threading.Event()
        prefill_some = engine.prefill_some

        def watched(job, max_tokens):
            done = prefill_some(job, max_tokens)
            if job.request.request_id == "second":
                second_passed.set()
            return done

        engine.prefill_some = watched
        h = queued_before_start(engine, generation("first", words=40, max_tokens=3), generation("second", words=40, max_tokens=3))
        self.assertTrue(engine.passing.wait(30))
        # The earlier prompt's pass is held on the loop's thread; the later one's goes on
        # beside it, on the prefill thread.
        self.assertTrue(second_passed.wait(30))
        self.assertIs(engine.held_on, h.thread)
        engine.gate.set()
        h.wait_label("task:first:Complete", timeout=30)
        h.wait_label("task:second:Complete", timeout=30)
        self.assertEqual(h.shutdown(), 0)
        self.assertEqual(engine.pass_threads["first"], {h.thread})
        self.assertEqual(engine.pass_threads["second"], set(engine.entered))
        self.assertNotIn(h.thread, engine.entered)

    def test_with_nothing_decoding_a_prompt_whose_pass_fails_on_either_thread_fails_alone(self):
        for failing in ("first", "second"):
            with self.subTest(failing=failing):
                engine = GatedEngine()
                engine.failing = {failing}
                h = queued_before_start(engine, generation("first", words=40, max_tokens=3), generation("second", words=40, max_tokens=3))
                h.wait_label(f"task:{failing}:Failed", timeout=30)
                other = "second" if failing == "first" else "first"
                h.wait_label(f"task:{other}:Complete", timeout=30)
                self.assertEqual(h.shutdown(), 0)
                self.assertIn(f"drop:{failing}", engine.events)
                self.assertEqual(len(engine.entered), 1)  # the prefill thread took a half

    def test_with_nothing_decoding_a_chunk_runs_on_the_loops_thread(self):
        engine = GatedEngine()
        h = beside(engine)
        h.put(generation("only", words=40, max_tokens=3))
        h.wait_label("task:only:Complete", timeout=30)
        self.assertEqual(h.shutdown(), 0)
        self.assertEqual(engine.pass_threads["only"], {h.thread})
        self.assertEqual(engine.entered, [])


if __name__ == "__main__":
    unittest.main()
