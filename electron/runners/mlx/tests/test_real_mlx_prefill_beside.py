"""On real MLX (the CPU here): a long prompt prefills on the prefill thread while a stream
of the same model decodes on the loop's thread, and both give the tokens they give alone.

The long prompt is one chunk, one pass: with the pass run on the loop's thread no decode
step could run while it did; beside it, the stream goes on decoding. Counted from the
engine's own calls, never from the clock."""
import unittest

from exobar_mlx.interleaved_loop import InterleavedLoop
from exobar_mlx.protocol import Cancel

from .real_mlx import chat, drive, load_engine, params, require_real_mlx, task, token_ids
from .test_interleaved_loop import FixedSizer
from .test_step_loop import Harness

#: An attention family and a hybrid one (convolution and attention caches).
FAMILIES = ("llama", "lfm2")
LONG_WORDS = 400
STREAM_WORDS = 20
ONE_CHUNK = 1024


def count_decode_steps_during(engine, request_id):
    """A list that gets, for each prefill pass of `request_id`, the engine's decode steps
    that ran while the pass did (0 when one thread does both)."""
    steps, during = [0], []
    decode_step, prefill_some = engine.decode_step, engine.prefill_some

    def counted_decode_step():
        tokens = decode_step()
        steps[0] += 1
        return tokens

    def watched_prefill_some(job, max_tokens):
        before = steps[0]
        done = prefill_some(job, max_tokens)
        if job.request.request_id == request_id:
            during.append(steps[0] - before)
        return done

    engine.decode_step, engine.prefill_some = counted_decode_step, watched_prefill_some
    return during


class PrefillBesideDecodeOnRealMlx(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_a_stream_decodes_through_a_long_prompts_one_chunk_prefill_and_both_match_alone(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                engine = load_engine(family, chunk=ONE_CHUNK)
                self.assertTrue(engine.prefill_beside_decode)
                steps_during_long = count_decode_steps_during(engine, "long")
                h = Harness(engine=engine, loop_class=InterleavedLoop)
                h.loop.sizer = FixedSizer(ONE_CHUNK)
                h.start_ready()
                h.put(task("stream", STREAM_WORDS, 0, 100_000))
                h.wait_label("token:cmd-stream:None", timeout=120)
                h.put(task("long", LONG_WORDS, 500, 4))
                h.wait_label("task:long:Complete", timeout=600)
                h.inbox.put(Cancel("stream"))
                h.wait_label("task:stream:Cancelled", timeout=120)
                self.assertEqual(h.shutdown(), 0)

                labels = h.labels()
                long_progress = [l for l in labels if l.startswith("prefill:cmd-long:")]
                total = long_progress[0].split("/")[1]
                # One chunk: the 0-token report at admission, then the whole prompt.
                self.assertEqual(long_progress, [f"prefill:cmd-long:0/{total}", f"prefill:cmd-long:{total}/{total}"])
                self.assertEqual(len(steps_during_long), 1, steps_during_long)
                self.assertGreaterEqual(steps_during_long[0], 3, "the stream stood still while the long prompt prefilled")

                stream, long = token_ids(h, "cmd-stream"), token_ids(h, "cmd-long")
                alone = drive(load_engine(family, chunk=ONE_CHUNK), [
                    ("stream", params(chat(STREAM_WORDS, 0), len(stream))),
                    ("long", params(chat(LONG_WORDS, 500), 4)),
                ])
                self.assertEqual((stream, long), (alone["stream"], alone["long"]))


if __name__ == "__main__":
    unittest.main()
