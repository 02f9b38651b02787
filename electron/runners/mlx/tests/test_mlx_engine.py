"""The mlx engine's glue to mlx-lm, against a faithful fake of the calls it makes
(MLX itself only runs on Apple silicon; docs/mlx-manual-check.md covers the real run)."""
import tempfile
import unittest
from pathlib import Path

from exobar_mlx.engine import EngineUnavailableError, ModelNotFoundError, PrefillCancelled
from exobar_mlx.mlx_engine import MlxEngine, import_mlx
from exobar_mlx.protocol import GenerationParams

from .fake_mlx import FakeBatchGenerator, FakeTokenizer, OldBatchGenerator, make_api, make_model_dir


def params(words=7, max_tokens=5, temperature=None, seed=None):
    return GenerationParams([{"role": "user", "content": " ".join(["w"] * words)}], max_tokens, temperature, seed)


class MlxEngineTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        self.model_dir = make_model_dir(self.root / "Llama-3.2-1B-Instruct-4bit", layers=3)
        FakeBatchGenerator.returns_tuple = False

    def tearDown(self):
        self._tmp.cleanup()

    def engine(self, api=None, chunk=4, **kwargs):
        self.api = api or make_api()
        return MlxEngine(str(self.model_dir), prefill_chunk=chunk, max_batch=8, importer=lambda: self.api,
                         env={}, home=self.root, **kwargs)

    def loaded(self, api=None, chunk=4):
        engine = self.engine(api, chunk)
        engine.load(lambda *_: None)
        return engine

    def test_load_reports_layers_and_configures_the_batch_generator(self):
        engine = self.engine()
        progress = []
        engine.load(lambda loaded, total: progress.append((loaded, total)))
        self.assertEqual(progress, [(0, 3), (1, 3), (2, 3), (3, 3)])
        self.assertEqual(self.api.calls["load"], [(str(self.model_dir.resolve()), True)])
        gen = FakeBatchGenerator.instances[-1]
        self.assertEqual(gen.kwargs["prefill_batch_size"], 1)
        self.assertEqual(gen.kwargs["completion_batch_size"], 8)
        self.assertEqual(gen.kwargs["prefill_step_size"], 4)

    def test_missing_model_fails_before_mlx_is_imported(self):
        imported = []
        engine = MlxEngine("org/absent", importer=lambda: imported.append(1), env={}, home=self.root)
        with self.assertRaises(ModelNotFoundError):
            engine.load(lambda *_: None)
        self.assertEqual(imported, [])

    def test_mlx_lm_too_old_is_a_clear_error(self):
        with self.assertRaisesRegex(EngineUnavailableError, "0.99-fake is too old"):
            self.loaded(make_api(batch_cls=OldBatchGenerator))

    def test_prefill_in_chunks_then_hand_the_cache_to_the_batch(self):
        engine = self.loaded(chunk=4)
        request = engine.prepare("t1", "c1", params(words=7), 64)  # 1 + 7 + 2 = 10 tokens
        self.assertEqual(request.prompt_tokens, 10)
        seen = []
        engine.prefill(request, lambda processed, total: seen.append((processed, total)))
        self.assertEqual([p for p in seen if p[0] < 10], [(4, 10), (8, 10)])
        self.assertEqual(seen[-1], (10, 10))
        call = self.api.calls["stream"][-1]
        self.assertEqual((len(call["prompt"]), call["max_tokens"], call["step"]), (9, 1, 4))
        gen = FakeBatchGenerator.instances[-1]
        entry = gen.inserted[-1]
        self.assertEqual(entry["prompt"], request.payload[-2:])
        # the cache holds the prompt minus the two tokens the batch re-reads
        self.assertEqual([c.offset for c in entry["cache"]], [8, 8, 8])
        self.assertEqual(entry["max_tokens"], 5)
        self.assertEqual(entry["sampler"], ("sampler", 0.7))
        self.assertEqual(engine.batch_size(), 1)

    def test_cancel_raised_at_a_chunk_boundary_leaves_the_batch_untouched(self):
        engine = self.loaded(chunk=4)
        request = engine.prepare("t1", "c1", params(words=7), 64)

        def on_chunk(processed, total):
            if processed == 8:
                raise PrefillCancelled()

        with self.assertRaises(PrefillCancelled):
            engine.prefill(request, on_chunk)
        self.assertEqual(FakeBatchGenerator.instances[-1].inserted, [])
        self.assertEqual(engine.batch_size(), 0)

    def test_short_prompt_goes_straight_to_the_batch(self):
        engine = self.loaded()
        request = engine.prepare("t1", "c1", params(words=0), 64)
        request.payload = request.payload[:2]
        request.prompt_tokens = 2
        seen = []
        engine.prefill(request, lambda p, t: seen.append((p, t)))
        self.assertEqual(seen, [(2, 2)])
        self.assertEqual(self.api.calls["stream"], [])

    def test_decode_stops_on_eos_and_removes_it_from_the_generator(self):
        engine = self.loaded()
        request = engine.prepare("t1", "c1", params(max_tokens=10), 64)
        engine.prefill(request, lambda *_: None)
        gen = FakeBatchGenerator.instances[-1]
        gen.script[0] = [11, 12, 2]
        steps = [engine.decode_step() for _ in range(3)]
        self.assertEqual([s[0].text for s in steps], ["<11>", "<12>", ""])
        self.assertEqual([s[0].finish_reason for s in steps], [None, None, "stop"])
        self.assertEqual(gen.removed, [0])
        self.assertEqual(engine.batch_size(), 0)

    def test_decode_length_from_the_generator_and_tuple_results(self):
        FakeBatchGenerator.returns_tuple = True
        engine = self.loaded()
        engine.prefill(engine.prepare("t1", "c1", params(max_tokens=2), 64), lambda *_: None)
        engine.prefill(engine.prepare("t2", "c2", params(max_tokens=3), 64), lambda *_: None)
        first, second = engine.decode_step(), engine.decode_step()
        self.assertEqual([(t.request_id, t.finish_reason) for t in first], [("t1", None), ("t2", None)])
        self.assertEqual([(t.request_id, t.finish_reason) for t in second], [("t1", "length"), ("t2", None)])
        self.assertEqual(FakeBatchGenerator.instances[-1].removed, [])  # the generator ended it itself

    def test_remove_cancels_in_the_generator(self):
        engine = self.loaded()
        engine.prefill(engine.prepare("t1", "c1", params(), 64), lambda *_: None)
        engine.remove("t1")
        engine.remove("unknown")
        self.assertEqual(FakeBatchGenerator.instances[-1].removed, [0])
        self.assertEqual(engine.decode_step(), [])

    def test_shared_detokenizer_falls_back_to_incremental_decode(self):
        engine = self.loaded(make_api(tokenizer=FakeTokenizer(fresh_detokenizers=False, as_dict=True)))
        engine.prefill(engine.prepare("a", "ca", params(max_tokens=3), 64), lambda *_: None)
        engine.prefill(engine.prepare("b", "cb", params(max_tokens=3), 64), lambda *_: None)
        texts = [[t.text for t in engine.decode_step()] for _ in range(2)]
        self.assertEqual(texts, [["<500>", "<500>"], ["<501>", "<501>"]])

    def test_seed_temperature_and_developer_role(self):
        engine = self.loaded()
        p = GenerationParams([{"role": "developer", "content": "be brief"}, {"role": "user", "content": "hi"}], 4, 0.2, 9)
        engine.prefill(engine.prepare("t1", "c1", p, 64), lambda *_: None)
        self.assertEqual(self.api.calls["seed"], [9])
        self.assertEqual(FakeBatchGenerator.instances[-1].inserted[-1]["sampler"], ("sampler", 0.2))
        self.assertEqual(self.api.tokenizer.templated[-1][0]["role"], "system")

    def test_peak_memory_warmup_and_close(self):
        engine = self.loaded()
        engine.warmup()
        self.assertEqual(self.api.calls["stream"][-1]["max_tokens"], 4)
        self.assertEqual(engine.peak_memory_bytes(), 123456)
        gen = FakeBatchGenerator.instances[-1]
        engine.close()
        self.assertTrue(gen.closed)
        self.assertIsNone(engine.model)
        self.assertEqual(self.api.calls["clear_cache"], 1)

    def test_importing_without_mlx_is_a_clear_error(self):
        try:
            import mlx.core  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(EngineUnavailableError, "MLX is not available"):
                import_mlx()
        else:
            self.skipTest("mlx is installed here")


if __name__ == "__main__":
    unittest.main()
