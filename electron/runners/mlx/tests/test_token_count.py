import unittest

from exobar_mlx.token_count import count_prompt_tokens, count_words


class TokenCountTest(unittest.TestCase):
    def test_words_are_runs_of_non_whitespace(self):
        self.assertEqual(count_words(""), 0)
        self.assertEqual(count_words("  hello   world \n"), 2)
        self.assertEqual(count_words("a\tb\u3000c"), 3)
        self.assertEqual(count_words("a\ufeffb"), 2)  # U+FEFF is whitespace to JavaScript

    def test_prompt_tokens_add_template_overhead(self):
        # 3 for the generation prompt, 4 per message, one per word (shared/token-count.ts)
        self.assertEqual(count_prompt_tokens([{"role": "user", "content": "hello world"}]), 9)
        self.assertEqual(
            count_prompt_tokens([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]),
            3 + 4 + 2 + 4 + 1,
        )

    def test_make_prompt_sizes_round_trip(self):
        # makePrompt(tokens) builds tokens - 7 words for one message
        for tokens in (8, 100, 30_000):
            content = " ".join(f"w{i % 997}" for i in range(tokens - 7))
            self.assertEqual(count_prompt_tokens([{"role": "user", "content": content}]), tokens)


if __name__ == "__main__":
    unittest.main()
