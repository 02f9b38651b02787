"""The mlx engine's glue to mlx-lm, against a fast fake that keeps the real classes'
rules (fake_mlx.py). The same engine meets real MLX in test_real_mlx_*.py."""
import tempfile
import unittest
from pathlib import Path

from exobar_mlx.engine import EngineUnavailableError, ModelNotFoundError, PrefillCancelled, RequestError
from exobar_mlx.mlx_engine import MlxEngine, import_mlx
from exobar_mlx.protocol import GenerationParams

from .fake_mlx import FakeBatchGenerator, FakeRandom, RotatingKVCache, FakeTokenizer, make_api, make_model_dir


def params(words=7, max_tokens=5, temperature=None, seed=None):
    return GenerationParams([{"role": "user", "content": " ".join(["w"] * words)}], max_tokens, temperature, seed)


class MlxEngineTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.root = Path(self._tmp.name)
        self.model_dir = make_model_dir(self.root / "Llama-3.2-1B-Instruct-4bit", layers=3)

    def tearDown(self):
        self._tmp.cleanup()

    def engine(self, api=None, chunk=4, **kwargs):
        self.api = api or make_api()
        return MlxEngine(str(self.model_dir), prefill_chunk=chunk, max_batch=8, importer=lambda: self.api,
                         env={}, home=self.root, **kwargs)

    def loaded(self, api=None, chunk=4, **kwargs):
        engine = self.engine(api, chunk, **kwargs)
        engine.load(lambda *_: None)
        return engine

    def test_load_reports_layers_and_configures_the_batch_generator(self):
        engine = self.engine()
        progress = []
        engine.load(lambda loaded, total: progress.append((loaded, total)))
        self.assertEqual(progress, [(0, 3), (1, 3), (2, 3), (3, 3)])
        self.assertEqual(self.api.calls["load"], [(str(self.model_dir.resolve()), True)])
        gen = FakeBatchGenerator.instances[-1]
        # Every prompt that ended its prefill in a step joins on one next().
        self.assertEqual(gen.kwargs["prefill_batch_size"], 8)
        self.assertEqual(gen.kwargs["completion_batch_size"], 8)
        self.assertEqual(engine.load_details(), {"batching": "batched", "cacheTypes": ["KVCache"]})
        self.assertIsNone(engine.concurrency_limit())

    def test_missing_model_fails_before_mlx_is_imported(self):
        imported = []
        engine = MlxEngine("org/absent", importer=lambda: imported.append(1), env={}, home=self.root)
        with self.assertRaises(ModelNotFoundError):
            engine.load(lambda *_: None)
        self.assertEqual(imported, [])

    def test_prefill_is_the_prompt_minus_its_last_token_in_chunks_then_one_token_to_the_batch(self):
        engine = self.loaded(chunk=4)
        request = engine.prepare("t1", "c1", params(words=7), 64)  # 1 + 7 + 2 = 10 tokens
        self.assertEqual(request.prompt_tokens, 10)
        seen = []
        engine.prefill(request, lambda processed, total: seen.append((processed, total)))
        self.assertEqual(seen, [(4, 10), (8, 10), (10, 10)])
        self.assertEqual(self.api.model.calls, [request.payload[0:4], request.payload[4:8], request.payload[8:9]])
        entry = FakeBatchGenerator.instances[-1].inserted[-1]
        self.assertEqual(entry["prompt"], request.payload[-1:])
        # nothing trimmed, nothing thrown away: the cache holds exactly tokens[:-1]
        self.assertEqual([c.offset for c in entry["cache"]], [9, 9, 9])
        self.assertEqual(entry["max_tokens"], 5)
        self.assertEqual(entry["sampler"].temperature, 0.7)
        self.assertEqual(engine.batch_size(), 1)

    def test_a_rotating_cache_past_its_window_keeps_every_prompt_token(self):
        engine = self.loaded(make_api(cache_kinds=["rotating", "kv", "rotating"]), chunk=4)
        request = engine.prepare("t1", "c1", params(words=20), 64)  # 23 tokens, window 8
        engine.prefill(request, lambda *_: None)
        cache = FakeBatchGenerator.instances[-1].inserted[-1]["cache"]
        self.assertIsInstance(cache[0], RotatingKVCache)
        self.assertFalse(cache[0].is_trimmable())
        self.assertEqual([c.offset for c in cache], [22, 22, 22])

    def test_cancel_raised_at_a_chunk_boundary_leaves_the_batch_untouched(self):
        engine = self.loaded(chunk=4)
        request = engine.prepare("t1", "c1", params(words=7), 64)

        def on_chunk(processed, total):
            if processed == 8:
                raise PrefillCancelled()

        with self.assertRaises(PrefillCancelled):
            engine.prefill(request, on_chunk)
        self.assertEqual(len(self.api.model.calls), 2)
        self.assertEqual(FakeBatchGenerator.instances[-1].inserted, [])
        self.assertEqual(engine.batch_size(), 0)

    def test_an_out_of_memory_in_prefill_is_that_requests_error(self):
        engine = self.loaded(chunk=4)
        request = engine.prepare("t1", "c1", params(words=7), 64)
        self.api.model.fail_on = request.payload[5]
        with self.assertRaisesRegex(RequestError, "prefill failed: out of memory: RuntimeError"):
            engine.prefill(request, lambda *_: None)
        self.assertEqual(engine.batch_size(), 0)
        self.assertGreaterEqual(self.api.calls["clear_cache"], 1)

    def test_one_token_prompt_goes_straight_to_the_batch(self):
        engine = self.loaded()
        request = engine.prepare("t1", "c1", params(words=0), 64)
        request.payload = request.payload[:1]
        request.prompt_tokens = 1
        seen = []
        engine.prefill(request, lambda p, t: seen.append((p, t)))
        self.assertEqual(seen, [(1, 1)])
        self.assertEqual(self.api.model.calls, [])

    def test_first_token_in_the_admissions_step_then_eos_stops_it(self):
        engine = self.loaded()
        gen = FakeBatchGenerator.instances[-1]
        gen.script[0] = [11, 12, 2]
        engine.prefill(engine.prepare("t1", "c1", params(max_tokens=10), 64), lambda *_: None)
        steps = [engine.decode_step() for _ in range(3)]
        self.assertEqual([s[0].text for s in steps], ["<11>", "<12>", ""])
        self.assertEqual([s[0].finish_reason for s in steps], [None, None, "stop"])
        self.assertEqual(gen.removed, [0])
        self.assertEqual(engine.batch_size(), 0)

    def test_length_from_the_generator(self):
        engine = self.loaded()
        engine.prefill(engine.prepare("t1", "c1", params(max_tokens=2), 64), lambda *_: None)
        engine.prefill(engine.prepare("t2", "c2", params(max_tokens=3), 64), lambda *_: None)
        first, second = engine.decode_step(), engine.decode_step()
        # Both joined on one next(), taken in the first step: their first tokens come together.
        self.assertEqual([(t.request_id, t.finish_reason) for t in first], [("t1", None), ("t2", None)])
        self.assertEqual([(t.request_id, t.finish_reason) for t in second], [("t1", "length"), ("t2", None)])

    def test_remove_cancels_in_the_generator(self):
        engine = self.loaded()
        engine.prefill(engine.prepare("t1", "c1", params(), 64), lambda *_: None)
        engine.remove("t1")
        engine.remove("unknown")
        self.assertEqual(FakeBatchGenerator.instances[-1].removed, [0])
        self.assertEqual(engine.decode_step(), [])

    def test_a_failing_sampler_ends_only_its_request(self):
        engine = self.loaded()
        engine.prefill(engine.prepare("a", "ca", params(max_tokens=5, temperature=0.5, seed=1), 64), lambda *_: None)
        engine.prefill(engine.prepare("b", "cb", params(max_tokens=5, temperature=0.5, seed=2), 64), lambda *_: None)
        engine.decode_step()
        engine.decode_step()

        def boom(_logprobs):
            raise MemoryError("no memory for b")

        engine._decoding["b"].sampler._sample = boom
        step = engine.decode_step()
        self.assertEqual([(t.request_id, t.error) for t in step],
                         [("a", None), ("b", "sampling failed: MemoryError: no memory for b")])
        self.assertEqual(engine.batch_size(), 1)
        self.assertEqual([t.request_id for t in engine.decode_step()], ["a"])

    def test_a_failing_step_ends_its_requests_and_a_new_generator_serves_the_next(self):
        engine = self.loaded()
        engine.prefill(engine.prepare("a", "ca", params(), 64), lambda *_: None)
        old = FakeBatchGenerator.instances[-1]
        old.fail_next = RuntimeError("[metal::malloc] out of memory")
        step = engine.decode_step()
        self.assertEqual([(t.request_id, t.error) for t in step],
                         [("a", "decode step failed: out of memory: RuntimeError: [metal::malloc] out of memory")])
        self.assertTrue(old.closed)
        self.assertIsNot(FakeBatchGenerator.instances[-1], old)
        engine.prefill(engine.prepare("b", "cb", params(max_tokens=1), 64), lambda *_: None)
        self.assertEqual([(t.request_id, t.finish_reason) for t in engine.decode_step()], [("b", "length")])

    def test_chunked_caches_are_served_one_at_a_time(self):
        engine = self.loaded(make_api(cache_kinds=["chunked", "kv", "chunked"]))
        self.assertEqual(engine.concurrency_limit(), 1)
        details = engine.load_details()
        self.assertEqual(details["batching"], "sequential")
        self.assertIn("Llama 4", details["batchingReason"])
        self.assertEqual(len(FakeBatchGenerator.instances[-1].inserted) if FakeBatchGenerator.instances else 0, 0)

    def test_seed_temperature_and_developer_role(self):
        engine = self.loaded()
        p = GenerationParams([{"role": "developer", "content": "be brief"}, {"role": "user", "content": "hi"}], 4, 0.2, 9)
        engine.prefill(engine.prepare("t1", "c1", p, 64), lambda *_: None)
        sampler = FakeBatchGenerator.instances[-1].inserted[-1]["sampler"]
        self.assertEqual((sampler.temperature, sampler.seed), (0.2, 9))
        self.assertEqual(FakeRandom.seeds[-1], 9)
        self.assertEqual(self.api.tokenizer.templated[-1][0]["role"], "system")

    def test_wired_limit_is_skipped_without_metal(self):
        engine = self.loaded(wired_limit=1 << 30)
        self.assertIsNone(engine.applied_wired_limit)
        self.assertEqual(self.api.calls["wired"], [])

    def test_peak_memory_warmup_and_close(self):
        engine = self.loaded(make_api(tokenizer=FakeTokenizer(as_dict=True)))
        engine.warmup()
        self.assertEqual(engine.batch_size(), 0)
        self.assertEqual(engine.peak_memory_bytes(), 123456)
        gen = FakeBatchGenerator.instances[-1]
        engine.close()
        self.assertTrue(gen.closed)
        self.assertIsNone(engine.model)
        self.assertGreaterEqual(self.api.calls["clear_cache"], 1)

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
