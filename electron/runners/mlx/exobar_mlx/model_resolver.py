"""Finds a model's weights on this Mac, never downloading them.

A model is given as a local directory or as a Hugging Face repo id
("mlx-community/Llama-3.2-1B-Instruct-4bit"). A repo id is looked up where the
weights may already be: the Hugging Face hub cache (models--org--name/snapshots/*)
and exo's model directory (~/.exo/models/org--name, exo's build_model_path). Loading
from the network is out of the question (the runner also sets HF_HUB_OFFLINE=1), so
a model that is not there is a clear error naming the places searched.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import List, Mapping, Optional

from .engine import ModelNotFoundError


def hub_cache_dirs(env: Mapping[str, str], home: Path) -> List[Path]:
    """Hugging Face hub cache roots, in huggingface_hub's order of precedence."""
    dirs: List[Path] = []
    if env.get("HF_HUB_CACHE"):
        dirs.append(Path(env["HF_HUB_CACHE"]).expanduser())
    if env.get("HUGGINGFACE_HUB_CACHE"):
        dirs.append(Path(env["HUGGINGFACE_HUB_CACHE"]).expanduser())
    if env.get("HF_HOME"):
        dirs.append(Path(env["HF_HOME"]).expanduser() / "hub")
    xdg = env.get("XDG_CACHE_HOME")
    dirs.append((Path(xdg).expanduser() if xdg else home / ".cache") / "huggingface" / "hub")
    seen, unique = set(), []
    for d in dirs:
        if d not in seen:
            seen.add(d)
            unique.append(d)
    return unique


def exo_models_dir(env: Mapping[str, str], home: Path) -> Path:
    """exo keeps downloaded models in $EXO_HOME/models (default ~/.exo/models)."""
    exo_home = Path(env["EXO_HOME"]).expanduser() if env.get("EXO_HOME") else home / ".exo"
    return exo_home / "models"


def is_model_dir(path: Path) -> bool:
    """An MLX model directory: a config.json and at least one .safetensors file."""
    try:
        return (path / "config.json").is_file() and any(path.glob("*.safetensors"))
    except OSError:
        return False


def _looks_like_repo_id(ref: str) -> bool:
    parts = ref.split("/")
    return len(parts) == 2 and all(parts) and not ref.startswith((".", "~")) and " " not in ref


def _snapshot_in_hub(cache_root: Path, repo_id: str) -> Optional[Path]:
    repo_dir = cache_root / ("models--" + repo_id.replace("/", "--"))
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return None
    # Prefer the revision refs/main points at (what the hub client would load).
    ref_main = repo_dir / "refs" / "main"
    if ref_main.is_file():
        candidate = snapshots / ref_main.read_text(encoding="utf-8").strip()
        if is_model_dir(candidate):
            return candidate
    complete = [d for d in snapshots.iterdir() if d.is_dir() and is_model_dir(d)]
    if not complete:
        return None
    return max(complete, key=lambda d: d.stat().st_mtime)


def resolve_model(ref: str, env: Mapping[str, str] = os.environ, home: Optional[Path] = None) -> Path:
    """The local directory holding `ref`'s weights; raises ModelNotFoundError."""
    home = home or Path.home()
    if not ref or not ref.strip():
        raise ModelNotFoundError("no model given (--model is empty)")
    searched: List[str] = []
    direct = Path(ref).expanduser()
    if direct.is_dir():
        if is_model_dir(direct):
            return direct.resolve()
        raise ModelNotFoundError(
            f"{direct} is not an MLX model directory: it needs a config.json and *.safetensors weights"
        )
    searched.append(str(direct))
    if _looks_like_repo_id(ref):
        for root in hub_cache_dirs(env, home):
            found = _snapshot_in_hub(root, ref)
            if found is not None:
                return found
            searched.append(str(root / ("models--" + ref.replace("/", "--"))))
        exo_dir = exo_models_dir(env, home) / ref.replace("/", "--")
        if is_model_dir(exo_dir):
            return exo_dir
        searched.append(str(exo_dir))
    raise ModelNotFoundError(
        f"model {ref!r} is not on this Mac (looked in: {'; '.join(searched)}). "
        "The runner never downloads weights: fetch them first (e.g. `hf download "
        f"{ref if _looks_like_repo_id(ref) else '<org>/<name>'}`, or let exo download them), then relaunch."
    )


def read_total_layers(model_dir: Path) -> Optional[int]:
    """num_hidden_layers from config.json (text_config for multimodal models), if present."""
    try:
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    for source in (config, config.get("text_config") or {}):
        for key in ("num_hidden_layers", "n_layer", "num_layers"):
            value = source.get(key) if isinstance(source, dict) else None
            if isinstance(value, int) and value > 0:
                return value
    return None
