"""Tools, structured output and penalties on real MLX under the interleaved schedule and
with the prompt cache on.

A request's decoding plan (grammar, tool-call stream, penalties) must apply the same
whichever schedule prefilled it and whether its prompt came from the prompt cache: the
greedy tokens here are pinned equal to the exo schedule's without a cache, and the
penalties to mlx-lm's own generation (its context is the whole prompt and the reply).
"""
import json
import tempfile
import unittest
from unittest import mock
from pathlib import Path

from exobar_mlx import sampling
from exobar_mlx.interleaved_loop import InterleavedLoop
from exobar_mlx.mlx_engine import MlxEngine
from exobar_mlx.protocol import GenerationParams
from exobar_mlx.request_options import parse_options

from .real_mlx import CHUNK, chat, require_real_mlx, tiny_model
from .test_interleaved_loop import FixedSizer, final_usage
from .test_real_mlx_tools import SCHEMA, TOOLS, chunks_of, task, valid
from .test_step_loop import Harness

FORMAT = {"type": "json_schema", "name": "thing", "schema": SCHEMA, "strict": True}


def engine(family, cache_bytes):
    e = MlxEngine(str(tiny_model(family)), prefill_chunk=CHUNK, max_batch=8, env={},
                  home=Path(tempfile.gettempdir()), prompt_cache_bytes=cache_bytes)
    e.load(lambda *_: None)
    return e


def with_prompt(message, n_words, offset):
    message["params"]["messages"] = chat(n_words, offset)
    return message


def round_of_tasks(suffix):
    """A schema answer, a named tool call, a forced one and a free stream, admitted together."""
    return [
        with_prompt(task(f"schema{suffix}", responseFormat=FORMAT), 40, 0),
        with_prompt(task(f"named{suffix}", tools=TOOLS, toolChoice={"name": "get_weather"}), 40, 100),
        with_prompt(task(f"required{suffix}", tools=TOOLS, toolChoice="required"), 40, 200),
        with_prompt(task(f"free{suffix}", max_tokens=16), 40, 300),
    ]


def run(h, tasks):
    h.put(*tasks)
    for t in tasks:
        h.wait_label(f"task:{t['taskId']}:Complete", timeout=180)
    return {t["taskId"]: chunks_of(h, t["taskId"]) for t in tasks}


def summary(chunks):
    """What a client sees: the text, the calls and the finish reason."""
    calls = [c for chunk in chunks if chunk["kind"] == "ToolCallChunk" for c in chunk["toolCalls"]]
    return ("".join(c.get("text", "") for c in chunks), [(c["name"], c["arguments"]) for c in calls], chunks[-1]["finishReason"])


class InterleavedAndCachedToolsMatchTheExoSchedule(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_constrained_and_tool_requests_decode_the_same_interleaved_and_from_the_cache(self):
        exo = Harness(engine=engine("qwen3", 0)).start_ready()
        try:
            expected = {k[:-1]: summary(v) for k, v in run(exo, round_of_tasks("0")).items()}
        finally:
            self.assertEqual(exo.shutdown(), 0)
        # the reference itself is what the features promise
        self.assertTrue(valid(json.loads(expected["schema"][0])))
        self.assertEqual(expected["named"][1][0][0], "get_weather")
        self.assertEqual([expected[k][2] for k in ("schema", "named", "required", "free")], ["stop", "tool_calls", "tool_calls", "length"])

        h = Harness(engine=engine("qwen3", 1 << 30), loop_class=InterleavedLoop)
        h.loop.sizer = FixedSizer(CHUNK)  # several chunks per prompt, interleaved with decode steps
        h.start_ready()
        try:
            for round_ in ("1", "2"):  # round 2's prompts are served from the cache
                got = run(h, round_of_tasks(round_))
                for name, reference in expected.items():
                    with self.subTest(round=round_, request=name):
                        self.assertEqual(summary(got[name + round_]), reference)
                if round_ == "2":
                    for name in expected:
                        self.assertGreater(final_usage(h, name + round_)["cachedTokens"], 0, name)
        finally:
            self.assertEqual(h.shutdown(), 0)


class PenaltiesSeeThePromptOnce(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_a_penalised_greedy_stream_equals_mlx_lms_with_and_without_a_cache_hit(self):
        from mlx_lm import load, stream_generate
        from mlx_lm.sample_utils import make_logits_processors, make_sampler

        messages = chat(4)  # 11 tokens: shorter than the penalties' 20-token context
        model, tokenizer = load(str(tiny_model("llama")))
        ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
        processors = make_logits_processors(repetition_penalty=3.0, frequency_penalty=1.5, presence_penalty=0.5)
        reference = [int(r.token) for r in stream_generate(model, tokenizer, ids, max_tokens=12, sampler=make_sampler(temp=0.0),
                                                            logits_processors=processors, prefill_step_size=CHUNK)]
        options = parse_options({"repetitionPenalty": 3.0, "frequencyPenalty": 1.5, "presencePenalty": 0.5})
        contexts = []
        real = sampling.penalty_processors

        def spied(options_):
            def spy(tokens, logits):
                contexts.append(tokens.tolist())
                return logits
            return [spy, *real(options_)]

        e = engine("llama", 1 << 30)
        try:
            for attempt in ("miss", "hit"):
                prepared = e.prepare(attempt, attempt, GenerationParams(messages, 12, 0.0, None, options), 12)
                contexts.clear()
                with mock.patch.object(sampling, "penalty_processors", spied):
                    e.prefill(prepared, lambda *_: None)
                self.assertEqual(prepared.cached_tokens > 0, attempt == "hit")
                tokens = []
                while len(tokens) < 12:
                    for t in e.decode_step():
                        self.assertIsNone(t.error)
                        tokens.append(t.token_id)
                with self.subTest(attempt=attempt):
                    self.assertEqual(tokens, reference[: len(tokens)])
                    # the penalties' context is the prompt, once, then each token generated
                    self.assertEqual(contexts[0], list(ids))
                    self.assertEqual(contexts[len(tokens) - 1], list(ids) + tokens[: len(tokens) - 1])
        finally:
            e.close()


if __name__ == "__main__":
    unittest.main()
