"""The interleaved schedule's semantics, in process, on the test engine with zero
timings and a fixed chunk: admission of every waiting request, one prefill chunk
between decode steps, cancels at every step, the prompt cache through the loop."""
import unittest

from exobar_mlx.chunk_sizer import FIRST_CHUNK_TOKENS, ChunkSizer, bounded_chunk
from exobar_mlx.interleaved_loop import InterleavedLoop
from exobar_mlx.protocol import MIN_STACKED_ROW_TOKENS, Cancel
from exobar_mlx.step_loop import LoopHooks, StepLoop

from .helpers import generation
from .test_step_loop import Harness, HookedEngine

CHUNK = 10


class FixedSizer(ChunkSizer):
    """A chunk of `CHUNK` tokens whatever the (zero-timing) engine measures."""

    def __init__(self, tokens=CHUNK):
        super().__init__(250)
        self.fixed = tokens

    def tokens(self):
        return self.fixed


class ChunkHookedEngine(HookedEngine):
    """Calls after_chunk(request_id, done) after each interleaved prefill chunk. With a
    `clock` (a one-item list, seconds), a pass over a chunk (one prompt's, or the same
    tokens of prompts prefilled together) costs `chunk_s` and a decode step `step_s` on
    it and nothing else moves it: the loop's time is the engine's work. `passes` lists
    each pass's request ids."""

    def __init__(self, clock=None, chunk_s=0.0, step_s=0.0, **kwargs):
        super().__init__(**kwargs)
        self.after_chunk = lambda request_id, done: None
        self.clock, self.chunk_s, self.step_s = clock, chunk_s, step_s
        self.passes = []

    def prefill_some(self, job, max_tokens):
        done = super().prefill_some(job, max_tokens)
        self._pass([job])
        return done

    def prefill_together(self, jobs, tokens_each):
        if len(jobs) < 2:
            return super().prefill_together(jobs, tokens_each)
        for job in jobs:
            super().prefill_some(job, tokens_each)
        self._pass(jobs)
        return []

    def _pass(self, jobs):
        self.passes.append([job.request.request_id for job in jobs])
        if self.clock is not None:
            self.clock[0] += self.chunk_s
        for job in jobs:
            self.after_chunk(job.request.request_id, job.done)

    def decode_step(self):
        if self.clock is not None and self.batch_size() > 0:
            self.clock[0] += self.step_s
        return super().decode_step()


class ConversationCachingEngine(ChunkHookedEngine):
    """Caches a finished request's prompt and reply, as the mlx engine does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.prompts = {}

    def finish_prefill(self, job):
        self.prompts[job.request.request_id] = job.request.payload[1]
        super().finish_prefill(job)

    def decode_step(self):
        tokens = super().decode_step()
        for token in tokens:
            if token.finish_reason is not None:
                self.prompt_cache.insert(tuple(self.prompts[token.request_id]) + ("reply",) * 4)
        return tokens


def clocked(chunk_s=1.0, step_s=0.25, **kwargs):
    """An engine whose chunks and decode steps are the only time there is."""
    clock = [0.0]
    engine = ChunkHookedEngine(clock=clock, chunk_s=chunk_s, step_s=step_s, **kwargs)
    return engine, LoopHooks(clock=lambda: clock[0])


class InterleavedHarness(Harness):
    """The step loop's harness, its labels without the 0-token progress each request
    reports at admission (its prefill begins): these tests follow the chunks."""

    def labels(self):
        return [l for l in super().labels() if not (l.startswith("prefill:") and l.split(":")[2].startswith("0/"))]

    def all_labels(self):
        return super().labels()


def interleaved(engine=None, max_batch=8, chunk=CHUNK, hooks=None):
    h = InterleavedHarness(engine=engine or ChunkHookedEngine(), max_batch=max_batch, loop_class=InterleavedLoop, hooks=hooks)
    h.loop.sizer = FixedSizer(chunk)
    return h.start_ready()


def words(n, offset=0):
    return " ".join(f"w{offset + i}" for i in range(n))


def chat(task_id, messages, max_tokens=3):
    message = generation(task_id, max_tokens=max_tokens)
    message["params"]["messages"] = messages
    return message


def progress(labels, command):
    return [int(l.split(":")[2].split("/")[0]) for l in labels if l.startswith(f"prefill:{command}:")]


def final_usage(h, task_id):
    final = [m for m in h.capture.messages if m["type"] == "ChunkGenerated" and m["commandId"] == f"cmd-{task_id}"
             and m["chunk"]["kind"] == "TokenChunk" and m["chunk"]["finishReason"] is not None]
    return final[-1]["chunk"]["usage"]


class ChunkSizerTest(unittest.TestCase):
    def test_first_chunk_is_conservative_then_sized_from_the_measured_rate(self):
        sizer = ChunkSizer(250)
        self.assertEqual(sizer.tokens(), FIRST_CHUNK_TOKENS)
        sizer.observe(1000, 1.0)  # 1,000 tokens/s: 250 ms is 250 tokens
        self.assertEqual(sizer.tokens(), 250)

    def test_the_chunk_stays_within_16_and_4096_tokens(self):
        self.assertEqual(bounded_chunk(40, 250), 16)  # a loaded CPU: 10 tokens would cost more than they yield
        self.assertEqual(bounded_chunk(100, 250), 25)  # a CPU: below the pacing's 64, so the chunk still takes 250 ms
        self.assertEqual(bounded_chunk(1e6, 250), 4096)  # a fast GPU
        self.assertEqual(ChunkSizer(250, rate_hint=4000).tokens(), 1000)


class InterleavedAdmissionTest(unittest.TestCase):
    def test_each_request_reports_0_tokens_when_admitted_before_its_first_chunk(self):
        h = interleaved()
        h.put(generation("t1", max_tokens=2), generation("t2", max_tokens=2))
        h.wait_label("task:t2:Complete")
        labels = h.all_labels()
        for command in ("cmd-t1", "cmd-t2"):
            reports = [l for l in labels if l.startswith(f"prefill:{command}:")]
            self.assertTrue(reports[0].startswith(f"prefill:{command}:0/"), reports)
            self.assertLess(labels.index(f"ack:t{command[-1]}"), labels.index(reports[0]))
        self.assertEqual(h.shutdown(), 0)

    def test_every_waiting_request_is_admitted_and_prompts_waiting_together_prefill_together(self):
        h = interleaved()
        h.put(generation("t1", max_tokens=5), generation("t2", max_tokens=5), generation("t3", max_tokens=5))
        h.wait_label("task:t3:Complete")
        h.shutdown()
        labels = h.labels()
        self.assertLess(h.index("ack:t3"), h.index("prefill:cmd-t1:8/12"))
        # One chunk of 10 per step, the three prompts at the same offset in one pass: a
        # third of the chunk each is below a stacked row's floor, so 8 tokens each, then
        # the last 4; they end their prefill together and take their first tokens in the
        # same step.
        self.assertEqual(MIN_STACKED_ROW_TOKENS, 8)
        for command in ("cmd-t1", "cmd-t2", "cmd-t3"):
            self.assertEqual(progress(labels, command), [8, 12])
        self.assertEqual(h.engine.passes, [["t1", "t2", "t3"]] * 2)
        self.assertLess(h.index("prefill:cmd-t3:12/12"), h.index("token:cmd-t1:None"))

    def test_a_prompt_at_another_offset_gets_its_own_pass_in_the_same_chunk(self):
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        h = interleaved(engine, chunk=20, hooks=hooks)
        # t1 (64 tokens) is 60 tokens in, three chunks, when t2 and t3 (26 each) arrive:
        # too far ahead for them to catch up.
        engine.after_chunk = lambda request_id, done: request_id == "t1" and done == 60 and h.put(
            generation("t2", words=19, max_tokens=2), generation("t3", words=19, max_tokens=2))
        h.put(generation("t1", words=57, max_tokens=2))
        h.wait_label("task:t3:Complete")
        h.shutdown()
        # The next chunk: t1's last 4 first (arrival order), then t2 and t3 together in
        # one pass over what the chunk has left, 8 tokens each; then 10 each and their last 8.
        self.assertEqual(engine.passes, [["t1"]] * 4 + [["t2", "t3"]] * 3)
        self.assertEqual(progress(h.labels(), "cmd-t2"), [8, 18, 26])
        self.assertEqual(progress(h.labels(), "cmd-t3"), [8, 18, 26])

    def test_prompts_a_chunk_behind_the_first_catch_up_with_it_then_go_on_together(self):
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        h = interleaved(engine, chunk=20, hooks=hooks)
        # t1 is one chunk in when t2 and t3 arrive (they came while its chunk ran): all 60 tokens.
        engine.after_chunk = lambda request_id, done: request_id == "t1" and done == 20 and h.put(
            generation("t2", words=53, max_tokens=2), generation("t3", words=53, max_tokens=2))
        h.put(generation("t1", words=53, max_tokens=2))
        h.wait_label("task:t3:Complete")
        h.shutdown()
        # t2 and t3 go first, 10 tokens each per chunk, up to t1's 20, never past it; from
        # there one pass takes all three (8 tokens each: a stacked row's floor), and they
        # end together.
        self.assertEqual(engine.passes, [["t1"]] + [["t2", "t3"]] * 2 + [["t1", "t2", "t3"]] * 5)
        self.assertEqual(progress(h.labels(), "cmd-t1"), [20, 28, 36, 44, 52, 60])
        self.assertEqual(progress(h.labels(), "cmd-t2"), [10, 20, 28, 36, 44, 52, 60])
        labels = h.labels()
        self.assertLess(max(labels.index(f"prefill:cmd-{t}:60/60") for t in ("t1", "t2", "t3")),
                        min(labels.index(f"token:cmd-{t}:None") for t in ("t1", "t2", "t3")))

    def test_the_batch_cap_holds_and_the_rest_wait_acknowledged(self):
        h = interleaved(max_batch=2)
        h.put(generation("t1", max_tokens=6), generation("t2", max_tokens=6), generation("t3", max_tokens=2))
        h.wait_label("task:t3:Complete")
        h.shutdown()
        self.assertLess(h.index("ack:t3"), h.index("prefill:cmd-t1:12/12"))
        self.assertLess(h.index("task:t1:Complete"), h.index("prefill:cmd-t3:10/12"))


class InterleavedChunkingTest(unittest.TestCase):
    def test_a_long_prompt_is_cut_into_chunks_with_the_streams_share_of_decode_steps_between_them(self):
        # A chunk costs 1 s and a decode step 0.25 s: one stream beside one prompt
        # decodes for as long as each chunk took, 4 steps, then the next chunk comes.
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        h = interleaved(engine, hooks=hooks)
        # The long prompt (100 tokens: 10 chunks) arrives while the stream decodes.
        engine.after_decode = lambda step: step == 2 and h.put(generation("long", words=93, max_tokens=2))
        h.put(generation("stream", max_tokens=60))
        h.wait_label("task:long:Complete")
        h.wait_label("task:stream:Complete")
        h.shutdown()
        labels = h.labels()
        self.assertEqual(progress(labels, "cmd-long"), [10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
        marks = [i for i, l in enumerate(labels) if l.startswith("prefill:cmd-long:")]
        for before, after in zip(marks, marks[1:]):
            between = labels[before:after]
            self.assertEqual(between.count("token:cmd-stream:None"), 4, between)

    def test_prompts_arriving_together_lose_only_the_decoding_streams_share(self):
        # One stream decodes, four prompts prefill: after a 1 s chunk, 1/4 s of decoding.
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        h = interleaved(engine, hooks=hooks)
        prompts = [generation(f"p{i}", words=93, max_tokens=1) for i in range(4)]
        engine.after_decode = lambda step: step == 2 and h.put(*prompts)
        h.put(generation("stream", max_tokens=200))
        h.wait_label("task:p3:Complete")
        h.shutdown()
        labels = h.labels()
        marks = [i for i, l in enumerate(labels) if l.startswith("prefill:cmd-p0:")]
        for before, after in zip(marks, marks[1:]):
            self.assertEqual(labels[before:after].count("token:cmd-stream:None"), 1)

    def test_many_streams_take_at_most_half_the_time_from_a_prompt(self):
        # Four streams decode, one prompt prefills: decoding for the chunk's time, not four times it.
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        h = interleaved(engine, hooks=hooks)
        engine.after_decode = lambda step: step == 15 and h.put(generation("long", words=93, max_tokens=1))
        h.put(*[generation(f"s{i}", max_tokens=120) for i in range(4)])
        h.wait_label("task:long:Complete")
        h.shutdown()
        labels = h.labels()
        marks = [i for i, l in enumerate(labels) if l.startswith("prefill:cmd-long:")]
        counts = [labels[a:b].count("token:cmd-s0:None") for a, b in zip(marks, marks[1:])]
        # (The first chunk is shared with the last stream's prompt end: two engine calls, 2 s.)
        self.assertEqual(counts[1:], [4] * (len(counts) - 1))

    def test_with_nothing_decoding_chunks_follow_each_other(self):
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        h = interleaved(engine, hooks=hooks)
        h.put(generation("long", words=93, max_tokens=1))
        h.wait_label("task:long:Complete")
        h.shutdown()
        self.assertEqual(progress(h.labels(), "cmd-long"), [10, 20, 30, 40, 50, 60, 70, 80, 90, 100])
        self.assertEqual(engine.steps, 1)  # the first token's step only

    def test_pacing_chunk_caps_the_measured_chunk(self):
        h = interleaved(chunk=50)
        h.put({"kind": "SetPrefillPacing", "pacingId": "p1", "chunkTokens": 64, "pauseMs": 0})
        h.put(generation("t1", words=193, max_tokens=1))  # 200 prompt tokens
        h.wait_label("task:t1:Complete")
        h.shutdown()
        self.assertEqual(progress(h.labels(), "cmd-t1"), [50, 100, 150, 200])
        h2 = interleaved(chunk=100)
        h2.put({"kind": "SetPrefillPacing", "pacingId": "p1", "chunkTokens": 64, "pauseMs": 0})
        h2.put(generation("t1", words=193, max_tokens=1))
        h2.wait_label("task:t1:Complete")
        h2.shutdown()
        self.assertEqual(progress(h2.labels(), "cmd-t1"), [64, 128, 192, 200])


class InterleavedPacingTest(unittest.TestCase):
    def test_the_pacings_pause_follows_each_chunk_but_the_last_and_no_decode_only_step(self):
        engine, hooks = clocked(chunk_s=1.0, step_s=0.25)
        pauses = []
        engine.pause = lambda seconds: pauses.append(seconds)
        h = interleaved(engine, hooks=hooks)
        h.put({"kind": "SetPrefillPacing", "pacingId": "p1", "chunkTokens": None, "pauseMs": 20})
        engine.after_decode = lambda step: step == 2 and h.put(generation("long", words=93, max_tokens=1))
        h.put(generation("stream", max_tokens=80))
        h.wait_label("task:long:Complete")
        h.wait_label("task:stream:Complete")
        h.shutdown()
        # The stream's own prompt (2 chunks) and the long one (10): a pause after each but a prompt's last.
        self.assertEqual(pauses, [0.02] * (1 + 9))


class InterleavedCancelTest(unittest.TestCase):
    def test_a_cancel_is_applied_at_every_step_in_prefill_and_in_decode(self):
        # The long request (100 prompt tokens: 10 chunks, then 20 tokens) is cancelled
        # after decode step 1 + k of the stream beside it, for every k across both phases.
        for k in range(1, 26):
            with self.subTest(step=k):
                engine = ChunkHookedEngine()
                h = interleaved(engine)

                def after(step, h=h):
                    if step == 1:
                        h.put(generation("long", words=93, max_tokens=20))
                    if step == 1 + k:
                        h.inbox.put(Cancel("long"))

                engine.after_decode = after
                h.put(generation("stream", max_tokens=40))
                h.wait_label("task:long:Cancelled")
                h.wait_label("task:stream:Complete")
                h.shutdown()
                labels = h.labels()
                cancelled = h.index("task:long:Cancelled")
                # The cancel arrives during decode step 1 + k and is applied at the next
                # step, before that step's chunk or token: before the stream's token 2 + k.
                stream_tokens = [i for i, l in enumerate(labels) if l == "token:cmd-stream:None"]
                self.assertLess(cancelled, stream_tokens[1 + k])
                long_events = [l for l in labels[:cancelled] if l.startswith("prefill:cmd-long") or l == "token:cmd-long:None"]
                self.assertLessEqual(len(long_events), k + 1)
                self.assertFalse(any(l.startswith("prefill:cmd-long") for l in labels[cancelled:]))
                self.assertIn("token:cmd-long:cancelled", labels)
                self.assertNotIn("task:long:Complete", labels)

    def test_a_cancel_for_a_waiting_request_takes_it_out(self):
        engine = ChunkHookedEngine()
        h = interleaved(engine, max_batch=1)
        engine.after_decode = lambda step: step == 3 and h.inbox.put(Cancel("t2"))
        h.put(generation("t1", max_tokens=30), generation("t2", max_tokens=3))
        h.wait_label("task:t1:Complete")
        h.shutdown()
        self.assertLess(h.index("task:t2:Cancelled"), h.index("task:t1:Complete"))
        self.assertFalse(any(label.startswith("prefill:cmd-t2") for label in h.labels()))


class InterleavedPromptCacheTest(unittest.TestCase):
    def test_a_growing_chat_is_served_from_the_cache_turn_after_turn(self):
        engine = ChunkHookedEngine(prompt_cache_bytes=1 << 30)
        h = interleaved(engine)
        messages = [{"role": "system", "content": words(40)}, {"role": "user", "content": words(20, 100)}]
        cached = []
        for turn in range(4):
            h.put(chat(f"turn{turn}", messages))
            h.wait_label(f"task:turn{turn}:Complete")
            cached.append(final_usage(h, f"turn{turn}")["cachedTokens"])
            messages = messages + [{"role": "assistant", "content": words(10, 200 + turn * 10)},
                                   {"role": "user", "content": words(15, 400 + turn * 20)}]
        h.shutdown()
        self.assertEqual(cached[0], 0)
        self.assertTrue(all(b > a for a, b in zip(cached, cached[1:])), cached)
        stats = [m for m in h.capture.messages if m["type"] == "PromptCacheStats"]
        self.assertEqual(len(stats), 4)
        self.assertEqual((stats[-1]["hits"], stats[-1]["misses"]), (3, 1))
        self.assertEqual(stats[-1]["hitTokens"], sum(cached))
        self.assertEqual(stats[-1]["capBytes"], 1 << 30)
        # The first turn's prefill takes whole chunks; the fourth only its new tokens.
        self.assertLess(len(progress(h.labels(), "cmd-turn3")), len(progress(h.labels(), "cmd-turn0")) + 4)

    def test_a_cancelled_partial_prefill_is_never_served(self):
        engine = ChunkHookedEngine(prompt_cache_bytes=1 << 30)
        h = interleaved(engine)
        prompt = [{"role": "user", "content": words(93)}]
        engine.after_chunk = lambda request_id, done: request_id == "cut" and done == 30 and h.inbox.put(Cancel("cut"))
        h.put(chat("cut", prompt, max_tokens=2))
        h.wait_label("task:cut:Cancelled")
        h.put(chat("again", prompt, max_tokens=2))
        h.wait_label("task:again:Complete")
        h.put(chat("third", prompt, max_tokens=2))
        h.wait_label("task:third:Complete")
        h.shutdown()
        self.assertEqual(final_usage(h, "again")["cachedTokens"], 0)
        self.assertEqual(final_usage(h, "third")["cachedTokens"], 100)

    def test_the_stats_are_sent_again_when_a_finished_conversation_is_cached(self):
        for loop_class in (InterleavedLoop, StepLoop):
            with self.subTest(schedule=loop_class.__name__):
                engine = ConversationCachingEngine(prompt_cache_bytes=1 << 30)
                h = interleaved(engine) if loop_class is InterleavedLoop else Harness(
                    engine=engine, loop_class=StepLoop).start_ready()
                h.put(chat("t1", [{"role": "user", "content": words(20)}], max_tokens=4))
                h.wait_label("task:t1:Complete")
                h.shutdown()
                kinds = [m["type"] for m in h.capture.messages]
                stats = [m for m in h.capture.messages if m["type"] == "PromptCacheStats"]
                # One after the prefill (the prompt), one after the last token (prompt and reply).
                self.assertEqual(len(stats), 2)
                last_token = max(i for i, m in enumerate(h.capture.messages) if m["type"] == "ChunkGenerated"
                                 and m["chunk"]["kind"] == "TokenChunk")
                self.assertGreater(kinds.index("PromptCacheStats", last_token), last_token)
                self.assertGreater(stats[1]["bytes"], stats[0]["bytes"])

    def test_no_stats_without_a_cache(self):
        h = interleaved()
        h.put(generation("t1"))
        h.wait_label("task:t1:Complete")
        h.shutdown()
        self.assertFalse(any(m["type"] == "PromptCacheStats" for m in h.capture.messages))
        self.assertNotIn("cachedTokens", final_usage(h, "t1"))


if __name__ == "__main__":
    unittest.main()
