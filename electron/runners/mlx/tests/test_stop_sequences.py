"""Stop sequences in the mlx engine: mlx-lm's text matcher over the streamed text, the
text before a match emitted, the match never, the request ended at once naming it.
Against the fake generator (fake_mlx.py: token t reads "<t>"), and on real MLX with the
tiny models under both decoders (batched and, for llama4's chunked caches, sequential)."""
import unittest

from exobar_mlx.protocol import GenerationParams
from exobar_mlx.request_options import OptionError, parse_options
from exobar_mlx.stop_sequences import StopWatch, stop_watch

from .fake_mlx import FakeBatchGenerator
from .real_mlx import chat, load_engine, require_real_mlx
from . import test_mlx_engine


class StopWatchTest(unittest.TestCase):
    def test_a_stop_sequence_split_over_tokens_is_held_then_cut(self):
        watch = StopWatch(["w5 w6", "w9"])
        seen = [(watch.feed(t), watch.matched) for t in ["w1", " w5", " w7", " w5", " w6", " w8"]]
        self.assertEqual(seen, [("w1", None), (" ", None), ("w5 w7", None), (" ", None), ("", "w5 w6"), ("", "w5 w6")])

    def test_the_held_back_text_is_emitted_at_a_natural_end(self):
        watch = StopWatch(["xyz"])
        self.assertEqual((watch.feed("abx"), watch.feed("y"), watch.flush()), ("ab", "", "xy"))

    def test_the_first_met_is_named(self):
        watch = StopWatch(["bbb", "b c"])
        self.assertEqual((watch.feed("a b cbbb"), watch.matched), ("a ", "b c"))

    def test_no_stops_no_watch_and_the_protocol_limits(self):
        self.assertIsNone(stop_watch(()))
        self.assertEqual(parse_options({"stop": ["a", "b"]}).stop, ("a", "b"))
        for bad in (["a"] * 5, [""], "a", [1]):
            with self.assertRaises(OptionError):
                parse_options({"stop": bad})


class FakeEngineStops(unittest.TestCase):
    # The engine tests' fixture, not their tests.
    _fixture = test_mlx_engine.MlxEngineTest
    setUp, tearDown, engine, loaded = _fixture.setUp, _fixture.tearDown, _fixture.engine, _fixture.loaded

    def run_with(self, stop, script, max_tokens=10):
        engine = self.loaded()
        gen = FakeBatchGenerator.instances[-1]
        gen.script[0] = script
        p = GenerationParams([{"role": "user", "content": "w w w"}], max_tokens, None, None, parse_options({"stop": stop}))
        engine.prefill(engine.prepare("t1", "c1", p, 64), lambda *_: None)
        tokens = []
        while not tokens or tokens[-1].finish_reason is None:
            tokens.extend(engine.decode_step())
        return engine, gen, tokens

    def test_the_text_before_a_stop_spanning_tokens_then_stop_naming_it_and_the_slot_freed_at_once(self):
        engine, gen, tokens = self.run_with(["2><13"], [11, 12, 13, 14, 15])
        self.assertEqual("".join(t.text for t in tokens), "<11><1")
        self.assertEqual([(t.finish_reason, t.stop_sequence) for t in tokens][-1], ("stop", "2><13"))
        self.assertEqual(len(tokens), 3)  # no decode after the token that completed it
        self.assertEqual(gen.removed, [0])
        self.assertEqual(engine.batch_size(), 0)

    def test_a_partial_match_is_given_back_at_the_end(self):
        _, _, tokens = self.run_with(["<12>x"], [11, 12], max_tokens=2)
        self.assertEqual("".join(t.text for t in tokens), "<11><12>")
        self.assertEqual((tokens[-1].finish_reason, tokens[-1].stop_sequence), ("length", None))


class RealMlxStops(unittest.TestCase):
    """Random weights: the greedy answer without a stop, then a word of it as the stop."""

    def answer(self, engine, stop=()):
        p = GenerationParams(chat(12), 24, 0.0, None, parse_options({"stop": list(stop)}))
        engine.prefill(engine.prepare("r", "c-r", p, 64), lambda *_: None)
        tokens = []
        while not tokens or tokens[-1].finish_reason is None:
            tokens.extend(t for t in engine.decode_step() if t.request_id == "r")
        self.assertIsNone(tokens[-1].error)
        self.assertEqual(engine.batch_size(), 0)
        return "".join(t.text for t in tokens), tokens

    def check(self, family):
        require_real_mlx(self)
        engine = load_engine(family)
        try:
            full, _ = self.answer(engine)
            words = full.split()
            self.assertGreater(len(words), 3, full)
            stop = words[len(words) // 2]
            expected = full[: full.index(stop)]
            text, tokens = self.answer(engine, [stop])
            self.assertEqual(text, expected)
            self.assertEqual((tokens[-1].finish_reason, tokens[-1].stop_sequence), ("stop", stop))
        finally:
            engine.close()

    def test_batched_llama(self):
        self.check("llama")

    def test_batched_gemma3(self):
        self.check("gemma3")

    def test_sequential_llama4(self):
        self.check("llama4")


if __name__ == "__main__":
    unittest.main()
