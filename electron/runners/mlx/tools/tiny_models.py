"""Tiny random-weight models in mlx-lm's own format, one per cache family, made offline.

Each model is a directory that `mlx_lm.load` accepts: config.json, model.safetensors,
tokenizer.json and tokenizer_config.json (with a chat template). Nothing is downloaded:
the weights come from the model class's own initialisation under a fixed seed, the
tokenizer is built with the `tokenizers` package.

The families are the cache classes the runner must handle:
- ``llama``: plain KVCache.
- ``llama-wide``: the same, wider and deeper, so a decode step takes milliseconds on a
  CPU (the GPU sharing check's measured model, B).
- ``gemma3``: Gemma 3 text with a sliding window of WINDOW tokens (RotatingKVCache on
  the sliding layers), shorter than the test prompts.
- ``lfm2``: LFM2, a hybrid of short convolutions (ArraysCache) and attention.
- ``llama4``: Llama 4 text with chunked attention (ChunkedKVCache, which has no merge).
- ``mamba2``: a pure state-space model (ArraysCache only), linear in the prompt: the
  conformance suite's long prompts run on it.
- ``qwen3``: Qwen 3 (plain KVCache) with the shape of a tool-calling model: a byte-level
  BPE tokenizer (any text, JSON included, encodes; a grammar can write any byte) and a
  Qwen-style chat template that takes ``tools`` and marks calls with ``<tool_call>``, from
  which mlx-lm infers its ``json_tools`` parser (tool_models.py).

The tokenizer counts tokens the way shared/token-count.ts does (one per whitespace
separated word, 4 template tokens per message, 3 for the generation prompt), so a
prompt from `makePrompt(n)` is exactly n tokens here too. Its vocabulary is "w0" to
"w996" (makePrompt's words), the roles and a few specials; any other word is [UNK].

Random weights give nearly flat logits; the output layer is scaled up (OUTPUT_SCALE)
so each greedy choice wins by a wide margin, and the end-of-turn token's output row is
zeroed so a generation runs to its max_tokens. Everything is float32.

Usage: python tiny_models.py [--out DIR] [--family NAME ...]; prints the directories.
The default DIR is <repo>/.exobar-data/tiny-mlx-models (ignored by git). A model whose
directory holds a complete .done marker for the current RECIPE is reused.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Dict, List, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
import tool_models  # noqa: E402  (the tool-capable family's tokenizer, beside this file)

REPO_ROOT = Path(__file__).resolve().parents[4]
DEFAULT_OUT = REPO_ROOT / ".exobar-data" / "tiny-mlx-models"
#: Bumped when a model's recipe changes, so cached models are rebuilt.
RECIPE = 6
#: Families whose recipe changed on its own since RECIPE: their marker holds "RECIPE.n",
#: so the other families' cached models (and outputs) stay as they are.
FAMILY_RECIPE: Dict[str, str] = {"qwen3": f"{RECIPE}.1"}
#: The sliding window of the gemma3 model and the attention chunk of llama4, in tokens.
WINDOW = 32
SEED = 1234
OUTPUT_SCALE = 8.0
BLOCK_SCALE = 64.0
PROMPT_WORDS = 997
SPECIALS = ["[UNK]", "<|start|>", "<|sep|>", "<|end|>", "<|bos|>"]
ROLES = ["system", "user", "assistant", "developer", "tool"]
CHAT_TEMPLATE = (
    "{% for m in messages %}<|start|> {{ m['role'] }} <|sep|> {{ m['content'] }} <|end|> {% endfor %}"
    "{% if add_generation_prompt %}<|start|> assistant <|sep|>{% endif %}"
)

_COMMON = {"hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4, "num_key_value_heads": 2}

FAMILIES: Dict[str, dict] = {
    "llama": {
        "model_type": "llama",
        **_COMMON,
        "intermediate_size": 128,
        "rms_norm_eps": 1e-5,
        "head_dim": 16,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "max_position_embeddings": 65536,
    },
    # Still random and tiny on disk (~30 MB), but wide enough that one decode step takes
    # milliseconds on a CPU core: its inter-token gaps measure compute, not how often the
    # node reads the pipe, so a neighbour's prefill shows in them (the sharing check's B).
    "llama-wide": {
        "model_type": "llama",
        "hidden_size": 256,
        "num_hidden_layers": 8,
        "num_attention_heads": 8,
        "num_key_value_heads": 4,
        "intermediate_size": 768,
        "rms_norm_eps": 1e-5,
        "head_dim": 32,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "max_position_embeddings": 65536,
    },
    "gemma3": {
        "model_type": "gemma3_text",
        **_COMMON,
        "intermediate_size": 128,
        "head_dim": 16,
        "query_pre_attn_scalar": 16,
        "rms_norm_eps": 1e-6,
        "sliding_window": WINDOW,
        "sliding_window_pattern": 2,
        "max_position_embeddings": 65536,
    },
    "lfm2": {
        "model_type": "lfm2",
        **_COMMON,
        "max_position_embeddings": 65536,
        "norm_eps": 1e-5,
        "conv_bias": False,
        "conv_L_cache": 3,
        "block_dim": 64,
        "block_ff_dim": 128,
        "block_multiple_of": 16,
        "block_ffn_dim_multiplier": 1.0,
        "block_auto_adjust_ff_dim": False,
        "full_attn_idxs": [1, 3],
        "tie_word_embeddings": True,
    },
    # A pure state-space model (ArraysCache only): prefill cost grows linearly with the
    # prompt, so the conformance suite's 14k-token prompts take seconds on a CPU.
    "mamba2": {
        "model_type": "mamba2",
        "num_heads": 8,
        "head_dim": 16,
        "hidden_size": 64,
        "intermediate_size": 128,
        "state_size": 16,
        "num_hidden_layers": 4,
        "layer_norm_epsilon": 1e-5,
        "conv_kernel": 4,
        "n_groups": 1,
        "use_bias": False,
        "use_conv_bias": True,
        "tie_word_embeddings": False,
        "time_step_limit": [0.0, 1000.0],
        "time_step_rank": 8,
        "max_position_embeddings": 65536,
    },
    "qwen3": {
        "model_type": "qwen3",
        **_COMMON,
        "intermediate_size": 128,
        "rms_norm_eps": 1e-6,
        "head_dim": 16,
        "rope_theta": 10000.0,
        "tie_word_embeddings": False,
        "max_position_embeddings": 65536,
    },
    "llama4": {
        "model_type": "llama4",
        "text_config": {
            "model_type": "llama4_text",
            "attention_bias": False,
            "attention_chunk_size": WINDOW,
            "head_dim": 16,
            **_COMMON,
            "interleave_moe_layer_step": 2,
            "intermediate_size": 64,
            "intermediate_size_mlp": 128,
            "max_position_embeddings": 65536,
            "num_experts_per_tok": 1,
            "num_local_experts": 2,
            "rms_norm_eps": 1e-5,
            "rope_scaling": None,
            "rope_theta": 500000.0,
            "use_qk_norm": True,
        },
    },
}


def vocabulary() -> List[str]:
    return SPECIALS + ROLES + [f"w{i}" for i in range(PROMPT_WORDS)]


def _write_tokenizer(directory: Path, family: str) -> int:
    if family in tool_models.TOOL_FAMILIES:
        return tool_models.write_tokenizer(directory, vocabulary())
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    vocab = {word: i for i, word in enumerate(vocabulary())}
    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tokenizer.decoder = decoders.WordPiece(prefix="##", cleanup=False)  # joins words with spaces
    tokenizer.add_special_tokens(SPECIALS)
    tokenizer.save(str(directory / "tokenizer.json"))
    (directory / "tokenizer_config.json").write_text(
        json.dumps(
            {
                "tokenizer_class": "PreTrainedTokenizerFast",
                "unk_token": "[UNK]",
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
    return len(vocab)


def _output_weight_key(weights: Dict[str, object]) -> str:
    candidates = [k for k in weights if k.endswith("lm_head.weight")]
    if not candidates:
        candidates = [k for k in weights if k.endswith("embed_tokens.weight")]
    assert len(candidates) == 1, f"no single output layer among {sorted(weights)[:8]}..."
    return candidates[0]


def build(family: str, out: Path = DEFAULT_OUT) -> Path:
    """Makes (or reuses) the tiny model of one family; returns its directory."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.utils import _get_classes

    directory = out / family
    marker = directory / ".done"
    recipe = FAMILY_RECIPE.get(family, str(RECIPE))
    if marker.exists() and marker.read_text().strip() == recipe:
        return directory
    directory.mkdir(parents=True, exist_ok=True)
    vocab_size = _write_tokenizer(directory, family)
    config = json.loads(json.dumps(FAMILIES[family]))
    target = config.get("text_config", config)
    target["vocab_size"] = vocab_size
    config["eos_token_id"] = vocabulary().index("<|end|>")
    config["bos_token_id"] = vocabulary().index("<|bos|>")
    config["torch_dtype"] = "float32"

    mx.random.seed(SEED)
    model_class, args_class = _get_classes(config)
    model = model_class(args_class.from_dict(config))
    weights = dict(tree_flatten(model.parameters()))
    key = _output_weight_key(weights)
    embed_key = next(k for k in weights if k.endswith(("embed_tokens.weight", "embeddings.weight")))
    if key == embed_key:
        # Tied output: logits are the embeddings' similarity to the hidden state, which
        # favours repeating the input token; louder blocks make the context decide.
        for name in list(weights):
            if name.endswith(("out_proj.weight", "o_proj.weight", "w2.weight", "down_proj.weight")):
                weights[name] = weights[name] * BLOCK_SCALE
        output = weights[key] * OUTPUT_SCALE
    else:
        # Untied: row f(t) of the output layer is token t's embedding, so the next
        # token is a function of the current one, shifted by the context.
        permutation = mx.array([(7 * i + 3) % vocab_size for i in range(vocab_size)])
        output = weights[embed_key][permutation] * OUTPUT_SCALE
    output[config["eos_token_id"]] = 0.0  # never chosen: generations run to max_tokens
    weights[key] = output
    weights = {k: v.astype(mx.float32) for k, v in weights.items()}
    mx.save_safetensors(str(directory / "model.safetensors"), weights, metadata={"format": "mlx"})
    (directory / "config.json").write_text(json.dumps(config, indent=1))
    marker.write_text(recipe)
    return directory


def build_all(out: Path = DEFAULT_OUT, families: Optional[List[str]] = None) -> Dict[str, Path]:
    return {family: build(family, out) for family in (families or list(FAMILIES))}


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("EXOBAR_TINY_MODELS_DIR", DEFAULT_OUT)))
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES))
    args = parser.parse_args(argv)
    for family, path in build_all(args.out, args.family).items():
        print(f"{family}\t{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
