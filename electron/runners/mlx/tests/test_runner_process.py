"""The runner as a real child process: hello, faults, failures, stdin handling."""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from .fake_mlx import make_model_dir
from .helpers import RUNNER, RUNNER_DIR, RunnerProcess, generation

FAST = ["--engine", "test", "--model", "test/model", "--time-scale", "0.05"]


def lifecycle(runner: RunnerProcess) -> None:
    runner.send({"kind": "LoadModel", "taskId": "load"})
    runner.send({"kind": "StartWarmup", "taskId": "warm"})
    runner.wait_for(lambda m: m.get("taskId") == "warm" and m.get("status") == "Complete")


class RunnerProcessTest(unittest.TestCase):
    def test_hello_first_with_the_fast_synch_mlx_will_use(self):
        runner = RunnerProcess(*FAST, env={"MLX_METAL_FAST_SYNCH": "1", "EXO_FAST_SYNCH": "false"})
        try:
            hello = runner.wait_for(lambda m: m["type"] == "Hello")
            self.assertIs(runner.messages[0], hello)
            self.assertEqual(hello["engine"], "test")
            self.assertEqual(hello["model"], "test/model")
            self.assertEqual(hello["pid"], runner.proc.pid)
            self.assertEqual(hello["env"], {"MLX_METAL_FAST_SYNCH": "1", "EXO_FAST_SYNCH": "false"})
            self.assertIs(hello["fastSynch"], False)
            runner.close_stdin()
            self.assertEqual(runner.wait_exit(), 0)
        finally:
            runner.kill()

    def test_hello_names_the_schedule_and_the_prompt_cache(self):
        for args, schedule, cap in (([], "interleaved", 0), (["--schedule", "exo", "--prompt-cache-bytes", "4096"], "exo", 4096)):
            with self.subTest(args=args):
                runner = RunnerProcess(*FAST, *args)
                try:
                    hello = runner.wait_for(lambda m: m["type"] == "Hello")
                    self.assertEqual(hello["protocolVersion"], 3)
                    self.assertEqual(hello["schedule"], schedule)
                    self.assertEqual(hello["promptCache"], {"capBytes": cap, "supported": True, "reason": None})
                    runner.close_stdin()
                    self.assertEqual(runner.wait_exit(), 0)
                finally:
                    runner.kill()

    def test_engine_options_out_of_bounds_exit_2(self):
        for args in (["--schedule", "fifo"], ["--prefill-chunk-ms", "5"], ["--prefill-chunk-ms", "10001"],
                     ["--prompt-cache-bytes", "-1"]):
            with self.subTest(args=args):
                result = subprocess.run([sys.executable, str(RUNNER), *FAST, *args], capture_output=True, timeout=60)
                self.assertEqual(result.returncode, 2, result.stderr)

    def test_a_repeated_prompt_is_served_from_the_cache_end_to_end(self):
        runner = RunnerProcess(*FAST, "--prompt-cache-bytes", str(1 << 30))
        try:
            lifecycle(runner)
            for task_id in ("t1", "t2"):
                runner.send(generation(task_id, words=30, max_tokens=2))
                runner.wait_for(lambda m, t=task_id: m.get("taskId") == t and m.get("status") == "Complete")
            finals = [m["chunk"]["usage"] for m in runner.messages
                      if m["type"] == "ChunkGenerated" and m["chunk"].get("finishReason")]
            self.assertEqual([u["cachedTokens"] for u in finals], [0, 37])
            stats = [m for m in runner.messages if m["type"] == "PromptCacheStats"]
            self.assertEqual([(s["hits"], s["misses"], s["hitTokens"], s["entries"]) for s in stats], [(0, 1, 0, 1), (1, 1, 37, 1)])
            self.assertEqual(stats[-1]["bytes"], 37 * 32768)
            runner.send({"kind": "Shutdown", "taskId": "bye"})
            self.assertEqual(runner.wait_exit(), 0)
        finally:
            runner.kill()

    def test_generation_end_to_end_and_clean_shutdown(self):
        runner = RunnerProcess(*FAST)
        try:
            lifecycle(runner)
            runner.send_line("this is not json")
            runner.send(generation("t1", words=5, max_tokens=4))
            final = runner.wait_for(lambda m: m["type"] == "ChunkGenerated" and m["chunk"].get("finishReason"))
            self.assertEqual(final["chunk"]["usage"], {"promptTokens": 12, "completionTokens": 4})
            runner.send({"kind": "Shutdown", "taskId": "bye"})
            self.assertEqual(runner.wait_exit(), 0)
            self.assertEqual(runner.messages[-1]["status"], {"kind": "RunnerShutdown"})
            self.assertIn(b"ignored stdin line (not JSON", runner.stderr)
        finally:
            runner.kill()

    def test_crash_prompt_exits_1_mid_generation(self):
        runner = RunnerProcess(*FAST)
        try:
            lifecycle(runner)
            runner.send(generation("t1", max_tokens=20, content="EXOBAR RUNNER MUST CRASH"))
            self.assertEqual(runner.wait_exit(), 1)
            tokens = [m for m in runner.messages if m["type"] == "ChunkGenerated" and m["chunk"]["kind"] == "TokenChunk"]
            self.assertEqual(len(tokens), 3)
        finally:
            runner.kill()

    def test_hang_prompt_stays_alive_and_silent(self):
        runner = RunnerProcess(*FAST)
        try:
            lifecycle(runner)
            runner.send(generation("t1", max_tokens=20, content="EXOBAR RUNNER MUST HANG"))
            runner.wait_for(lambda m: m.get("status") == {"kind": "RunnerRunning"})
            time.sleep(0.2)
            count = len(runner.messages)
            runner.send({"kind": "Shutdown", "taskId": "bye"})
            time.sleep(0.6)
            self.assertIsNone(runner.proc.poll())
            self.assertEqual(len(runner.messages), count)  # silent: not even the Shutdown is answered
            self.assertFalse(any(m["type"] == "ChunkGenerated" for m in runner.messages))
            os.killpg(runner.proc.pid, signal.SIGTERM)
            self.assertEqual(runner.wait_exit(), -signal.SIGTERM)
        finally:
            runner.kill()

    def test_missing_mlx_model_is_an_error_chunk_a_failed_runner_and_exit_1(self):
        with tempfile.TemporaryDirectory() as home:
            env = {"HOME": home, "HF_HUB_CACHE": str(Path(home) / "hub"), "EXO_HOME": str(Path(home) / "exo")}
            runner = RunnerProcess("--engine", "mlx", "--model", "mlx-community/Not-Here-4bit", env=env)
            try:
                runner.send({"kind": "LoadModel", "taskId": "load"})
                self.assertEqual(runner.wait_exit(), 1)
                kinds = [m["type"] for m in runner.messages]
                self.assertEqual(runner.messages[0]["engine"], "mlx")
                error = next(m for m in runner.messages if m["type"] == "ChunkGenerated")
                self.assertEqual(error["commandId"], "load")
                self.assertIn("never downloads", error["chunk"]["errorMessage"])
                self.assertEqual(kinds[-1], "RunnerStatusUpdated")
                self.assertEqual(runner.messages[-1]["status"]["kind"], "RunnerFailed")
                self.assertIn("Not-Here-4bit", runner.messages[-1]["status"]["errorMessage"])
            finally:
                runner.kill()

    def test_without_mlx_a_present_model_fails_clearly(self):
        try:
            import mlx.core  # noqa: F401
            self.skipTest("mlx is installed here")
        except ImportError:
            pass
        with tempfile.TemporaryDirectory() as tmp:
            model = make_model_dir(Path(tmp) / "m")
            runner = RunnerProcess("--engine", "mlx", "--model", str(model))
            try:
                runner.send({"kind": "LoadModel", "taskId": "load"})
                self.assertEqual(runner.wait_exit(), 1)
                status = runner.messages[-1]["status"]
                self.assertEqual(status["kind"], "RunnerFailed")
                self.assertIn("MLX is not available", status["errorMessage"])
            finally:
                runner.kill()

    def test_stray_prints_never_reach_the_protocol_stream(self):
        code = (
            "import sys; sys.path.insert(0, sys.argv[1]);"
            "from exobar_mlx.main import _protocol_stream;"
            "s = _protocol_stream(); print('library noise'); s.write('{\"ok\":1}\\n'); s.flush()"
        )
        result = subprocess.run([sys.executable, "-c", code, str(RUNNER_DIR)], capture_output=True, timeout=20)
        self.assertEqual(result.stdout, b'{"ok":1}\n')
        self.assertIn(b"library noise", result.stderr)

    def test_bad_flags_exit_2_with_usage(self):
        result = subprocess.run([sys.executable, str(RUNNER), "--engine", "nope", "--model", "x"],
                                capture_output=True, timeout=20)
        self.assertEqual(result.returncode, 2)
        self.assertIn(b"usage", result.stderr)
        self.assertEqual(result.stdout, b"")


if __name__ == "__main__":
    unittest.main()
