"""The Hello's `features` of a model, read from its files before it is loaded.

The Hello goes out before LoadModel, so the node can refuse a request early (400) for
what the model cannot do. Loading the tokenizer through mlx-lm would import
transformers, which takes seconds to tens of seconds on a busy machine, too long before
the first line. So the same decisions are taken from the files:
- tools: the chat template (tokenizer_config.json, chat_template.jinja or .json) uses
  `tools`, and a tool-call parser is declared: `tool_parser_type` in the config, or
  mlx-lm's own inference (tokenizer_utils._infer_tool_parser and its helper, compiled
  from mlx-lm's source without running that module's imports);
- structuredOutput: llguidance is installed and reads tokenizer.json into a
  vocabulary that can write JSON (constrained.py's check).
After loading, the engine decides from the loaded tokenizer (request_plan.py); a test
keeps both equal for every tiny model family.
"""
from __future__ import annotations

import ast
import importlib.util
import json
import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable, Dict, Optional

from .tools import template_takes_tools

log = logging.getLogger("exobar.mlx.features")
NO_FEATURES = {"tools": False, "structuredOutput": False}


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def chat_template_of(model_dir: Path) -> Any:
    config = _read_json(model_dir / "tokenizer_config.json") or {}
    if config.get("chat_template"):
        return config["chat_template"]
    jinja = model_dir / "chat_template.jinja"
    if jinja.is_file():
        return jinja.read_text(encoding="utf-8")
    named = _read_json(model_dir / "chat_template.json") or {}
    return named.get("chat_template")


def _mlx_lm_tool_parser_inference() -> Optional[Callable[[Any], Optional[str]]]:
    """mlx-lm's _infer_tool_parser, compiled from its source file on its own."""
    spec = importlib.util.find_spec("mlx_lm")
    if spec is None or not spec.submodule_search_locations:
        return None
    source_file = Path(list(spec.submodule_search_locations)[0]) / "tokenizer_utils.py"
    tree = ast.parse(source_file.read_text(encoding="utf-8"))
    wanted = {"_infer_tool_parser", "_is_xtml_vocab"}
    functions = [node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in wanted]
    if {f.name for f in functions} != wanted:
        return None
    namespace: Dict[str, Any] = {}
    exec(compile(ast.Module(body=functions, type_ignores=[]), str(source_file), "exec"), namespace)
    return namespace["_infer_tool_parser"]


def _vocab(tokenizer_json: Any) -> Dict[str, int]:
    vocab = dict(((tokenizer_json or {}).get("model") or {}).get("vocab") or {})
    for added in (tokenizer_json or {}).get("added_tokens") or []:
        vocab[added.get("content")] = added.get("id")
    return vocab


def has_tool_parser(model_dir: Path, chat_template: Any) -> bool:
    config = _read_json(model_dir / "tokenizer_config.json") or {}
    if config.get("tool_parser_type"):
        return True
    infer = _mlx_lm_tool_parser_inference()
    if infer is None:
        return False
    vocab = _vocab(_read_json(model_dir / "tokenizer.json"))
    return infer(SimpleNamespace(chat_template=chat_template, get_vocab=lambda: vocab)) is not None


def can_write_json(model_dir: Path) -> bool:
    from .constrained import json_probe_round_trips

    import llguidance

    text = (model_dir / "tokenizer.json").read_text(encoding="utf-8")
    return json_probe_round_trips(llguidance.LLTokenizer(text))


def features_from_files(model_dir: Path) -> Dict[str, bool]:
    """{tools, structuredOutput} for a model directory; False where unsure."""
    template = chat_template_of(model_dir)
    try:
        tools = template_takes_tools(template) and has_tool_parser(model_dir, template)
    except Exception as err:
        log.warning("could not tell whether %s takes tools: %s: %s", model_dir.name, type(err).__name__, err)
        tools = False
    try:
        structured = can_write_json(model_dir)
    except Exception as err:  # llguidance missing, or a tokenizer it cannot read
        log.info("no structured output for %s: %s: %s", model_dir.name, type(err).__name__, err)
        structured = False
    return {"tools": tools, "structuredOutput": structured}
