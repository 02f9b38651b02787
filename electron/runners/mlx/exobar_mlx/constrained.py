"""Constrained decoding with llguidance: JSON schemas, json_object and forced tool calls.

Why llguidance (docs/structured-output.md): no torch, a 3 MB wheel, masks computed on
the CPU in microseconds and applied here with MLX ops (its own mlx helper is a Metal
kernel, which MLX's CPU backend lacks), and a schema keyword it cannot enforce is
refused by name instead of being ignored.

A request's grammar is Lark text (llguidance's format):
- responseFormat json_schema: the schema; json_object: any object;
- toolChoice 'required' / {name}: one call in the model's own markup, `<tool_call>` then
  `{"name": ..., "arguments": <the function's parameters schema>}` then `</tool_call>`
  (mlx-lm's json_tools format); the markers are their single tokens when the
  tokenizer has them, as the model itself would write them;
- tools 'auto' with a responseFormat: either a call or the JSON answer.
JSON is compact (no free whitespace): a random or weak model would otherwise fill it
with blanks. After the grammar ends only an end-of-sequence token is allowed.

GrammarProcessor is a logits processor in mlx-lm's (tokens, logits) form; it runs inside
BatchGenerator's step with the request's context, whose last token is the one sampled
at the previous step (the first call sees only the last prompt token).
"""
from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

from .request_options import RequestOptions

#: Only this tool-call markup can be forced: a JSON object between the parser's markers.
FORCEABLE_PARSERS = ("json_tools",)
#: JSON the tokenizer must write and read back unchanged for structured output.
_PROBE = '{"a": [1, -2.5e3, true, null], "b\\n": "x y"}'
_JSON_OPTIONS = {"whitespace_flexible": False}


def json_probe_round_trips(lltokenizer: Any) -> bool:
    """Whether a vocabulary can spell JSON: a word-level one cannot write '{'."""
    return lltokenizer.decode_str(lltokenizer.tokenize_str(_PROBE)) == _PROBE


class GrammarError(ValueError):
    """A request whose grammar cannot be built: the message names why (a schema keyword)."""


def _tool_call_schema(name: str, parameters: Optional[Dict[str, Any]]) -> Dict[str, Any]:
    return {
        "type": "object",
        "properties": {"name": {"const": name}, "arguments": parameters or {"type": "object"}},
        "required": ["name", "arguments"],
        "additionalProperties": False,
    }


def _json_rule(schema: Dict[str, Any]) -> str:
    return "%json " + json.dumps({**schema, "x-guidance": _JSON_OPTIONS})


def _response_schema(options: RequestOptions) -> Optional[Dict[str, Any]]:
    fmt = options.response_format
    if fmt is None:
        return None
    return fmt["schema"] if fmt["type"] == "json_schema" else {"type": "object"}


class GrammarBuilder:
    """Builds grammars and processors for one loaded model (its tokenizer, its vocabulary)."""

    def __init__(self, tokenizer: Any, vocab_size: int) -> None:
        import llguidance
        import llguidance.hf

        self._llg = llguidance
        self.tokenizer = tokenizer
        self.vocab_size = vocab_size
        self.eos = sorted(int(t) for t in (getattr(tokenizer, "eos_token_ids", None) or [tokenizer.eos_token_id]))
        self.lltokenizer = llguidance.hf.from_tokenizer(tokenizer._tokenizer, n_vocab=vocab_size, eos_token=self.eos)

    def can_write_json(self) -> bool:
        return json_probe_round_trips(self.lltokenizer)

    def _marker(self, text: str) -> str:
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        return f"<[{ids[0]}]>" if len(ids) == 1 else json.dumps(text)

    def _tool_rule(self, options: RequestOptions) -> str:
        tools = [t for t in options.tools if options.forced_tool in (None, t.name)]
        schemas = [_tool_call_schema(t.name, t.parameters) for t in tools]
        schema = schemas[0] if len(schemas) == 1 else {"anyOf": schemas}
        start, end = self._marker(self.tokenizer.tool_call_start), self._marker(self.tokenizer.tool_call_end)
        return f'tool_call: {start} "\\n" call "\\n" {end}\ncall: {_json_rule(schema)}\n'

    def grammar(self, options: RequestOptions) -> Optional[str]:
        """The request's Lark grammar text, or None when nothing constrains it."""
        schema = _response_schema(options)
        if options.must_call:
            text = "start: tool_call\n" + self._tool_rule(options)
        elif schema is not None and options.uses_tools:
            text = "start: tool_call | answer\n" + self._tool_rule(options) + f"answer: {_json_rule(schema)}\n"
        elif schema is not None:
            text = f"start: answer\nanswer: {_json_rule(schema)}\n"
        else:
            return None
        return text

    def processor(self, grammar: str) -> "GrammarProcessor":
        """The grammar compiled for this request (once: the first token's cost). Raises
        GrammarError naming what llguidance cannot enforce."""
        matcher = self._llg.LLMatcher(self.lltokenizer, self._llg.LLMatcher.grammar_from_lark(grammar))
        if matcher.is_error():
            # The first line names the keyword; the rest quotes the grammar text.
            raise GrammarError(re.sub(r"^at \d+\(\d+\): ", "", matcher.get_error().strip().splitlines()[0]))
        return GrammarProcessor(matcher, self.vocab_size, self.eos)


_LUT: Dict[str, Any] = {}


def _bit_table(mx: Any) -> Any:
    """256 x 8: byte value -> 0 or -inf per bit, to expand a packed bitmask with one gather."""
    if "table" not in _LUT:
        _LUT["table"] = mx.array([[0.0 if (b >> i) & 1 else -float("inf") for i in range(8)] for b in range(256)], dtype=mx.float32)
    return _LUT["table"]


class GrammarProcessor:
    """Masks every token the grammar forbids; consumes each sampled token."""

    def __init__(self, matcher: Any, vocab_size: int, eos: List[int]) -> None:
        import mlx.core as mx
        from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

        self._mx = mx
        self._fill = fill_next_token_bitmask
        self.matcher = matcher
        self._bitmask = allocate_token_bitmask(1, vocab_size)
        self._calls = 0
        self._eos = eos
        #: Set when the matcher refused a token (then the request ends with it).
        self.error: Optional[str] = None

    def __call__(self, tokens: Any, logits: Any) -> Any:
        mx = self._mx
        if self._calls > 0 and not self.matcher.is_stopped():
            if not self.matcher.consume_token(int(tokens[-1].item())):
                self.error = f"the grammar refused a token: {self.matcher.get_error()}"
        self._calls += 1
        if self.error is not None:
            return logits  # the request ends with the error at this step
        if self.matcher.is_stopped():
            # The grammar is complete: only the end of the sequence may follow.
            only_eos = mx.full(logits.shape, -float("inf"), dtype=logits.dtype)
            return mx.put_along_axis(only_eos, mx.array([self._eos]), logits[:, self._eos], axis=-1)
        self._fill(self.matcher, self._bitmask, 0)
        mask = _bit_table(mx)[mx.array(self._bitmask).view(mx.uint8)].reshape(1, -1)
        width = logits.shape[-1]
        if mask.shape[-1] < width:
            mask = mx.concatenate([mask, mx.full((1, width - mask.shape[-1]), -float("inf"))], axis=-1)
        return logits + mask[:, :width].astype(logits.dtype)

