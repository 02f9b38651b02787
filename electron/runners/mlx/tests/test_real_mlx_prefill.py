"""The runner's own prefill on real MLX, per cache family: progress after every chunk
and cancel at a chunk boundary, for KV, rotating, array and chunked caches alike.

Before this change a cache that could not be trimmed (ArraysCache, a wrapped
RotatingKVCache) took a fallback that reported 100 % at once and let BatchGenerator
prefill with no progress and no cancel; these tests would fail for lfm2 there.
"""
import unittest

from exobar_mlx.engine import PrefillCancelled

from .real_mlx import CHUNK, chat, drive, load_engine, params, require_real_mlx

FAMILIES = ("llama", "gemma3", "lfm2", "llama4")
PROMPT_WORDS = 100  # 107 tokens: 6 chunks of 16, then 10 tokens and the last token


class RealPrefill(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_progress_after_every_chunk_then_the_boundary_before_the_first_token(self):
        total = PROMPT_WORDS + 7
        # tokens[:-1] is 106 tokens: chunks end at 16 ... 96, then 106, reported as the total
        expected = [(n, total) for n in range(CHUNK, total - 1, CHUNK)] + [(total, total)]
        for family in FAMILIES:
            with self.subTest(family=family):
                engine = load_engine(family)
                progress = {}
                out = drive(engine, [("a", params(chat(PROMPT_WORDS), 3))], progress)
                engine.close()
                self.assertEqual(progress["a"], expected)
                self.assertEqual(len(out["a"]), 3)

    def test_cancel_mid_prefill_drops_the_request_and_the_next_one_is_right(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                engine = load_engine(family)
                reference = drive(engine, [("ref", params(chat(PROMPT_WORDS, offset=5), 6))])["ref"]
                request = engine.prepare("a", "ca", params(chat(PROMPT_WORDS), 6), 64)
                seen = []

                def on_chunk(done, total):
                    seen.append(done)
                    if done == 3 * CHUNK:
                        raise PrefillCancelled()

                with self.assertRaises(PrefillCancelled):
                    engine.prefill(request, on_chunk)
                self.assertEqual(seen, [CHUNK, 2 * CHUNK, 3 * CHUNK])
                self.assertEqual(engine.batch_size(), 0)
                again = drive(engine, [("b", params(chat(PROMPT_WORDS, offset=5), 6))])["b"]
                engine.close()
                self.assertEqual(again, reference)


if __name__ == "__main__":
    unittest.main()
