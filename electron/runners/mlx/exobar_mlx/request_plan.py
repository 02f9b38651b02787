"""What a real-model request needs beyond its prompt: tools, grammar, sampling.

The mlx engine asks this module, per loaded model, what the model can do (the Hello's
and RunnerLoaded's `features`) and, per request, for a RequestPlan: the chat template's
tools, the grammar (constrained.py) and the sampling filters and penalties
(sampling.py), or a RequestError naming the model or the schema feature it cannot
honour. A plan's `start` gives the per-request objects the decoder uses: the sampler's
filters, mlx-lm logits processors, the stop sequences' watch (stop_sequences.py) and
the tool-call stream (tools.py).
"""
from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from .constrained import FORCEABLE_PARSERS, GrammarBuilder, GrammarError
from .engine import RequestError
from .request_options import RequestOptions
from .stop_sequences import StopWatch, stop_watch
from .tools import ToolCallStream, parser_name, template_tools, tool_support_problem

log = logging.getLogger("exobar.mlx.plan")


def model_vocab_size(model: Any, tokenizer: Any) -> int:
    """Rows of the model's output layer (at least the tokenizer's size)."""
    args = getattr(model, "args", None)
    size = getattr(args, "vocab_size", None)
    if size is None and isinstance(getattr(args, "text_config", None), dict):
        size = args.text_config.get("vocab_size")
    if size is None:
        size = getattr(tokenizer, "vocab_size", None) or len(tokenizer)
    return int(size)


class ModelCapabilities:
    """What one loaded model can do: tools, and structured output through llguidance."""

    def __init__(self, model: Any, tokenizer: Any, name: str) -> None:
        self.name = name
        self.tokenizer = tokenizer
        self.tools_problem = tool_support_problem(tokenizer, name)
        try:
            self.vocab_size: Optional[int] = model_vocab_size(model, tokenizer)
        except Exception:
            self.vocab_size = None
        self.grammar: Any = None
        self.structured_problem: Optional[str] = None
        try:
            builder = GrammarBuilder(tokenizer, model_vocab_size(model, tokenizer))
            if builder.can_write_json():
                self.grammar = builder
            else:
                self.structured_problem = f"model {name} cannot do structured output: its tokenizer cannot write JSON"
        except ImportError as err:
            self.structured_problem = f"structured output needs llguidance, which is not installed ({err}); Set up MLX runtime installs it"
        except Exception as err:  # a tokenizer llguidance cannot read
            self.structured_problem = f"model {name} cannot do structured output: llguidance cannot read its tokenizer ({type(err).__name__}: {err})"
        if self.structured_problem:
            log.info("%s", self.structured_problem)

    def features(self) -> Dict[str, bool]:
        return {"tools": self.tools_problem is None, "structuredOutput": self.grammar is not None}

    def plan(self, options: RequestOptions, prompt_tail: List[int]) -> "RequestPlan":
        """Checks a request's options against the model. Raises RequestError."""
        forced = options.forced_tool
        if forced is not None and forced not in {t.name for t in options.tools}:
            raise RequestError(f"toolChoice names the function {forced!r}, which is not among the request's tools")
        if options.uses_tools and self.tools_problem:
            raise RequestError(self.tools_problem)
        needs_grammar = options.must_call or options.response_format is not None
        if needs_grammar and self.grammar is None:
            raise RequestError(self.structured_problem or f"model {self.name} cannot do structured output")
        if options.must_call and parser_name(self.tokenizer) not in FORCEABLE_PARSERS:
            raise RequestError(
                f"model {self.name} writes tool calls in mlx-lm's {parser_name(self.tokenizer)} format; "
                f"toolChoice 'required' or a named function can be forced only in the json_tools format"
            )
        processor = None
        if needs_grammar:
            try:
                processor = self.grammar.processor(self.grammar.grammar(options))
            except GrammarError as err:
                what = "the tools' parameters" if options.must_call else "responseFormat's schema"
                raise RequestError(f"{what}: a JSON schema feature the runner cannot enforce ({err})") from None
        return RequestPlan(
            options=options,
            template_tools=template_tools(options) if options.uses_tools else None,
            grammar=processor,
            prompt_tail=prompt_tail,
            capabilities=self,
        )


@dataclass
class RequestPlan:
    options: RequestOptions
    #: The tools as the chat template takes them, or None (no tools, or toolChoice none).
    template_tools: Optional[List[Dict[str, Any]]]
    #: The compiled grammar constraining the output (constrained.GrammarProcessor), or None.
    grammar: Any
    #: The prompt's last tokens before its final one, for mlx-lm's penalties where the
    #: decoder's context lacks them (the sequential decoder; empty for the batch).
    prompt_tail: List[int] = field(default_factory=list)
    capabilities: Optional[ModelCapabilities] = None

    def start(self) -> "PlanState":
        """The per-request decoding objects (call when the request joins the decoder)."""
        from .sampling import penalty_processors, sampling_filters, with_prompt_tail

        sampling = self.options.sampling
        processors = [with_prompt_tail(p, self.prompt_tail) for p in penalty_processors(sampling)]
        if self.grammar is not None:
            processors.append(self.grammar)
        stream = None
        if self.template_tools is not None:
            assert self.capabilities is not None
            stream = ToolCallStream(self.capabilities.tokenizer, self.template_tools)
        vocab_size = (self.capabilities.vocab_size if self.capabilities else None) or sys.maxsize
        return PlanState(sampling_filters(sampling, vocab_size), processors, self.grammar, stream, stop_watch(self.options.stop))


@dataclass
class PlanState:
    filters: List[Any]
    processors: List[Any]
    grammar: Any
    tool_stream: Optional[ToolCallStream]
    #: The request's stop sequences over its text, or None when it has none.
    stop_watch: Optional[StopWatch] = None

    @property
    def error(self) -> Optional[str]:
        return getattr(self.grammar, "error", None)
