"""A stand-in for the slice of mlx / mlx-lm that the mlx engine calls.

It follows the documented behaviour of the real calls the engine relies on:
generate_step's prompt-progress callback ((0, n), after each chunk while more than
one token is left, then (n, n) once the first token is computed), the KV cache
holding prompt plus the generated token afterwards, BatchGenerator.insert returning
uids and next() returning responses with uid/token/finish_reason.
"""
from __future__ import annotations

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


class FakeModel:
    def __init__(self, layers: int) -> None:
        self.layers = [FakeLayer(i) for i in range(layers)]

    def parameters(self) -> Dict[str, str]:
        return {"model": "all"}


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

    def __init__(self, fresh_detokenizers: bool = True, as_dict: bool = False) -> None:
        self.has_chat_template = True
        self.fresh = fresh_detokenizers
        self.as_dict = as_dict
        self._shared = FakeDetokenizer()
        self.templated: List[List[dict]] = []

    def apply_chat_template(self, messages, add_generation_prompt=False):
        assert add_generation_prompt
        self.templated.append(messages)
        ids = [100 + i for i, _ in enumerate(" ".join(m["content"] for m in messages).split())]
        ids = [1] + ids + [3, 4]
        return {"input_ids": ids} if self.as_dict else ids

    @property
    def detokenizer(self) -> FakeDetokenizer:
        return FakeDetokenizer() if self.fresh else self._shared

    def decode(self, ids: List[int]) -> str:
        return "".join(f"<{t}>" for t in ids)


class FakeKV:
    def __init__(self) -> None:
        self.offset = 0


@dataclass
class Response:
    uid: int
    token: int
    logprobs: Any
    finish_reason: Optional[str]


class FakeBatchGenerator:
    instances: List["FakeBatchGenerator"] = []
    returns_tuple = False

    def __init__(self, model, *, max_tokens=128, completion_batch_size=32, prefill_batch_size=8, prefill_step_size=2048, stop_tokens=None, sampler=None):
        self.kwargs = dict(max_tokens=max_tokens, completion_batch_size=completion_batch_size,
                           prefill_batch_size=prefill_batch_size, prefill_step_size=prefill_step_size)
        self.inserted: List[dict] = []
        self.active: Dict[int, dict] = {}
        self.removed: List[int] = []
        self.closed = False
        self.script: Dict[int, List[int]] = {}
        self._uid = 0
        FakeBatchGenerator.instances.append(self)

    def insert(self, prompts, max_tokens=None, caches=None, samplers=None):
        uids = []
        for i, prompt in enumerate(prompts):
            uid = self._uid
            self._uid += 1
            entry = {"prompt": list(prompt), "max_tokens": (max_tokens or [self.kwargs["max_tokens"]])[i],
                     "cache": caches[i] if caches else None, "sampler": samplers[i] if samplers else None, "n": 0}
            self.inserted.append(entry)
            self.active[uid] = entry
            uids.append(uid)
        return uids

    def next(self):
        responses = []
        for uid, entry in list(self.active.items()):
            script = self.script.get(uid, [])
            token = script[entry["n"]] if entry["n"] < len(script) else 500 + entry["n"]
            entry["n"] += 1
            finish = "length" if entry["n"] >= entry["max_tokens"] else None
            if finish:
                del self.active[uid]
            responses.append(Response(uid, token, None, finish))
        return ([], responses) if self.returns_tuple else responses

    def remove(self, uids):
        for uid in uids:
            self.removed.append(uid)
            self.active.pop(uid, None)

    def close(self):
        self.closed = True


class OldBatchGenerator(FakeBatchGenerator):
    def insert(self, prompts, max_tokens=None):  # before prefilled caches were accepted
        return super().insert(prompts, max_tokens)


def make_api(layers: int = 3, tokenizer: Optional[FakeTokenizer] = None, batch_cls=FakeBatchGenerator) -> SimpleNamespace:
    calls: Dict[str, list] = {"eval": [], "seed": [], "stream": [], "clear_cache": 0, "load": []}
    tok = tokenizer or FakeTokenizer()

    def load(path, lazy=False):
        calls["load"].append((path, lazy))
        return FakeModel(layers), tok

    def stream_generate(model, tokenizer, prompt, max_tokens=256, sampler=None, prompt_cache=None,
                        prefill_step_size=2048, prompt_progress_callback=None):
        calls["stream"].append({"prompt": list(prompt), "max_tokens": max_tokens, "step": prefill_step_size})
        cb = prompt_progress_callback or (lambda *_: None)
        cache = prompt_cache or [FakeKV()]
        total = len(prompt)
        processed = 0
        cb(processed, total)
        while total - processed > 1:
            n = min(prefill_step_size, total - processed - 1)
            for c in cache:
                c.offset += n
            processed += n
            cb(processed, total)
        for n in range(max_tokens):
            for c in cache:
                c.offset += 1 if n else 2  # the last prompt token, then each generated one
            if n == 0:
                cb(total, total)
            yield SimpleNamespace(text="x", token=7)

    def trim(cache, n):
        for c in cache:
            c.offset -= n
        return n

    class Random:
        @staticmethod
        def seed(value):
            calls["seed"].append(value)

    def clear_cache():
        calls["clear_cache"] += 1

    mx = SimpleNamespace(
        eval=lambda *args: calls["eval"].append(args),
        array=lambda values: list(values),
        random=Random,
        get_peak_memory=lambda: 123456,
        clear_cache=clear_cache,
    )
    return SimpleNamespace(
        mx=mx,
        version="0.99-fake",
        load=load,
        BatchGenerator=batch_cls,
        stream_generate=stream_generate,
        make_prompt_cache=lambda model: [FakeKV() for _ in model.layers],
        can_trim_prompt_cache=lambda cache: True,
        trim_prompt_cache=trim,
        make_sampler=lambda temp=0.0: ("sampler", temp),
        calls=calls,
        tokenizer=tok,
    )


def make_model_dir(root: Path, layers: int = 3) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "config.json").write_text(json.dumps({"num_hidden_layers": layers}))
    (root / "model.safetensors").write_bytes(b"\0")
    return root
