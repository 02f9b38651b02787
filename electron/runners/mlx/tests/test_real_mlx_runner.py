"""The runner on real MLX: failures that stay with their request, per-request seeds,
Llama 4 served one request at a time, and the hello of a real process."""
import unittest

from .helpers import RunnerProcess, generation
from .real_mlx import chat, drive, load_engine, mlx_lm_greedy, params, require_real_mlx, tiny_model, words
from .test_step_loop import Harness

MARKER = "w996"  # a word only the failing request's prompt contains


def task(task_id, n_words, max_tokens, offset=0, extra=""):
    message = generation(task_id, max_tokens=max_tokens, content=(words(n_words, offset) + extra))
    message["params"]["temperature"] = 0.0
    return message


class ModelThatFailsOn:
    """The real model, raising an out-of-memory error on any chunk holding `token`."""

    def __init__(self, model, token):
        self.model, self.token = model, token

    def __call__(self, inputs, cache=None):
        if self.token in inputs.reshape(-1).tolist():
            raise RuntimeError("[metal::malloc] Attempting to allocate 68719476736 bytes which is greater than the maximum allowed")
        return self.model(inputs, cache=cache)

    def __getattr__(self, name):
        return getattr(self.model, name)


class FailuresStayWithTheirRequest(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def harness(self, family="llama"):
        engine = load_engine(family)
        h = Harness(engine=engine).start_ready()
        return h, engine

    def test_out_of_memory_in_one_prefill_is_that_requests_error(self):
        h, engine = self.harness()
        marker = engine.tokenizer.convert_tokens_to_ids(MARKER)
        engine.model = ModelThatFailsOn(engine.model, marker)
        h.put(task("ok", 60, 12), task("bad", 60, 12, extra=f" {MARKER}"), task("ok2", 30, 4))
        h.wait_label("task:ok:Complete")
        h.wait_label("task:ok2:Complete")
        labels = h.labels()
        self.assertIn("error:cmd-bad", labels)
        self.assertIn("task:bad:Failed", labels)
        self.assertNotIn("runner:RunnerFailed", labels)
        error = next(m for m in h.capture.messages if m["type"] == "ChunkGenerated" and m["chunk"]["kind"] == "ErrorChunk")
        self.assertIn("prefill failed: out of memory", error["chunk"]["errorMessage"])
        self.assertEqual(h.shutdown(), 0)

    def test_an_exception_in_one_requests_sampling_is_that_requests_error(self):
        h, engine = self.harness()
        original = engine.prefill

        def prefill(request, on_chunk):
            original(request, on_chunk)
            if request.request_id == "bad":
                def boom(_logprobs):
                    raise ValueError("sampler broke")

                engine._decoding["bad"].sampler._sample = boom

        engine.prefill = prefill
        h.put(task("ok", 40, 10), task("bad", 40, 10, offset=50))
        h.wait_label("task:ok:Complete")
        h.wait_label("task:bad:Failed")
        tokens = [m for m in h.capture.messages if m.get("commandId") == "cmd-ok" and m["chunk"]["kind"] == "TokenChunk"]
        self.assertEqual(len(tokens), 10)
        self.assertNotIn("runner:RunnerFailed", h.labels())
        self.assertEqual(h.shutdown(), 0)


class PerRequestSeeds(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_a_seed_gives_the_same_tokens_whatever_runs_beside_it(self):
        seeded = ("s", params(chat(30), 12, temperature=1.0, seed=42))
        engine = load_engine("gemma3")
        alone = drive(engine, [seeded])["s"]
        beside = drive(engine, [("x", params(chat(50, 7), 12, temperature=1.0)), seeded,
                                ("y", params(chat(20, 9), 12, temperature=1.0, seed=43))])
        again = drive(engine, [seeded])["s"]
        other_seed = drive(engine, [("t", params(chat(30), 12, temperature=1.0, seed=41))])["t"]
        engine.close()
        self.assertEqual(beside["s"], alone)
        self.assertEqual(again, alone)
        self.assertNotEqual(other_seed, alone, "sampling must actually depend on the seed")


class RealRunnerProcess(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_llama4_serves_requests_one_at_a_time_and_never_crashes(self):
        model = tiny_model("llama4")
        runner = RunnerProcess("--model", str(model), "--prefill-chunk", "16", "--wired-limit-bytes", "1073741824")
        try:
            hello = runner.wait_for(lambda m: m["type"] == "Hello")
            self.assertEqual(hello["device"], "cpu")
            self.assertIn("wiredLimit", " ".join(hello["skipped"]))
            runner.send({"kind": "LoadModel", "taskId": "load"})
            runner.send({"kind": "StartWarmup", "taskId": "warm"})
            loaded = runner.wait_for(lambda m: m["type"] == "RunnerStatusUpdated" and m["status"]["kind"] == "RunnerLoaded")
            self.assertEqual(loaded["status"]["batching"], "sequential")
            self.assertIn("Llama 4", loaded["status"]["batchingReason"])
            for task_id in ("a", "b", "c"):
                runner.send(task(task_id, 60, 6))
            for task_id in ("a", "b", "c"):
                runner.wait_for(lambda m, t=task_id: m.get("taskId") == t and m.get("status") == "Complete", timeout=60)
            labels = runner.labels()
            # one at a time: b is acknowledged when read (as exo's runner does) but waits in
            # the runner's queue; its prefill starts only after a has finished
            first_b_prefill = next(i for i, label in enumerate(labels) if label.startswith("prefill:cmd-b:"))
            self.assertLess(labels.index("ack:b"), labels.index("task:a:Complete"))
            self.assertLess(labels.index("task:a:Complete"), first_b_prefill)
            expected, _ = mlx_lm_greedy("llama4", chat(60), 6)
            got = [m["chunk"]["tokenId"] for m in runner.messages
                   if m.get("commandId") == "cmd-a" and m["chunk"]["kind"] == "TokenChunk"]
            self.assertEqual(got, expected)
            runner.send({"kind": "Shutdown", "taskId": "bye"})
            self.assertEqual(runner.wait_exit(30), 0)
        finally:
            runner.kill()


if __name__ == "__main__":
    unittest.main()
