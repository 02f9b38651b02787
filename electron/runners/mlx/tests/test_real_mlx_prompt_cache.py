"""The prompt cache and the interleaved schedule on real MLX, per cache family.

Greedy tokens must not depend on how a prompt reached its cache: prefilled whole,
served from the prompt cache (exactly, or a prefix and the rest prefilled), prefilled
in interleaved chunks beside seven other requests, or alone.
"""
import unittest
from pathlib import Path
import tempfile

from exobar_mlx.interleaved_loop import InterleavedLoop
from exobar_mlx.mlx_engine import MlxEngine
from exobar_mlx.protocol import Cancel

from .helpers import RunnerProcess
from .real_mlx import chat, decode_all, drive, load_engine, params, require_real_mlx, task, tiny_families, tiny_model, token_ids, words
from .test_interleaved_loop import FixedSizer
from .test_step_loop import Harness

#: Every family tools/tiny_models.py builds: KVCache (llama, llama-wide, qwen3),
#: RotatingKVCache (gemma3, a window shorter than the prompts), ArraysCache (lfm2 hybrid,
#: mamba2 state space) and ChunkedKVCache (llama4, served one at a time, its prompt
#: cache refused).
FAMILIES = tiny_families()
REFUSED = ("llama4",)
TOKENS = 8
CHUNK = 16


def cached_engine(family, cap=1 << 30):
    engine = MlxEngine(str(tiny_model(family)), prefill_chunk=CHUNK, max_batch=8, env={},
                       home=Path(tempfile.gettempdir()), prompt_cache_bytes=cap)
    engine.load(lambda *_: None)
    return engine


def run_one(engine, request_id, messages, max_tokens=TOKENS):
    """Prefills and decodes one request alone: (token ids, cached tokens)."""
    prepared = engine.prepare(request_id, f"c-{request_id}", params(messages, max_tokens), 64)
    engine.prefill(prepared, lambda *_: None)
    out = []
    for _ in range(200):
        done = False
        for token in engine.decode_step():
            assert token.error is None, token.error
            out.append(token.token_id)
            done = done or token.finish_reason is not None
        if done:
            break
    return out, prepared.cached_tokens


def conversation(turns):
    messages = [{"role": "user", "content": words(60)}]
    for turn in range(turns):
        messages += [{"role": "assistant", "content": words(12, 200 + 20 * turn)},
                     {"role": "user", "content": words(10, 400 + 20 * turn)}]
    return messages


class GreedyWithAndWithoutACacheHit(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_tokens_are_equal_served_from_the_cache_or_prefilled_whole(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                plain = cached_engine(family, cap=0)
                expected = [run_one(plain, f"p{t}", conversation(t))[0] for t in range(3)]
                repeat, _ = run_one(plain, "again", conversation(0))
                plain.close()
                self.assertEqual(repeat, expected[0])

                engine = cached_engine(family)
                got, cached = zip(*(run_one(engine, f"c{t}", conversation(t)) for t in range(3)))
                exact, exact_cached = run_one(engine, "exact", conversation(2))
                engine.close()
                self.assertEqual(list(got), expected)
                self.assertEqual(exact, expected[2])
                if family in REFUSED:
                    self.assertEqual((list(cached), exact_cached), ([0, 0, 0], 0))
                    self.assertIn("ChunkedKVCache", engine.load_details()["promptCacheReason"])
                    continue
                # A miss, then each turn served the conversation so far.
                self.assertEqual(cached[0], 0)
                self.assertGreater(cached[1], 60)
                self.assertGreater(cached[2], cached[1])
                self.assertGreater(exact_cached, cached[2])

    def test_a_chats_next_turn_finds_the_reply_cached_too(self):
        # The model's own reply sent back, as a chat client does: the finished request's
        # cache (prompt and reply) serves the next turn past the previous prompt.
        for family in FAMILIES:
            if family in REFUSED:
                continue
            with self.subTest(family=family):
                engine = cached_engine(family)
                first = chat(60)
                reply, _ = run_one(engine, "t1", first)
                text = engine.tokenizer.decode(reply)
                second = first + [{"role": "assistant", "content": text}, {"role": "user", "content": words(10, 500)}]
                prompt_1 = len(engine.prepare("x", "x", params(first, 1), 1).payload)
                got, cached = run_one(engine, "t2", second)
                engine.close()
                self.assertGreater(cached, prompt_1)
                plain = cached_engine(family, cap=0)
                expected, _ = run_one(plain, "p2", second)
                plain.close()
                self.assertEqual(got, expected)

    def test_the_warm_up_leaves_nothing_in_the_cache(self):
        # Its finish included: a user's first prompt is never served the warm-up's.
        engine = cached_engine("llama")
        engine.warmup()
        self.assertEqual(engine.prompt_cache_stats()["entries"], 0)
        _, cached = run_one(engine, "first", chat(20))
        engine.close()
        self.assertEqual(cached, 0)

    def test_an_entry_over_the_byte_cap_evicts_the_least_recently_used(self):
        engine = cached_engine("llama")
        run_one(engine, "a", chat(40))
        one_entry = engine.prompt_cache_stats()["bytes"]
        engine.close()
        engine = cached_engine("llama", cap=int(one_entry * 2.5))
        for request_id, offset in (("a", 0), ("b", 300), ("c", 600)):
            run_one(engine, request_id, chat(40, offset=offset))
        stats = engine.prompt_cache_stats()
        self.assertEqual(stats["entries"], 2)
        self.assertLessEqual(stats["bytes"], int(one_entry * 2.5))
        _, cached_a = run_one(engine, "a2", chat(40, offset=0))
        _, cached_c = run_one(engine, "c2", chat(40, offset=600))
        engine.close()
        # The oldest went first: only the chat template's opening, shared by every
        # prompt, is left of it (a longer entry cut back to the common prefix).
        self.assertLess(cached_a, 10)
        self.assertGreater(cached_c, 40)


class HelloSaysWhyTheCacheIsRefused(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_the_hello_refuses_the_cache_for_llama4_and_offers_it_to_the_others(self):
        for family in ("llama", "llama4"):
            with self.subTest(family=family):
                runner = RunnerProcess("--model", str(tiny_model(family)), "--prompt-cache-bytes", "1000000")
                try:
                    hello = runner.wait_for(lambda m: m["type"] == "Hello", timeout=120)
                    cache = hello["promptCache"]
                    self.assertEqual(cache["capBytes"], 1000000)
                    self.assertEqual(cache["supported"], family not in REFUSED)
                    if family in REFUSED:
                        self.assertIn("ChunkedKVCache", cache["reason"])
                    else:
                        self.assertIsNone(cache["reason"])
                    runner.close_stdin()
                    runner.wait_exit(120)
                finally:
                    runner.kill()


def watch_prefill_rows(engine, before=lambda tokens: None):
    """The rows of every prefill pass through the model (prompts prefilled together);
    `before(tokens)` is called first (it may raise, as a failing pass would)."""
    rows = []

    class Watched:
        """The model, its calls' batch sizes recorded (its caches and layers as they are)."""

        def __init__(self, model):
            self.model = model

        def __getattr__(self, name):
            return getattr(self.model, name)

        def __call__(self, tokens, cache=None):
            rows.append(tokens.shape[0])
            before(tokens)
            return self.model(tokens, cache=cache)

    engine.model = Watched(engine.model)
    return rows


class GreedyAloneAndAmongEight(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def collect(self, h, task_ids):
        for task_id in task_ids:
            h.wait_label(f"task:{task_id}:Complete", timeout=600)
        return {task_id: token_ids(h, f"cmd-{task_id}") for task_id in task_ids}

    def assert_alone_gives(self, together, *tasks):
        """Each task alone on a fresh llama engine decodes the tokens it decoded `together`."""
        for task in tasks:
            alone = Harness(engine=cached_engine("llama", cap=0), loop_class=InterleavedLoop)
            alone.loop.sizer = FixedSizer(24)
            alone.start_ready()
            alone.put(task)
            self.assertEqual(self.collect(alone, [task["taskId"]]), {task["taskId"]: together[task["taskId"]]})
            self.assertEqual(alone.shutdown(), 0)

    def test_interleaved_tokens_alone_equal_those_among_eight_with_and_without_a_hit(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                engine = cached_engine(family)
                h = Harness(engine=engine, loop_class=InterleavedLoop)
                h.loop.sizer = FixedSizer(24)
                h.start_ready()
                rows = watch_prefill_rows(engine)  # the model the runner loaded
                h.put(task("alone", 70, 0, TOKENS))
                alone = self.collect(h, ["alone"])["alone"]
                # Eight at once: the same prompt (now a cache hit) and seven others of
                # other lengths, prefilled in shared chunks and decoded together.
                others = [task(f"o{i}", 20 + 11 * i, 100 + 50 * i, TOKENS) for i in range(7)]
                h.put(others[0], others[1], task("again", 70, 0, TOKENS), *others[2:])
                got = self.collect(h, ["again"] + [o["taskId"] for o in others])
                self.assertEqual(h.shutdown(), 0)
                self.assertGreater(len(set(alone)), 2, "the tiny model must not repeat one token")
                self.assertEqual(got["again"], alone)
                # The seven others, waiting together at the same offset, went through the
                # model together (Llama 4's chunked cache cannot be stacked: one by one).
                self.assertEqual(max(rows) > 1, family not in REFUSED, rows)
                # And without the hit: a fresh engine with no cache, the same eight.
                plain = MlxEngine(str(tiny_model(family)), prefill_chunk=CHUNK, max_batch=8, env={},
                                  home=Path(tempfile.gettempdir()))
                plain.load(lambda *_: None)
                h = Harness(engine=plain, loop_class=InterleavedLoop)
                h.loop.sizer = FixedSizer(24)
                h.start_ready()
                h.put(others[0], others[1], task("again", 70, 0, TOKENS), *others[2:])
                fresh = self.collect(h, ["again"] + [o["taskId"] for o in others])
                self.assertEqual(h.shutdown(), 0)
                self.assertEqual(fresh, got)

    def test_a_prompt_cancelled_in_a_stacked_group_leaves_the_others_tokens_as_alone(self):
        # Three prompts stacked pass after pass (their stack kept between passes); one is
        # cancelled after the first pass, and the other two go on stacked without it.
        engine = cached_engine("llama", cap=0)
        h = Harness(engine=engine, loop_class=InterleavedLoop)
        h.loop.sizer = FixedSizer(24)
        h.start_ready()
        # One group on one thread (not split over two threads as with nothing decoding on
        # the CPU): the passes' rows, in order, are what this test reads. After the load,
        # which sets it.
        engine.prefill_beside_decode = False
        rows = watch_prefill_rows(engine, lambda tokens: len(rows) == 1 and h.inbox.put(Cancel("p1")))
        tasks = [task(f"p{i}", 60, 60 * i, TOKENS) for i in range(3)]
        h.put(*tasks)
        h.wait_label("task:p1:Cancelled", timeout=600)
        together = self.collect(h, ["p0", "p2"])
        self.assertEqual(h.shutdown(), 0)
        self.assertEqual(rows[0], 3)
        self.assertEqual(set(rows[1:]), {2}, rows)
        self.assert_alone_gives(together, tasks[0], tasks[2])

    def test_a_kept_stack_is_not_reused_once_its_prompts_moved_on_alone(self):
        # Two prompts stacked for a pass, then each prefilled alone to the same offset (their
        # caches are the same objects, moved in place): the next stacked pass must stack
        # them again, not reuse the stack of the first pass.
        engine = load_engine("llama")
        requests = [(f"s{i}", params(chat(60, 60 * i), TOKENS)) for i in range(2)]
        jobs = [engine.start_prefill(engine.prepare(rid, f"c-{rid}", p, 64)) for rid, p in requests]
        engine.prefill_together(jobs, 8)
        for job in jobs:
            engine.prefill_some(job, 8)
        while jobs[0].remaining > 0:
            engine.prefill_together(jobs, 8)
        for job in jobs:
            engine.finish_prefill(job)
        together = decode_all(engine, {rid: [] for rid, _ in requests})
        for rid, p in requests:
            self.assertEqual(drive(load_engine("llama"), [(rid, p)])[rid], together[rid])

    def test_a_stacked_pass_that_fails_is_run_again_one_prompt_at_a_time(self):
        engine = cached_engine("llama", cap=0)
        h = Harness(engine=engine, loop_class=InterleavedLoop)
        h.loop.sizer = FixedSizer(24)
        h.start_ready()
        engine.prefill_beside_decode = False  # one group on one thread, as above
        failures = []

        def once_out_of_memory(tokens):
            if tokens.shape[0] > 1 and not failures:
                failures.append(tokens.shape[0])
                raise RuntimeError("[metal::malloc] out of memory")

        rows = watch_prefill_rows(engine, once_out_of_memory)
        tasks = [task(f"p{i}", 30, 60 * i, TOKENS) for i in range(3)]
        h.put(*tasks)
        together = self.collect(h, [t["taskId"] for t in tasks])
        self.assertEqual(h.shutdown(), 0)
        # The failed pass took three rows; its prompts went on alone, then stacked again.
        self.assertEqual((failures, rows[:4]), ([3], [3, 1, 1, 1]))
        self.assert_alone_gives(together, *tasks)


if __name__ == "__main__":
    unittest.main()
