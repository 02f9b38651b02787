"""The supported mlx-lm range: refused at start outside it, stated by --version."""
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from exobar_mlx.versions import SUPPORTED_RANGE, unsupported_reason, version_text

from .helpers import RUNNER, RunnerProcess


def fake_mlx_lm(root: Path, version: str) -> Path:
    """A site directory whose only package metadata says mlx-lm is at `version`."""
    info = root / f"mlx_lm-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: mlx-lm\nVersion: {version}\n")
    return root


class VersionsTest(unittest.TestCase):
    def test_the_range(self):
        self.assertIsNone(unsupported_reason("0.32.2"))
        self.assertIsNone(unsupported_reason("0.32.0"))
        self.assertIsNone(unsupported_reason(None))  # missing: reported at LoadModel
        self.assertRegex(unsupported_reason("0.31.9"), r"0.31.9 is too old: this runner supports mlx-lm >=0.32.0,<0.33")
        self.assertRegex(unsupported_reason("0.33.0"), r"newer than this runner supports")
        self.assertRegex(unsupported_reason("banana"), r"unreadable version")
        self.assertIn(SUPPORTED_RANGE, version_text(lambda: "0.32.2"))
        self.assertIn("installed here: mlx-lm not installed", version_text(lambda: None))

    def test_version_flag_prints_the_range(self):
        out = subprocess.run([sys.executable, str(RUNNER), "--version"], capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertIn(f"supports mlx-lm {SUPPORTED_RANGE}", out.stdout)

    def test_an_older_mlx_lm_is_refused_at_start_after_the_hello(self):
        with tempfile.TemporaryDirectory() as tmp:
            site = fake_mlx_lm(Path(tmp), "0.30.0")
            env = {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")])}
            runner = RunnerProcess("--model", "/nonexistent/model", env=env)
            try:
                self.assertEqual(runner.wait_exit(30), 1)
                hello, failed = runner.messages
                self.assertEqual(hello["type"], "Hello")
                self.assertEqual(hello["mlxLm"], {"installed": "0.30.0", "supported": SUPPORTED_RANGE})
                self.assertEqual(failed["status"]["kind"], "RunnerFailed")
                self.assertIn("mlx-lm 0.30.0 is too old", failed["status"]["errorMessage"])
            finally:
                runner.kill()


if __name__ == "__main__":
    unittest.main()
