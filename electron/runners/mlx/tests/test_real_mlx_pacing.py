"""Prefill pacing changes no token, per cache family, on real MLX and tiny models.

Pacing (SetPrefillPacing) changes the prefill chunk between two chunks of a prompt and
pauses after each; other chunk sizes are other kernel shapes, so this is the claim to
check on real arithmetic: the greedy tokens of a paced prefill equal the unpaced ones.
"""
import unittest

from .real_mlx import chat, load_engine, params, require_real_mlx

FAMILIES = ("llama", "gemma3", "lfm2", "llama4", "mamba2")
PROMPT_WORDS = 2000
TOKENS = 12
FULL_CHUNK = 512
PACED_CHUNK = 64


def generate(engine, request_id, messages, pace_after_first_chunk):
    prepared = engine.prepare(request_id, f"c-{request_id}", params(messages, TOKENS), 64)
    seen = []

    def on_chunk(done, total):
        seen.append(done)
        if pace_after_first_chunk:
            engine.prefill_chunk = PACED_CHUNK  # what the step loop does when a pacing arrives

    engine.prefill(prepared, on_chunk)
    tokens = []
    while len(tokens) < TOKENS:
        step = [t for t in engine.decode_step() if t.request_id == request_id]
        tokens.extend(t.token_id for t in step)
        if any(t.finish_reason for t in step):
            break
    engine.prefill_chunk = FULL_CHUNK
    return tokens, seen


class PacedPrefillChangesNoToken(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_greedy_tokens_equal_with_and_without_pacing(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                messages = chat(PROMPT_WORDS)
                engine = load_engine(family, chunk=FULL_CHUNK)
                plain, plain_chunks = generate(engine, "plain", messages, False)
                paced, paced_chunks = generate(engine, "paced", messages, True)
                engine.close()
                self.assertGreater(len(set(plain)), 3, "the tiny model must not repeat one token")
                # The paced prefill really ran in other chunks: 512 first, then 64 at a time.
                self.assertEqual(paced_chunks[0], FULL_CHUNK)
                self.assertEqual(paced_chunks[1] - paced_chunks[0], PACED_CHUNK)
                self.assertGreater(len(paced_chunks), len(plain_chunks) + 3)
                self.assertEqual(paced, plain)


if __name__ == "__main__":
    unittest.main()
