"""The tokenizer and chat template of the tiny tool-calling family (tiny_models.py).

The other families' word-level tokenizer cannot write `{` or `"`, so neither a grammar
nor a tool call can be expressed in it. This family's tokenizer is byte-level BPE, the
kind most real chat models use (Qwen, Llama 3): every byte has a token, so a grammar can
write any JSON, while each prompt word `wN` is still one token (`wN` first, `ĠwN` after a
space), so token counts follow shared/token-count.ts as for the other families.

Its ids 0..len(base)-1 are the other families' vocabulary in the same order (the same
specials and words at the same ids); the byte alphabet, the space-prefixed words and the
tool-call markers follow. The chat template is Qwen's shape: it takes `tools`, renders
an assistant's `tool_calls` and `tool` results, and names `<tool_call>` and
`tool_call.name`, which is how mlx-lm infers its `json_tools` parser
(tokenizer_utils._infer_tool_parser).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Tuple

TOOL_FAMILIES = ("qwen3",)
TOOL_MARKERS = ["<tool_call>", "</tool_call>"]

CHAT_TEMPLATE = (
    "{%- if tools %}<|start|>system<|sep|>"
    "{%- if messages[0]['role'] == 'system' %}{{ messages[0]['content'] }}\n\n{% endif %}"
    "# Tools\n\nYou may call one or more functions. Function signatures within <tools></tools>:\n<tools>"
    "{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}\n</tools>\n\n"
    "For each function call, return a json object with function name and arguments within "
    "<tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>"
    "<|end|>"
    "{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m['role'] == 'system' and tools and loop.first %}"
    "{%- elif m['role'] == 'assistant' and m.tool_calls %}<|start|>assistant<|sep|>{{ m['content'] }}"
    "{%- for tool_call in m.tool_calls %}{%- if tool_call.function is defined %}{% set tool_call = tool_call.function %}{% endif %}"
    "<tool_call>\n{\"name\": \"{{ tool_call.name }}\", \"arguments\": {{ tool_call.arguments | tojson }}}\n</tool_call>"
    "{%- endfor %}<|end|>"
    "{%- elif m['role'] == 'tool' %}<|start|>user<|sep|><tool_response>\n{{ m['content'] }}\n</tool_response><|end|>"
    "{%- else %}<|start|>{{ m['role'] }}<|sep|>{{ m['content'] }}<|end|>"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|start|>assistant<|sep|>{% endif %}"
)


def _bytes_to_unicode() -> Dict[int, str]:
    """GPT-2's byte-to-character map, the alphabet of byte-level BPE."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, (chr(c) for c in chars)))


def _merges_for(tokens: List[str]) -> List[Tuple[str, str]]:
    """Left-to-right merges that build each token from its characters. 'Ġ'+'w' ranks
    first, so ' w12' becomes 'Ġw' -> 'Ġw1' -> 'Ġw12' and never strands a bare 'w1'."""
    merges: List[Tuple[str, str]] = []
    seen = set()
    for token in sorted(tokens, key=lambda t: (not t.startswith("Ġw"), len(t))):
        for i in range(2, len(token) + 1):
            pair = (token[: i - 1], token[i - 1])
            if pair not in seen:
                seen.add(pair)
                merges.append(pair)
    merges.sort(key=lambda pair: (pair != ("Ġ", "w"), len(pair[0]) + len(pair[1])))
    return merges


def write_tokenizer(directory: Path, base: List[str]) -> int:
    """Writes tokenizer.json and tokenizer_config.json; returns the vocabulary size."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    specials = [t for t in base if t.startswith("<|") or t == "[UNK]"]
    words = [t for t in base if t not in specials]
    vocab: Dict[str, int] = {token: i for i, token in enumerate(base)}
    for char in _bytes_to_unicode().values():
        vocab.setdefault(char, len(vocab))
    for word in words:
        vocab.setdefault("Ġ" + word, len(vocab))
    merges = _merges_for([t for t in vocab if len(t) > 1 and t not in specials])
    for left, right in merges:  # every step of a merge chain is a token ('Ġw' among them)
        vocab.setdefault(left + right, len(vocab))
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([AddedToken(t, special=True) for t in specials])
    # Not special: the markers are text the model writes and the parser reads.
    tokenizer.add_tokens([AddedToken(t, special=False) for t in TOOL_MARKERS])
    tokenizer.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "unk_token": None,
                "bos_token": "<|bos|>",
                "eos_token": "<|end|>",
                "pad_token": "[UNK]",
                "chat_template": CHAT_TEMPLATE,
                "model_max_length": 1_000_000,
                "clean_up_tokenization_spaces": False,
            },
            indent=1,
        )
    )
    return tokenizer.get_vocab_size(with_added_tokens=True)
