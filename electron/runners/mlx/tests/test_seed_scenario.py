"""The seed-scenario driver (tools/seed_scenario.py) on the test engine: a smoke test,
so the documented manual check on a Mac runs a script that is known to work."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

from .helpers import RUNNER_DIR

SCRIPT = os.path.join(RUNNER_DIR, "tools", "seed_scenario.py")


class SeedScenarioTest(unittest.TestCase):
    def test_runs_all_three_conditions_and_reports_them(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "result.json")
            result = subprocess.run(
                [sys.executable, SCRIPT, "--engine", "test", "--small", "test/1b", "--large", "test/3b",
                 "--trials", "1", "--check", "1000", "--json", out, "--runner-log", os.path.join(tmp, "runners.log")],
                capture_output=True, text=True, timeout=120,
            )
            self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
            self.assertIn("busy+queued / busy", result.stdout)
            with open(out, encoding="utf-8") as f:
                data = json.load(f)
        self.assertEqual(set(data["medianTtftS"]), {"alone", "busy", "busy+queued"})
        self.assertTrue(all(v > 0 for v in data["medianTtftS"].values()))
        self.assertEqual([d["longPromptTokens"] for d in data["details"]], [30000, 30000])
        self.assertTrue(all(d["largeStillBusy"] for d in data["details"]))


if __name__ == "__main__":
    unittest.main()
