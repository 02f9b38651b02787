"""A stand-in for the slice of mlx / mlx-lm that the mlx engine calls, for fast tests.

It keeps the rules of the real classes the engine depends on (mlx-lm 0.32):
- the model is called as model(tokens[None], cache=caches) and each layer's cache
  advances by the tokens it saw; a RotatingKVCache stops being trimmable once its
  offset reaches the window; a ChunkedKVCache has no `merge`;
- BatchGenerator.insert takes prompts, max_tokens, caches and samplers and returns
  uids; next() returns (prompt responses, generation responses); it merges the
  inserted caches on the next() after insert, raising like _merge_caches when a
  cache class has no merge, computes the first token there and returns it on the
  following next(); every step calls each request's sampler.
Real MLX runs the same engine in test_real_mlx_*.py wherever it is installed.
"""
from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Dict, List, Optional


class FakeLayer:
    def __init__(self, index: int) -> None:
        self.index = index

    def parameters(self) -> Dict[str, int]:
        return {"layer": self.index}


class KVCache:
    """KVCache: grows without bound, merges into a batch."""

    def __init__(self) -> None:
        self.offset = 0

    @property
    def state(self):
        return ("kv", self.offset)

    def update(self, n: int) -> None:
        self.offset += n

    @classmethod
    def merge(cls, caches):
        return ("merged", [c.offset for c in caches])


class RotatingKVCache(KVCache):
    """RotatingKVCache: keeps `window` tokens; not trimmable once it has wrapped."""

    def __init__(self, window: int) -> None:
        super().__init__()
        self.window = window

    def is_trimmable(self) -> bool:
        return self.offset < self.window


class ChunkedKVCache:
    """ChunkedKVCache (Llama 4): no merge, so it cannot join a batch."""

    def __init__(self) -> None:
        self.offset = 0

    @property
    def state(self):
        return ("chunked", self.offset)

    def update(self, n: int) -> None:
        self.offset += n


class FakeModel:
    def __init__(self, layers: int, cache_kinds: Optional[List[str]] = None) -> None:
        self.layers = [FakeLayer(i) for i in range(layers)]
        self.cache_kinds = cache_kinds or ["kv"] * layers
        self.calls: List[List[int]] = []
        self.fail_on: Optional[int] = None

    def parameters(self) -> Dict[str, str]:
        return {"model": "all"}

    def make_cache(self) -> List[Any]:
        make = {"kv": KVCache, "rotating": lambda: RotatingKVCache(8), "chunked": ChunkedKVCache}
        return [make[kind]() for kind in self.cache_kinds]

    def __call__(self, tokens, cache=None):
        row = list(tokens.values[0])
        if self.fail_on is not None and self.fail_on in row:
            raise RuntimeError("[metal::malloc] Attempting to allocate 99999999999 bytes")
        self.calls.append(row)
        for c in cache or []:
            c.update(len(row))
        return FakeArray([[0.0]])


class FakeArray:
    def __init__(self, values) -> None:
        self.values = values

    def __mul__(self, scale):
        return FakeArray(self.values)

    def __getitem__(self, index):
        if index is None:
            return FakeArray([self.values])
        return FakeArray(self.values[index])


class FakeDetokenizer:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.text, self.offset, self.tokens = "", 0, []

    def add_token(self, token: int) -> None:
        self.tokens.append(token)
        self.text += f"<{token}>"

    def finalize(self) -> None:
        pass

    @property
    def last_segment(self) -> str:
        segment = self.text[self.offset:]
        self.offset = len(self.text)
        return segment


class FakeTokenizer:
    eos_token_ids = {2}

    def __init__(self, as_dict: bool = False) -> None:
        self.has_chat_template = True
        self.as_dict = as_dict
        self.templated: List[List[dict]] = []

    def apply_chat_template(self, messages, add_generation_prompt=False):
        assert add_generation_prompt
        self.templated.append(messages)
        ids = [100 + i for i, _ in enumerate(" ".join(m["content"] for m in messages).split())]
        ids = [1] + ids + [3, 4]
        return {"input_ids": ids} if self.as_dict else ids

    @property
    def detokenizer(self) -> FakeDetokenizer:
        return FakeDetokenizer()  # a fresh one per access, as mlx-lm's TokenizerWrapper


@dataclass
class Response:
    uid: int
    token: int
    logprobs: Any
    finish_reason: Optional[str]


class FakeBatchGenerator:
    instances: List["FakeBatchGenerator"] = []

    def __init__(self, model, *, max_tokens=128, completion_batch_size=32, prefill_batch_size=8, prefill_step_size=2048, stop_tokens=None, sampler=None):
        self.kwargs = dict(max_tokens=max_tokens, completion_batch_size=completion_batch_size,
                           prefill_batch_size=prefill_batch_size, prefill_step_size=prefill_step_size)
        self.inserted: List[dict] = []
        self.pending: Dict[int, dict] = {}
        self.active: Dict[int, dict] = {}
        self.removed: List[int] = []
        self.closed = False
        self.script: Dict[int, List[int]] = {}
        self.fail_next: Optional[Exception] = None
        self._uid = 0
        FakeBatchGenerator.instances.append(self)

    def insert(self, prompts, max_tokens=None, caches=None, samplers=None, all_tokens=None):
        uids = []
        for i, prompt in enumerate(prompts):
            uid = self._uid
            self._uid += 1
            entry = {"prompt": list(prompt), "max_tokens": (max_tokens or [self.kwargs["max_tokens"]])[i],
                     "cache": caches[i] if caches else None, "sampler": samplers[i] if samplers else None, "n": 0}
            self.inserted.append(entry)
            self.pending[uid] = entry
            uids.append(uid)
        return uids

    def next(self):
        if self.fail_next is not None:
            err, self.fail_next = self.fail_next, None
            raise err
        responses = []
        for uid, entry in list(self.active.items()):
            if entry["sampler"] is not None:
                entry["sampler"](FakeArray([[0.0]]))
            script = self.script.get(uid, [])
            token = script[entry["n"]] if entry["n"] < len(script) else 500 + entry["n"]
            entry["n"] += 1
            finish = "length" if entry["n"] >= entry["max_tokens"] else None
            if finish:
                del self.active[uid]
            responses.append(Response(uid, token, None, finish))
        for uid, entry in list(self.pending.items()):
            for c in entry["cache"] or []:
                if not hasattr(type(c), "merge"):
                    raise ValueError(f"{type(c)} does not yet support batching with history")
            del self.pending[uid]
            self.active[uid] = entry  # its first token comes with the next call
        return [], responses

    def remove(self, uids):
        for uid in uids:
            self.removed.append(uid)
            self.active.pop(uid, None)
            self.pending.pop(uid, None)

    def close(self):
        self.closed = True


class FakeRandom:
    seeds: List[int] = []

    @staticmethod
    def key(seed):
        FakeRandom.seeds.append(seed)
        return ("key", seed)

    @staticmethod
    def split(key):
        return [("key", key), ("sub", key)]

    @staticmethod
    def categorical(logits, key=None):
        return ("categorical", key)


def make_api(layers: int = 3, tokenizer: Optional[FakeTokenizer] = None, cache_kinds: Optional[List[str]] = None) -> SimpleNamespace:
    calls: Dict[str, Any] = {"eval": [], "clear_cache": 0, "load": [], "wired": []}
    tok = tokenizer or FakeTokenizer()
    model = FakeModel(layers, cache_kinds)

    def load(path, lazy=False):
        calls["load"].append((path, lazy))
        return model, tok

    def clear_cache():
        calls["clear_cache"] += 1

    mx = SimpleNamespace(
        eval=lambda *args: calls["eval"].append(args),
        array=lambda values: FakeArray(list(values)),
        stream=lambda _stream: contextlib.nullcontext(),
        random=FakeRandom,
        argmax=lambda logprobs, axis=-1: ("argmax", logprobs),
        get_peak_memory=lambda: 123456,
        clear_cache=clear_cache,
        metal=SimpleNamespace(is_available=lambda: False),
        set_wired_limit=lambda n: calls["wired"].append(n),
    )
    return SimpleNamespace(
        mx=mx,
        version="0.32.2-fake",
        load=load,
        BatchGenerator=FakeBatchGenerator,
        generation_stream="generation",
        make_prompt_cache=lambda m: m.make_cache(),
        calls=calls,
        tokenizer=tok,
        model=model,
    )


def make_model_dir(root: Path, layers: int = 3) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"num_hidden_layers": layers}))
    (root / "model.safetensors").write_bytes(b"\0")
    return root
