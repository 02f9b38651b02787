"""Tools on a real model: its chat template renders them, mlx-lm's parser reads the calls.

- Whether a model can take tools: its chat template uses the `tools` variable, and
  mlx-lm's tokenizer wrapper declares a tool-call parser (has_tool_calling: a parser
  named in tokenizer_config.json or inferred by mlx-lm from the template's markers).
- The protocol's messages become the template's: an assistant's `toolCalls` are
  `tool_calls` [{id, type: function, function: {name, arguments (an object, as HF
  templates expect)}}], a `tool` message carries its `tool_call_id`, and the protocol's
  tools are `{type: function, function: {name, description, parameters}}`.
- The output is split as mlx_lm.server splits it, with mlx-lm's TextStateMachine on
  the decoded text: text between the parser's start and end markers is a call (parsed
  by the parser when the end marker arrives) and never reaches the TokenChunk text.
"""
from __future__ import annotations

import json
import uuid
from typing import Any, Dict, List, Optional, Tuple

from .request_options import RequestOptions


def template_takes_tools(chat_template: Any) -> bool:
    """Whether a chat template (a string, or HF's list of named templates) uses `tools`."""
    if not chat_template:
        return False
    from jinja2 import Environment, meta

    templates = [chat_template] if isinstance(chat_template, str) else [
        t.get("template") for t in chat_template or [] if isinstance(t, dict)
    ]
    env = Environment()
    for text in templates:
        if isinstance(text, str):
            try:
                if "tools" in meta.find_undeclared_variables(env.parse(text)):
                    return True
            except Exception:
                continue
    return False


def tool_support_problem(tokenizer: Any, model: str) -> Optional[str]:
    """Why this model cannot take tools, in words naming it, or None when it can."""
    if not template_takes_tools(getattr(tokenizer, "chat_template", None)):
        return f"model {model} does not support tools: its chat template takes no tools"
    if not getattr(tokenizer, "has_tool_calling", False):
        return f"model {model} does not support tools: mlx-lm finds no tool-call parser for its tokenizer"
    return None


def parser_name(tokenizer: Any) -> Optional[str]:
    """The mlx-lm tool parser module's name (json_tools, qwen3_coder, ...)."""
    parser = getattr(tokenizer, "tool_parser", None)
    if parser is None:
        return None
    return getattr(parser, "__module__", "").rsplit(".", 1)[-1] or None


def template_tools(options: RequestOptions) -> List[Dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {
                "name": t.name,
                **({"description": t.description} if t.description is not None else {}),
                "parameters": t.parameters if t.parameters is not None else {"type": "object", "properties": {}},
            },
        }
        for t in options.tools
    ]


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text  # the template shows it as it came


def template_messages(messages: List[Dict[str, Any]]) -> List[Dict[str, Any]]:
    """The protocol's messages as a chat template expects them."""
    chat = []
    for m in messages:
        # Most chat templates know no "developer" role; it means system.
        message: Dict[str, Any] = {"role": "system" if m["role"] == "developer" else m["role"], "content": m["content"]}
        if m.get("toolCalls"):
            message["tool_calls"] = [
                {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": _arguments(c["arguments"])}}
                for c in m["toolCalls"]
            ]
        if m.get("toolCallId"):
            message["tool_call_id"] = m["toolCallId"]
        chat.append(message)
    return chat


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"


def protocol_calls(parsed: Any) -> List[Dict[str, str]]:
    """A parser's result (one call or a list) as the protocol's [{id, name, arguments (JSON text)}]."""
    calls = parsed if isinstance(parsed, list) else [parsed]
    out = []
    for call in calls:
        if not isinstance(call, dict) or not isinstance(call.get("name"), str):
            raise ValueError(f"not a tool call: {call!r}")
        arguments = call.get("arguments", {})
        text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
        out.append({"id": call.get("id") or new_call_id(), "name": call["name"], "arguments": text})
    return out


class ToolCallStream:
    """Splits a request's decoded text into visible text and complete tool calls."""

    def __init__(self, tokenizer: Any, tools: List[Dict[str, Any]]) -> None:
        from mlx_lm.generate import TextStateMachine

        self._machine = TextStateMachine
        transitions = {"normal": [(tokenizer.tool_call_start, "tool")]}
        transitions["tool"] = [(tokenizer.tool_call_end, "normal")] if tokenizer.tool_call_end else []
        self._state = TextStateMachine(transitions).make_state("normal")
        self._parse = tokenizer.tool_parser
        self._tools = tools
        self._call_text = ""
        self.calls_made = 0
        #: The last call text that did not parse (a truncated call), for the log.
        self.unparsed: Optional[str] = None

    def feed(self, text: str) -> Tuple[str, List[Dict[str, str]]]:
        """New decoded text -> (text to show, calls completed by it)."""
        self._state, segments = self._machine.split(self._state, text)
        visible, calls = "", []
        for state, piece in segments:
            if state == "tool":
                self._call_text += piece
            else:
                visible += piece
            if state != "tool" and self._call_text:
                calls.extend(self._complete())
        if self._state[0] == "normal" and self._call_text:
            calls.extend(self._complete())
        return visible, calls

    def _complete(self) -> List[Dict[str, str]]:
        text, self._call_text = self._call_text, ""
        try:
            calls = protocol_calls(self._parse(text, self._tools))
        except (ValueError, TypeError) as err:
            self.unparsed = f"{type(err).__name__}: {err}: {text[:200]!r}"
            return []
        self.calls_made += len(calls)
        return calls

    def finish(self, stopped: bool) -> Tuple[str, List[Dict[str, str]]]:
        """At the request's end: held-back text (kept on 'length', dropped on 'stop', as
        mlx_lm.server does) and a call whose end marker never came, if it parses."""
        if stopped:
            self._state, _ = self._machine.discard(self._state)
            held = ""
        else:
            self._state, held, _ = self._machine.flush(self._state)
        visible = ""
        if self._state[0] == "tool":
            self._call_text += held
        else:
            visible = held
        calls = self._complete() if self._call_text else []
        return visible, calls
