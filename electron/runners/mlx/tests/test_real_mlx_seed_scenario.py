"""The stall scenario (tools/seed_scenario.py) on the real mlx engine with tiny models:
a small model's first token while another runner prefills a long prompt, with and
without a request queued behind that prefill. CPU timings are not the Mac's; what is
checked is that nothing stalled: in both conditions the small model's first token came
while the long prefill was still running (a stall would have waited for its end). The
TTFTs are tens of milliseconds here, so their ratio is noise and is not checked."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from .helpers import RUNNER_DIR
from .real_mlx import require_real_mlx, tiny_model

SCRIPT = os.path.join(RUNNER_DIR, "tools", "seed_scenario.py")
LONG_PROMPT_TOKENS = 20_000
#: A sanity bound only: the order of events above is the check.
STALL_S = 10.0


class SeedScenarioOnRealMlx(unittest.TestCase):
    def setUp(self):
        require_real_mlx(self)

    def test_the_small_model_answers_during_the_long_prefill_and_a_queued_request_costs_nothing(self):
        small, large = tiny_model("llama"), tiny_model("mamba2")
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            result = subprocess.run(
                [sys.executable, SCRIPT, "--engine", "mlx", "--small", str(small), "--large", str(large),
                 "--long-prompt-tokens", str(LONG_PROMPT_TOKENS), "--delay", "1.0", "--trials", "1", "--check", "1000",
                 "--timeout", "120", "--json", out, "--runner-log", os.path.join(tmp, "runners.log")],
                capture_output=True, text=True, timeout=300,
            )
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            with open(out, encoding="utf-8") as f:
                data = json.load(f)
        self.assertTrue(all(d["largeStillBusy"] for d in data["details"]), data["details"])
        self.assertEqual([d["longPromptTokens"] for d in data["details"]], [LONG_PROMPT_TOKENS + 7] * 2)
        for case, ttft in data["medianTtftS"].items():
            self.assertLess(ttft, STALL_S, f"{case}: the small model's first token stalled")


if __name__ == "__main__":
    unittest.main()
