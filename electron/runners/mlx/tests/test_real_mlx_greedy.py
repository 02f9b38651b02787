"""Greedy output equals mlx-lm's own, per cache family, on real MLX and tiny models.

The prompt (100 words, 107 tokens) is longer than the sliding window and the Llama 4
attention chunk (32 tokens) and spans several prefill chunks (16 tokens); the runner
uses the same prefill step as the reference, so the arithmetic is the same and the
tokens must be equal. The runner before this change (prefill, a throwaway token, a
trim by 2 that a wrapped RotatingKVCache ignores) fails this for gemma3.
"""
import unittest

from exobar_mlx import mlx_engine
from exobar_mlx.request_sampler import RequestSampler

from .real_mlx import chat, drive, load_engine, mlx_lm_greedy, params, require_real_mlx

FAMILIES = ("llama", "gemma3", "lfm2", "llama4")
PROMPT_WORDS = 100
TOKENS = 16
#: Batched decoding changes the arithmetic (padded batch caches, other matmul shapes):
#: beside other requests the first tokens' log-probabilities must stay this close.
LOGPROB_TOLERANCE = 1e-3
MARK = 4242  # the seed that marks the request under test (greedy: the seed is unused)


class GreedyEqualsMlxLm(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_alone_the_tokens_equal_mlx_lm_generate(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                messages = chat(PROMPT_WORDS)
                expected, _ = mlx_lm_greedy(family, messages, TOKENS)
                self.assertGreater(len(set(expected)), 3, "the tiny model must not repeat one token")
                engine = load_engine(family)
                got = drive(engine, [("a", params(messages, TOKENS))])["a"]
                engine.close()
                self.assertEqual(got, expected)

    def test_beside_other_requests_the_first_tokens_log_probabilities_stay_close(self):
        import mlx.core as mx

        for family in FAMILIES:
            with self.subTest(family=family):
                messages = chat(PROMPT_WORDS)
                expected_tokens, expected_logprobs = mlx_lm_greedy(family, messages, 4)
                engine = load_engine(family)
                seen = []

                class Recording(RequestSampler):
                    def _sample(self, logprobs):
                        if self.seed == MARK:
                            seen.append(logprobs)
                        return super()._sample(logprobs)

                mlx_engine.RequestSampler = Recording
                self.addCleanup(setattr, mlx_engine, "RequestSampler", RequestSampler)
                others = [(f"o{i}", params(chat(40 + 9 * i, offset=300 + i), 6)) for i in range(3)]
                out = drive(engine, [others[0], ("a", params(messages, 4, seed=MARK)), *others[1:]])
                engine.close()
                self.assertEqual(out["a"], expected_tokens)
                for step, (row, reference) in enumerate(zip(seen, expected_logprobs)):
                    difference = mx.abs(row.reshape(-1) - reference.reshape(-1)).max().item()
                    self.assertLess(difference, LOGPROB_TOLERANCE, f"step {step}")
                self.assertGreaterEqual(len(seen), 3)


if __name__ == "__main__":
    unittest.main()
