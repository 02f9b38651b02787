"""The prompt cache's rules and counters without MLX: the test engine's stand-in and
the counters both engines report (the real cache: test_real_mlx_prompt_cache.py)."""
import unittest

from exobar_mlx.prompt_cache import CacheCounters, SimPromptCache
from exobar_mlx.token_count import count_prompt_tokens, prompt_tokens


def tokens(*words):
    return list(words)


class SimPromptCacheTest(unittest.TestCase):
    def test_a_miss_then_the_longest_cached_prefix(self):
        cache = SimPromptCache(cap_bytes=10_000, bytes_per_token=10)
        self.assertEqual(cache.fetch(tokens("a", "b", "c")), 0)
        cache.insert(tokens("a", "b", "c"))
        self.assertEqual(cache.fetch(tokens("a", "b", "c", "d", "e")), 3)  # a shorter entry: all of it
        self.assertEqual(cache.fetch(tokens("a", "b", "x")), 2)  # a longer entry cut back to the shared part
        self.assertEqual(cache.fetch(tokens("a", "b", "c")), 3)  # exact
        self.assertEqual(cache.fetch(tokens("z")), 0)
        self.assertEqual(cache.stats(), {"entries": 1, "bytes": 30, "capBytes": 10_000, "hits": 3, "misses": 2, "hitTokens": 8})

    def test_an_entry_extended_by_a_new_one_is_replaced(self):
        cache = SimPromptCache(cap_bytes=10_000, bytes_per_token=10)
        cache.insert(tokens("a", "b"))
        cache.insert(tokens("a", "b", "c", "d"))
        self.assertEqual(cache.stats()["entries"], 1)
        self.assertEqual(cache.nbytes, 40)

    def test_over_the_byte_cap_the_least_recently_used_goes_first(self):
        cache = SimPromptCache(cap_bytes=60, bytes_per_token=10)
        cache.insert(tokens("a1", "a2", "a3"))
        cache.insert(tokens("b1", "b2", "b3"))
        self.assertEqual(cache.fetch(tokens("a1", "a2", "a3", "more")), 3)  # a is used again: b is now the oldest
        cache.insert(tokens("c1", "c2", "c3"))
        self.assertEqual(cache.nbytes, 60)
        self.assertEqual(cache.fetch(tokens("b1", "b2", "b3", "x")), 0)
        self.assertEqual(cache.fetch(tokens("a1", "a2", "a3", "x")), 3)
        self.assertEqual(cache.fetch(tokens("c1", "c2", "c3", "x")), 3)

    def test_an_entry_larger_than_the_cap_is_not_kept(self):
        cache = SimPromptCache(cap_bytes=20, bytes_per_token=10)
        cache.insert(tokens("a", "b", "c"))
        self.assertEqual(cache.stats()["entries"], 0)


class PromptTokensTest(unittest.TestCase):
    def test_the_test_engines_tokens_follow_the_count_rule_and_share_a_chats_prefix(self):
        turn1 = [{"role": "system", "content": "w1 w2 w3"}, {"role": "user", "content": "w4 w5"}]
        turn2 = turn1 + [{"role": "assistant", "content": "w6"}, {"role": "user", "content": "w7 w8"}]
        self.assertEqual(len(prompt_tokens(turn1)), count_prompt_tokens(turn1))
        self.assertEqual(prompt_tokens(turn2)[: len(prompt_tokens(turn1)) - 3], prompt_tokens(turn1)[:-3])


class CacheCountersTest(unittest.TestCase):
    def test_hits_misses_and_tokens(self):
        counters = CacheCounters()
        for cached in (0, 120, 0, 30):
            counters.record(cached)
        self.assertEqual(counters.event(2, 100, 1000), {"entries": 2, "bytes": 100, "capBytes": 1000, "hits": 2, "misses": 2, "hitTokens": 150})


if __name__ == "__main__":
    unittest.main()
