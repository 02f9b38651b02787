import json
import os
import tempfile
import time
import unittest
from pathlib import Path

from exobar_mlx.engine import ModelNotFoundError
from exobar_mlx.model_resolver import read_total_layers, resolve_model


def make_model(directory: Path, layers: int = 16) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps({"num_hidden_layers": layers}))
    (directory / "model.safetensors").write_bytes(b"\0" * 10)
    return directory


class ResolverTest(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory()
        self.home = Path(self._tmp.name) / "home"
        self.home.mkdir()

    def tearDown(self):
        self._tmp.cleanup()

    def test_local_directory(self):
        model = make_model(self.home / "models" / "m")
        self.assertEqual(resolve_model(str(model), {}, self.home), model.resolve())

    def test_local_directory_without_weights_is_a_clear_error(self):
        d = self.home / "empty"
        d.mkdir()
        (d / "config.json").write_text("{}")
        with self.assertRaisesRegex(ModelNotFoundError, "safetensors"):
            resolve_model(str(d), {}, self.home)

    def test_hub_cache_prefers_refs_main(self):
        repo = self.home / ".cache" / "huggingface" / "hub" / "models--mlx-community--Llama-3.2-1B-Instruct-4bit"
        old = make_model(repo / "snapshots" / "aaa")
        main = make_model(repo / "snapshots" / "bbb")
        os.utime(old, (time.time() + 100, time.time() + 100))
        (repo / "refs").mkdir()
        (repo / "refs" / "main").write_text("bbb\n")
        self.assertEqual(resolve_model("mlx-community/Llama-3.2-1B-Instruct-4bit", {}, self.home), main)

    def test_hub_cache_from_hf_home_and_newest_complete_snapshot(self):
        hf_home = self.home / "hf"
        repo = hf_home / "hub" / "models--org--name"
        make_model(repo / "snapshots" / "one")
        incomplete = repo / "snapshots" / "two"
        incomplete.mkdir(parents=True)
        (incomplete / "config.json").write_text("{}")
        self.assertEqual(resolve_model("org/name", {"HF_HOME": str(hf_home)}, self.home), repo / "snapshots" / "one")

    def test_exo_models_directory(self):
        model = make_model(self.home / ".exo" / "models" / "mlx-community--Llama-3.2-3B-Instruct-4bit")
        self.assertEqual(resolve_model("mlx-community/Llama-3.2-3B-Instruct-4bit", {}, self.home), model)

    def test_missing_model_names_where_it_looked_and_never_downloads(self):
        with self.assertRaises(ModelNotFoundError) as caught:
            resolve_model("org/absent", {"HF_HUB_CACHE": str(self.home / "c")}, self.home)
        message = str(caught.exception)
        self.assertIn("models--org--absent", message)
        self.assertIn(".exo", message)
        self.assertIn("never downloads", message)

    def test_total_layers_from_config(self):
        self.assertEqual(read_total_layers(make_model(self.home / "x", 28)), 28)
        nested = self.home / "y"
        nested.mkdir()
        (nested / "config.json").write_text(json.dumps({"text_config": {"num_hidden_layers": 34}}))
        self.assertEqual(read_total_layers(nested), 34)
        self.assertIsNone(read_total_layers(self.home / "nothing"))


if __name__ == "__main__":
    unittest.main()
