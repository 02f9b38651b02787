"""Support for the tests that run the engine on real MLX with the tiny models.

They need mlx and mlx-lm in the interpreter that runs the tests (CI runs them with the
venv .ci/run makes; EXOBAR_MLX_PYTHON names it for the TypeScript side). Without it
they skip with one loud line, except under CI=true, where a missing MLX is a failure:
the real engine must be tested there.
"""
from __future__ import annotations

import os
import sys
import tempfile
import unittest
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from exobar_mlx.mlx_engine import MlxEngine
from exobar_mlx.protocol import GenerationParams

if TYPE_CHECKING:
    from .test_step_loop import Harness

#: Small chunks so every test prompt spans several of them (the arithmetic is the same).
CHUNK = 16
_announced = False


def _probe() -> Optional[str]:
    try:
        import mlx.core  # noqa: F401
        import mlx_lm  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as err:
        return str(err)
    return None


MISSING = _probe()


def require_real_mlx(case: unittest.TestCase) -> None:
    """Skips (or, under CI, fails) a test when real MLX is not importable here."""
    global _announced
    if MISSING is None:
        return
    message = f"real MLX is not importable by {sys.executable} ({MISSING}); set EXOBAR_MLX_PYTHON to a venv with requirements-cpu.txt"
    if os.environ.get("CI") == "true":
        case.fail(f"CI must run the real-MLX tests: {message}")
    if not _announced:
        sys.stderr.write(f"\n*** SKIPPING the real-MLX tests: {message}\n")
        _announced = True
    raise unittest.SkipTest(message)


def _tiny_models() -> Any:
    """tools/tiny_models.py, imported from its directory."""
    tools = Path(__file__).resolve().parent.parent / "tools"
    if str(tools) not in sys.path:
        sys.path.insert(0, str(tools))
    import tiny_models

    return tiny_models


def tiny_families() -> Tuple[str, ...]:
    """Every family tools/tiny_models.py builds."""
    return tuple(_tiny_models().FAMILIES)


def tiny_model(family: str) -> Path:
    """The tiny model of one family, made (or reused) by tools/tiny_models.py."""
    tiny_models = _tiny_models()

    out = Path(os.environ.get("EXOBAR_TINY_MODELS_DIR", tiny_models.DEFAULT_OUT))
    return tiny_models.build(family, out)


def words(n: int, offset: int = 0) -> str:
    """makePrompt's words: n of them make a chat of n + 7 tokens."""
    return " ".join(f"w{(offset + i) % 997}" for i in range(n))


def chat(n_words: int, offset: int = 0) -> List[Dict[str, str]]:
    return [{"role": "user", "content": words(n_words, offset)}]


def task(task_id: str, n_words: int, offset: int, max_tokens: int) -> Dict[str, Any]:
    """A protocol TextGeneration task for chat(n_words, offset), greedy, so its tokens can
    be compared with the same chat's anywhere else; its command is cmd-<task_id>."""
    return {"kind": "TextGeneration", "taskId": task_id, "commandId": f"cmd-{task_id}",
            "params": {"messages": chat(n_words, offset), "maxTokens": max_tokens, "temperature": 0.0}}


def token_ids(h: "Harness", command: str) -> List[int]:
    """The token ids one command generated, in order, from what the harness's loop wrote:
    the tokens a run is compared by. A cancel's closing chunk (token id -1, no token the
    model chose) is left out."""
    return [m["chunk"]["tokenId"] for m in h.capture.messages
            if m["type"] == "ChunkGenerated" and m["commandId"] == command
            and m["chunk"]["kind"] == "TokenChunk" and m["chunk"]["tokenId"] >= 0]


def load_engine(family: str, max_batch: int = 8, chunk: int = CHUNK) -> MlxEngine:
    engine = MlxEngine(str(tiny_model(family)), prefill_chunk=chunk, max_batch=max_batch, env={}, home=Path(tempfile.gettempdir()))
    engine.load(lambda *_: None)
    return engine


def params(messages, max_tokens: int, temperature: Optional[float] = 0.0, seed: Optional[int] = None) -> GenerationParams:
    return GenerationParams(messages, max_tokens, temperature, seed)


def drive(engine: MlxEngine, requests: List[Tuple[str, GenerationParams]], progress: Optional[Dict[str, list]] = None) -> Dict[str, Any]:
    """Prefills every request, then decodes them together until each ends; returns
    each request's token ids, or its error text."""
    out: Dict[str, Any] = {}
    for request_id, p in requests:
        prepared = engine.prepare(request_id, f"c-{request_id}", p, 64)
        seen = progress.setdefault(request_id, []) if progress is not None else []
        engine.prefill(prepared, lambda done, total, seen=seen: seen.append((done, total)))
        out[request_id] = []
    return decode_all(engine, out)


def decode_all(engine: MlxEngine, out: Dict[str, Any]) -> Dict[str, Any]:
    """Decodes the requests `out` names (each already prefilled and in the batch) until
    each ends, appending each one's token ids to its list (or setting its error text)."""
    pending = set(out)
    for _ in range(1000):
        if not pending:
            break
        for token in engine.decode_step():
            if token.error is not None:
                out[token.request_id] = token.error
                pending.discard(token.request_id)
                continue
            out[token.request_id].append(token.token_id)
            if token.finish_reason is not None:
                pending.discard(token.request_id)
    return out


def mlx_lm_greedy(family: str, messages, max_tokens: int, chunk: int = CHUNK) -> Tuple[List[int], List[Any]]:
    """mlx-lm's own greedy generation (stream_generate, what mlx_lm.generate runs) for
    the same chat, with the same prefill step: its tokens and logprobs."""
    from mlx_lm import load, stream_generate
    from mlx_lm.sample_utils import make_sampler

    model, tokenizer = load(str(tiny_model(family)))
    ids = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    tokens, logprobs = [], []
    for response in stream_generate(
        model, tokenizer, ids, max_tokens=max_tokens, sampler=make_sampler(temp=0.0), prefill_step_size=chunk
    ):
        tokens.append(int(response.token))
        logprobs.append(response.logprobs)
    return tokens, logprobs
