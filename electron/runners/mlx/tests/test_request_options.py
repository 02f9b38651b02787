"""Tools, tool choice, response format and sampling options in a TextGeneration line,
the ToolCallChunk, and the test engine's scripted tool calls."""
import io
import json
import unittest

from exobar_mlx.protocol import InputError, ProtocolWriter, parse_input_line
from exobar_mlx.request_options import Sampling

from .test_step_loop import Harness
from exobar_mlx.test_engine import TestEngine

TOOLS = [{"name": "get_weather", "description": "d", "parameters": {"type": "object"}}, {"name": "noop"}]


def task(**params):
    return {"kind": "TextGeneration", "taskId": "t", "commandId": "c",
            "params": {"messages": [{"role": "user", "content": "w1 w2"}], "maxTokens": 8, **params}}


def parse(**params):
    return parse_input_line(json.dumps(task(**params))).params


class ParseOptionsTest(unittest.TestCase):
    def test_tools_choice_format_and_sampling_are_parsed(self):
        params = parse(tools=TOOLS, toolChoice={"name": "noop"}, responseFormat={"type": "json_schema", "schema": {"type": "object"}, "strict": True},
                       topP=0.9, topK=40, minP=0.05, repetitionPenalty=1.1, presencePenalty=0.5, frequencyPenalty=-0.5)
        options = params.options
        self.assertEqual([t.name for t in options.tools], ["get_weather", "noop"])
        self.assertEqual(options.forced_tool, "noop")
        self.assertTrue(options.must_call)
        self.assertEqual(options.response_format["type"], "json_schema")
        self.assertEqual(options.sampling, Sampling(0.9, 40, 0.05, 1.1, 0.5, -0.5))

    def test_without_options_nothing_changes(self):
        options = parse().options
        self.assertEqual(options.tools, ())
        self.assertFalse(options.uses_tools)
        self.assertIsNone(options.response_format)
        self.assertEqual(options.sampling, Sampling())

    def test_tool_choice_none_keeps_tools_out(self):
        options = parse(tools=TOOLS, toolChoice="none").options
        self.assertFalse(options.uses_tools)
        self.assertFalse(options.must_call)
        self.assertTrue(parse(tools=TOOLS, toolChoice="required").options.must_call)
        self.assertFalse(parse(tools=TOOLS).options.must_call)

    def test_message_tool_fields(self):
        messages = [{"role": "user", "content": "w1"},
                    {"role": "assistant", "content": "", "toolCalls": [{"id": "a", "name": "noop", "arguments": "{}"}]},
                    {"role": "tool", "content": "w2", "toolCallId": "a"}]
        params = parse_input_line(json.dumps({**task(), "params": {"messages": messages, "maxTokens": 4}})).params
        self.assertEqual(params.messages[1]["toolCalls"], [{"id": "a", "name": "noop", "arguments": "{}"}])
        self.assertEqual(params.messages[2]["toolCallId"], "a")
        self.assertNotIn("toolCalls", params.messages[0])

    def test_bad_options_are_input_errors(self):
        bad = [
            {"tools": {"name": "x"}}, {"tools": [{"description": "no name"}]}, {"tools": [{"name": "x", "parameters": "schema"}]},
            {"tools": TOOLS, "toolChoice": "sometimes"}, {"tools": TOOLS, "toolChoice": {"name": ""}},
            {"responseFormat": {"type": "xml"}}, {"responseFormat": {"type": "json_schema"}},
            {"topP": 0}, {"topP": 1.5}, {"topK": -1}, {"topK": 2.5}, {"minP": 2}, {"repetitionPenalty": 0},
            {"presencePenalty": "high"}, {"frequencyPenalty": True},
        ]
        for params in bad:
            with self.subTest(params=params), self.assertRaises(InputError):
                parse(**params)
        for message in ({"role": "assistant", "content": "", "toolCalls": [{"id": "a", "name": "x", "arguments": {}}]},
                        {"role": "tool", "content": "", "toolCallId": ""}):
            with self.subTest(message=message), self.assertRaises(InputError):
                parse_input_line(json.dumps({**task(), "params": {"messages": [message], "maxTokens": 4}}))


class ToolCallChunkTest(unittest.TestCase):
    def test_the_writer_sends_complete_calls(self):
        stream = io.StringIO()
        ProtocolWriter(stream).tool_calls("c", [{"id": "call_1", "name": "noop", "arguments": "{}"}])
        self.assertEqual(json.loads(stream.getvalue()), {"type": "ChunkGenerated", "commandId": "c", "chunk": {
            "kind": "ToolCallChunk", "toolCalls": [{"id": "call_1", "name": "noop", "arguments": "{}"}]}})


class TestEngineToolsTest(unittest.TestCase):
    def run_task(self, **params):
        h = Harness(engine=TestEngine(time_scale=0.01)).start_ready()
        h.put({**task(**params), "taskId": "t", "commandId": "cmd-t"})
        h.wait_label("task:t:Complete")
        self.assertEqual(h.shutdown(), 0)
        return [m for m in h.capture.messages if m.get("commandId") == "cmd-t" and m["chunk"]["kind"] != "PrefillProgressChunk"]

    def test_a_named_choice_gets_one_scripted_call_then_tool_calls(self):
        chunks = self.run_task(tools=TOOLS, toolChoice={"name": "noop"})
        self.assertEqual([c["chunk"]["kind"] for c in chunks], ["ToolCallChunk", "TokenChunk"])
        call = chunks[0]["chunk"]["toolCalls"][0]
        self.assertEqual((call["name"], call["arguments"]), ("noop", "{}"))
        self.assertEqual(chunks[1]["chunk"]["finishReason"], "tool_calls")
        self.assertEqual(chunks[1]["chunk"]["text"], "")

    def test_a_named_function_not_among_the_tools_is_that_requests_error(self):
        h = Harness(engine=TestEngine(time_scale=0.01)).start_ready()
        h.put({**task(tools=TOOLS, toolChoice={"name": "missing"}), "taskId": "t", "commandId": "cmd-t"})
        h.wait_label("task:t:Failed")
        error = next(m for m in h.capture.messages if m.get("commandId") == "cmd-t" and m["chunk"]["kind"] == "ErrorChunk")
        self.assertIn("'missing'", error["chunk"]["errorMessage"])
        self.assertEqual(h.shutdown(), 0)

    def test_auto_answers_text(self):
        chunks = self.run_task(tools=TOOLS, toolChoice="auto")
        self.assertTrue(all(c["chunk"]["kind"] == "TokenChunk" for c in chunks))
        self.assertEqual(chunks[-1]["chunk"]["finishReason"], "length")

    def test_structured_output_is_refused_by_name(self):
        h = Harness(engine=TestEngine(time_scale=0.01)).start_ready()
        h.put({**task(responseFormat={"type": "json_object"}), "taskId": "t", "commandId": "cmd-t"})
        h.wait_label("task:t:Failed")
        error = next(m for m in h.capture.messages if m.get("commandId") == "cmd-t" and m["chunk"]["kind"] == "ErrorChunk")
        self.assertIn("structured output", error["chunk"]["errorMessage"])
        self.assertEqual(h.shutdown(), 0)


if __name__ == "__main__":
    unittest.main()
