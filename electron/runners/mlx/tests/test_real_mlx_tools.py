"""Tools, structured output and sampling options on real MLX with the tiny models.

Random weights never write JSON or call a tool by themselves: a schema-valid answer or
a well-formed call here is the grammar's doing. The qwen3 family is the tool-capable
one (byte-level tokenizer, a template that takes tools, mlx-lm's json_tools parser).
"""
import json
import unittest
from pathlib import Path

from exobar_mlx.model_features import features_from_files
from exobar_mlx.protocol import GenerationParams
from exobar_mlx.request_options import parse_options
from exobar_mlx.tools import ToolCallStream

from .helpers import RunnerProcess
from .real_mlx import chat, load_engine, require_real_mlx, tiny_model, words
from .test_step_loop import Harness

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 10},
        "count": {"type": "integer", "minimum": 1, "maximum": 9},
        "kind": {"enum": ["alpha", "beta"]},
        "tags": {"type": "array", "items": {"type": "boolean"}, "maxItems": 2},
    },
    "required": ["name", "count", "kind", "tags"],
    "additionalProperties": False,
}
WEATHER = {"name": "get_weather", "description": "the weather in a city",
           "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 8}, "days": {"type": "integer", "minimum": 1, "maximum": 3}},
                          "required": ["city", "days"], "additionalProperties": False}}
TOOLS = [WEATHER, {"name": "noop"}]
FAMILIES = ("llama", "llama-wide", "gemma3", "lfm2", "mamba2", "llama4", "qwen3")


def valid(answer):
    """The answer against SCHEMA, checked by hand (no validator in the MLX venv)."""
    return (set(answer) == {"name", "count", "kind", "tags"} and isinstance(answer["name"], str) and len(answer["name"]) <= 10
            and type(answer["count"]) is int and 1 <= answer["count"] <= 9 and answer["kind"] in ("alpha", "beta")
            and isinstance(answer["tags"], list) and len(answer["tags"]) <= 2 and all(type(t) is bool for t in answer["tags"]))


def task(task_id, max_tokens=120, temperature=0.0, seed=None, **options):
    params = {"messages": chat(12), "maxTokens": max_tokens, "temperature": temperature, **options}
    if seed is not None:
        params["seed"] = seed
    return {"kind": "TextGeneration", "taskId": task_id, "commandId": f"cmd-{task_id}", "params": params}


def chunks_of(h, task_id):
    return [m["chunk"] for m in h.capture.messages if m.get("commandId") == f"cmd-{task_id}" and m["chunk"]["kind"] != "PrefillProgressChunk"]


class RealMlxStructuredOutput(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)
        self.h = Harness(engine=load_engine("qwen3")).start_ready()

    def tearDown(self):
        if getattr(self, "h", None) is not None:
            self.assertEqual(self.h.shutdown(), 0)

    def run_tasks(self, *tasks):
        self.h.put(*tasks)
        for t in tasks:
            self.h.wait_label(f"task:{t['taskId']}:Complete", timeout=120)
        return {t["taskId"]: chunks_of(self.h, t["taskId"]) for t in tasks}

    def test_a_json_schema_answer_validates_greedy_and_sampled_beside_a_free_request(self):
        fmt = {"type": "json_schema", "name": "thing", "schema": SCHEMA, "strict": True}
        out = self.run_tasks(task("greedy", responseFormat=fmt), task("free", max_tokens=20),
                             task("sampled", temperature=1.0, seed=5, responseFormat=fmt))
        for task_id in ("greedy", "sampled"):
            text = "".join(c["text"] for c in out[task_id])
            self.assertTrue(valid(json.loads(text)), f"{task_id}: {text!r}")
            self.assertEqual(out[task_id][-1]["finishReason"], "stop")
        self.assertEqual(out["free"][-1]["finishReason"], "length")  # the free one is not constrained
        self.assertEqual(len(out["free"]), 20)

    def test_json_object_is_an_object(self):
        out = self.run_tasks(task("obj", responseFormat={"type": "json_object"}))
        self.assertIsInstance(json.loads("".join(c["text"] for c in out["obj"])), dict)

    def test_required_and_named_choices_yield_a_valid_call_and_finish_tool_calls(self):
        out = self.run_tasks(task("named", tools=TOOLS, toolChoice={"name": "get_weather"}),
                             task("required", tools=TOOLS, toolChoice="required"))
        for task_id in ("named", "required"):
            chunks = out[task_id]
            calls = [c for c in chunks if c["kind"] == "ToolCallChunk"]
            self.assertEqual(len(calls), 1, chunks)
            self.assertEqual(len(calls[0]["toolCalls"]), 1)
            call = calls[0]["toolCalls"][0]
            self.assertTrue(call["id"].startswith("call_"))
            self.assertEqual(chunks[-1]["finishReason"], "tool_calls")
            # the markup never reaches the text
            self.assertEqual("".join(c.get("text", "") for c in chunks), "")
            if task_id == "named":
                self.assertEqual(call["name"], "get_weather")
                arguments = json.loads(call["arguments"])
                self.assertEqual(set(arguments), {"city", "days"})
                self.assertIsInstance(arguments["city"], str)
                self.assertIn(arguments["days"], (1, 2, 3))
            else:
                self.assertIn(call["name"], ("get_weather", "noop"))
                self.assertIsInstance(json.loads(call["arguments"]), dict)

    def test_an_unsupported_schema_keyword_is_an_error_naming_it(self):
        bad = {"type": "json_schema", "schema": {"type": "array", "items": {"type": "integer"}, "uniqueItems": True}}
        self.h.put(task("bad", responseFormat=bad), task("ok", max_tokens=4))
        self.h.wait_label("task:bad:Failed")
        self.h.wait_label("task:ok:Complete", timeout=60)
        error = next(c for c in chunks_of(self.h, "bad") if c["kind"] == "ErrorChunk")
        self.assertIn("uniqueItems", error["errorMessage"])
        self.assertIn("responseFormat", error["errorMessage"])

    def test_a_tool_conversation_renders_through_the_template(self):
        messages = [{"role": "user", "content": words(6)},
                    {"role": "assistant", "content": "", "toolCalls": [{"id": "call_1", "name": "get_weather", "arguments": '{"city":"w5","days":2}'}]},
                    {"role": "tool", "content": words(3, 40), "toolCallId": "call_1"}]
        engine = self.h.engine
        prompt = engine.tokenizer.decode(engine.prepare("x", "x", GenerationParams(messages, 4, 0.0, None, parse_options({"tools": TOOLS})), 8).payload)
        self.assertIn('"name": "get_weather"', prompt)  # the tool list
        self.assertIn('<tool_call>\n{"name": "get_weather", "arguments": {"city": "w5", "days": 2}}\n</tool_call>', prompt)
        self.assertIn("<tool_response>\nw40 w41 w42\n</tool_response>", prompt)
        without = engine.tokenizer.decode(engine.prepare("y", "y", GenerationParams(messages[:1], 4, 0.0, None, parse_options({"tools": TOOLS, "toolChoice": "none"})), 8).payload)
        self.assertNotIn("get_weather", without)


class RealMlxToolParsing(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)
        from mlx_lm import load

        _, self.tokenizer = load(str(tiny_model("qwen3")))

    def feed_tokens(self, stream, text):
        """Feeds `text` token by token through mlx-lm's streaming detokenizer, as the engine does."""
        detok = self.tokenizer.detokenizer
        detok.reset()
        shown, calls = "", []
        for token in self.tokenizer.encode(text, add_special_tokens=False):
            detok.add_token(token)
            piece, done = stream.feed(detok.last_segment)
            shown, calls = shown + piece, calls + done
        return shown, calls

    def test_calls_are_parsed_from_text_and_their_markup_is_not_shown(self):
        stream = ToolCallStream(self.tokenizer, [])
        text = 'w1 w2 <tool_call>\n{"name": "get_weather", "arguments": {"city": "w9"}}\n</tool_call> w3<tool_call>{"name": "noop", "arguments": {}}</tool_call>'
        shown, calls = self.feed_tokens(stream, text)
        held, last = stream.finish(stopped=True)
        self.assertEqual(shown + held, "w1 w2  w3")
        self.assertEqual(last, [])
        self.assertEqual([(c["name"], json.loads(c["arguments"])) for c in calls], [("get_weather", {"city": "w9"}), ("noop", {})])
        self.assertEqual(stream.calls_made, 2)

    def test_a_call_cut_by_the_length_limit_is_not_a_call(self):
        stream = ToolCallStream(self.tokenizer, [])
        shown, calls = self.feed_tokens(stream, 'w1 <tool_call>\n{"name": "noop", "argu')
        held, last = stream.finish(stopped=False)
        self.assertEqual((shown + held, calls + last), ("w1 ", []))
        self.assertEqual(stream.calls_made, 0)
        self.assertIsNotNone(stream.unparsed)

    def test_text_that_only_looks_like_a_marker_is_shown(self):
        stream = ToolCallStream(self.tokenizer, [])
        shown, calls = self.feed_tokens(stream, "w1 <tool w2")
        held, _ = stream.finish(stopped=False)
        self.assertEqual((shown + held, calls), ("w1 <tool w2", []))


class RealMlxSampling(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)
        self.engine = load_engine("llama")

    def tearDown(self):
        self.engine.close()

    def generate(self, request_id, temperature=0.0, seed=None, **options):
        engine = self.engine
        params = GenerationParams(chat(20), 12, temperature, seed, parse_options(options))
        prepared = engine.prepare(request_id, request_id, params, 12)
        engine.prefill(prepared, lambda *_: None)
        state = engine._decoding[request_id]
        tokens = []
        while len(tokens) < 12:
            for t in engine.decode_step():
                self.assertIsNone(t.error)
                tokens.append(t.token_id)
        return tokens, state

    def test_the_options_reach_mlx_lms_filters_and_penalties(self):
        _, state = self.generate("all", temperature=1.0, seed=3, topP=0.9, topK=5, minP=0.05,
                                 repetitionPenalty=1.3, presencePenalty=0.5, frequencyPenalty=0.5)
        self.assertEqual(len(state.sampler.filters), 3)
        self.assertEqual(len(state.plan.processors), 3)
        _, plain = self.generate("plain")
        self.assertEqual((plain.sampler.filters, plain.plan.processors), ([], []))

    def test_top_k_one_is_greedy_whatever_the_temperature(self):
        greedy, _ = self.generate("greedy")
        self.assertEqual(self.generate("k1", temperature=1.5, seed=9, topK=1)[0], greedy)
        self.assertNotEqual(self.generate("hot", temperature=1.5, seed=9)[0], greedy, "sampling must differ without the filter")

    def test_a_repetition_penalty_changes_greedy_output(self):
        greedy, _ = self.generate("greedy")
        penalised, _ = self.generate("penalised", repetitionPenalty=5.0)
        self.assertNotEqual(penalised, greedy)

    def test_the_sequential_decoder_applies_the_penalties_too(self):
        self.engine.close()
        self.engine = load_engine("llama4")  # ChunkedKVCache: decoded one request at a time
        greedy, _ = self.generate("greedy")
        penalised, state = self.generate("penalised", repetitionPenalty=5.0)
        self.assertEqual(len(state.plan.processors), 1)
        self.assertNotEqual(penalised, greedy)


class FeaturesPerFamily(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_the_hello_features_match_the_loaded_model_for_every_family(self):
        for family in FAMILIES:
            with self.subTest(family=family):
                expected = {"tools": family == "qwen3", "structuredOutput": family == "qwen3"}
                self.assertEqual(features_from_files(Path(tiny_model(family))), expected)
                engine = load_engine(family)
                try:
                    self.assertEqual(engine.features(), expected)
                finally:
                    engine.close()

    def test_a_model_without_tools_refuses_them_by_name(self):
        engine = load_engine("llama")
        try:
            for options, words_ in (({"tools": TOOLS}, "does not support tools"), ({"responseFormat": {"type": "json_object"}}, "cannot do structured output")):
                with self.subTest(options=options), self.assertRaisesRegex(Exception, f"model llama {words_}"):
                    engine.prepare("r", "c", GenerationParams(chat(4), 4, 0.0, None, parse_options(options)), 4)
            # toolChoice none: the tools are left out, and the request is served
            engine.prepare("r", "c", GenerationParams(chat(4), 4, 0.0, None, parse_options({"tools": TOOLS, "toolChoice": "none"})), 4)
        finally:
            engine.close()

    def test_the_runner_process_says_its_features_in_the_hello(self):
        runner = RunnerProcess("--model", str(tiny_model("qwen3")))
        try:
            hello = runner.wait_for(lambda m: m["type"] == "Hello", timeout=60)
            self.assertEqual(hello["features"], {"tools": True, "structuredOutput": True})
            runner.close_stdin()
            self.assertEqual(runner.wait_exit(60), 0)
        finally:
            runner.kill()


if __name__ == "__main__":
    unittest.main()
