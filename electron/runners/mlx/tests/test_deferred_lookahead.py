"""The lookahead deferred while prompts join (deferred_lookahead.py): the stand-in
forwards everything to mlx.core but async_eval while deferring; on real MLX the step a
prompt joins on starts no lookahead pass and still gives its first token, and the
tokens are mlx-lm's own. Counted from the calls, never from the clock."""
import types
import unittest

from exobar_mlx.deferred_lookahead import DeferrableAsyncEval, install

from .real_mlx import chat, decode_all, load_engine, mlx_lm_greedy, params, require_real_mlx


class RecordingMx:
    """An mlx.core stand-in that records the async_eval calls it gets."""

    def __init__(self):
        self.calls = []
        self.array = object()

    def async_eval(self, *arrays):
        self.calls.append(arrays)


class DeferrableAsyncEvalForwards(unittest.TestCase):
    def test_async_eval_goes_through_unless_deferring_and_everything_else_is_mlx_cores(self):
        mx = RecordingMx()
        deferrable = DeferrableAsyncEval(mx)
        self.assertIs(deferrable.array, mx.array)
        deferrable.async_eval("a")
        with deferrable.deferring():
            deferrable.async_eval("b")
            deferrable.async_eval("c")
        deferrable.async_eval("d")
        self.assertEqual(mx.calls, [("a",), ("d",)])
        self.assertEqual(deferrable.deferred, 2)

    def test_a_failure_inside_the_block_ends_the_deferring(self):
        mx = RecordingMx()
        deferrable = DeferrableAsyncEval(mx)
        with self.assertRaises(RuntimeError):
            with deferrable.deferring():
                raise RuntimeError("a step failed")
        deferrable.async_eval("after")
        self.assertEqual(mx.calls, [("after",)])


class InstallReplacesOnlyMlxCore(unittest.TestCase):
    def setUp(self):
        self.generate = types.ModuleType("mlx_lm.generate")

    def test_it_wraps_mlx_core_once(self):
        mx = RecordingMx()
        self.generate.mx = mx
        first = install(self.generate, mx)
        self.assertIsInstance(self.generate.mx, DeferrableAsyncEval)
        self.assertIs(install(self.generate, mx), first)

    def test_a_module_whose_mx_is_something_else_is_left_as_it_is(self):
        other = RecordingMx()
        self.generate.mx = other
        self.assertIsNone(install(self.generate, RecordingMx()))
        self.assertIs(self.generate.mx, other)


class CountingMx:
    """Wraps the real mlx.core under the stand-in: counts the async_evals that went through."""

    def __init__(self, mx):
        self.mx = mx
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.mx, name)

    def async_eval(self, *arrays):
        self.calls += 1
        self.mx.async_eval(*arrays)


class TheJoiningStepStartsNoLookaheadOnRealMlx(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_first_tokens_come_from_the_step_they_join_on_with_no_lookahead_started(self):
        engine = load_engine("llama")
        self.assertIsNotNone(engine._lookahead)  # the CPU here
        counting = CountingMx(engine._lookahead._mx)
        engine._lookahead._mx = counting
        self.addCleanup(setattr, engine._lookahead, "_mx", counting.mx)
        messages = chat(40)
        for request_id in ("one", "two"):
            prepared = engine.prepare(request_id, f"c-{request_id}", params(messages, 12), 64)
            engine.prefill(prepared, lambda done, total: None)
        tokens = {"one": [], "two": []}
        deferred_before = engine._lookahead.deferred
        joined = engine.decode_step()
        self.assertEqual(sorted(t.request_id for t in joined), ["one", "two"])
        self.assertEqual(counting.calls, 0)
        self.assertGreater(engine._lookahead.deferred, deferred_before)
        for step in (joined, engine.decode_step()):
            for token in step:
                tokens[token.request_id].append(token.token_id)
        self.assertEqual(counting.calls, 1)
        # The tokens are mlx-lm's own, the deferred pass included.
        decode_all(engine, tokens)
        expected, _ = mlx_lm_greedy("llama", messages, 12)
        self.assertEqual(tokens, {"one": expected, "two": expected})

if __name__ == "__main__":
    unittest.main()
