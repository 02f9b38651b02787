import io
import json
import unittest

from exobar_mlx.protocol import (
    Cancel,
    InputError,
    ProtocolWriter,
    SetPacing,
    Task,
    fault_of,
    parse_input_line,
)


def line(obj):
    return json.dumps(obj)


class ParseInputTest(unittest.TestCase):
    def test_lifecycle_tasks_and_cancel(self):
        self.assertEqual(parse_input_line(line({"kind": "LoadModel", "taskId": "a"})), Task("LoadModel", "a"))
        self.assertEqual(parse_input_line(line({"kind": "Shutdown", "taskId": "s"})), Task("Shutdown", "s"))
        self.assertEqual(parse_input_line(line({"kind": "CancelTask", "cancelledTaskId": "t"})), Cancel("t"))

    def test_text_generation_with_defaults(self):
        task = parse_input_line(
            line(
                {
                    "kind": "TextGeneration",
                    "taskId": "t",
                    "commandId": "c",
                    "params": {"messages": [{"role": "user", "content": "hi"}], "maxTokens": None},
                }
            )
        )
        self.assertIsInstance(task, Task)
        self.assertEqual(task.command_id, "c")
        self.assertIsNone(task.params.max_tokens)
        self.assertIsNone(task.params.temperature)
        self.assertIsNone(task.params.seed)

    def test_unattributable_lines_raise(self):
        for bad in ("not json", "[1]", line({"kind": "Nope", "taskId": "x"}), line({"kind": "LoadModel"}),
                    line({"kind": "LoadModel", "taskId": "x" * 201}), line({"kind": "CancelTask"})):
            with self.subTest(bad=bad):
                with self.assertRaises(InputError):
                    parse_input_line(bad)

    def test_bad_generation_params_are_rejected_like_the_schema(self):
        base = {"kind": "TextGeneration", "taskId": "t", "commandId": "c"}
        bad_params = [
            {"messages": [], "maxTokens": 5},
            {"messages": [{"role": "robot", "content": "x"}], "maxTokens": 5},
            {"messages": [{"role": "user", "content": 3}], "maxTokens": 5},
            {"messages": [{"role": "user", "content": "x"}], "maxTokens": 0},
            {"messages": [{"role": "user", "content": "x"}]},
            {"messages": [{"role": "user", "content": "x"}], "maxTokens": 5, "temperature": 3},
            {"messages": [{"role": "user", "content": "x"}], "maxTokens": 5, "seed": 1.5},
        ]
        for params in bad_params:
            with self.subTest(params=params):
                with self.assertRaises(InputError):
                    parse_input_line(line({**base, "params": params}))

    def test_set_prefill_pacing(self):
        parsed = parse_input_line(line({"kind": "SetPrefillPacing", "pacingId": "p", "chunkTokens": 512, "pauseMs": 20}))
        self.assertEqual(parsed, SetPacing("p", 512, 20))
        self.assertEqual(
            parse_input_line(line({"kind": "SetPrefillPacing", "pacingId": "p", "chunkTokens": None, "pauseMs": 0})),
            SetPacing("p", None, 0),
        )
        base = {"kind": "SetPrefillPacing", "pacingId": "p", "chunkTokens": 512, "pauseMs": 20}
        for bad in ({"chunkTokens": 63}, {"chunkTokens": 4097}, {"pauseMs": -1}, {"pauseMs": 1001}, {"pacingId": ""}, {"pauseMs": True}):
            with self.subTest(bad=bad):
                with self.assertRaises(InputError):
                    parse_input_line(line({**base, **bad}))
        without_chunk = dict(base)
        del without_chunk["chunkTokens"]
        with self.assertRaises(InputError):
            parse_input_line(line(without_chunk))

    def test_fault_prompts(self):
        task = parse_input_line(line({"kind": "TextGeneration", "taskId": "t", "commandId": "c", "params": {
            "messages": [{"role": "system", "content": "x"}, {"role": "user", "content": "please EXOBAR RUNNER MUST HANG now"}],
            "maxTokens": 4}}))
        self.assertEqual(fault_of(task.params), "hang")


class WriterTest(unittest.TestCase):
    def test_one_json_object_per_line(self):
        stream = io.StringIO()
        writer = ProtocolWriter(stream)
        writer.hello("test", "m", 42, {"MLX_METAL_FAST_SYNCH": None, "EXO_FAST_SYNCH": "false"}, False)
        writer.token("c", "hi\nthere", 7, "stop", {"promptTokens": 1, "completionTokens": 1}, None)
        lines = stream.getvalue().split("\n")
        self.assertEqual(lines[-1], "")
        hello, token = (json.loads(x) for x in lines[:-1])
        self.assertEqual(hello["protocolVersion"], 3)
        self.assertEqual(hello["env"]["EXO_FAST_SYNCH"], "false")
        self.assertEqual(token["chunk"]["text"], "hi\nthere")
        self.assertEqual(token["chunk"]["finishReason"], "stop")


if __name__ == "__main__":
    unittest.main()
