"""The optional parts of a generation request: tools, structured output, sampling.

Parsed here with the limits of shared/runner-protocol.ts (GenerationParams, ChatMessage),
so protocol.py keeps the core fields and a bad option is an InputError like any other:
- a message's `toolCalls` [{id, name, arguments (JSON text)}] (assistant) and
  `toolCallId` (role tool);
- `tools` [{name, description?, parameters? (JSON schema)}], `toolChoice` 'none' |
  'auto' | 'required' | {name}, `responseFormat` {type: 'json_object'} |
  {type: 'json_schema', name?, schema, strict?};
- `topP`, `topK`, `minP`, `repetitionPenalty`, `presencePenalty`, `frequencyPenalty`;
- `stop`: up to MAX_STOP_SEQUENCES non-empty strings (stop_sequences.py applies them).
A line that fails here is ignored, unacknowledged (docs/runner-protocol.md), so only
what no request can mean is refused here (a wrong type, a topP of 0): the zod schema
decides the rest first. What a request asks that the model cannot honour (tools without
a tool-call parser, a named function not among the tools, a schema keyword the grammar
library does not enforce) is the engine's RequestError, an ErrorChunk for that request.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple, Union

TOOL_CHOICES = ("none", "auto", "required")
#: shared/stop-sequences.ts's MAX_STOP_SEQUENCES (OpenAI's limit), checked at this boundary too.
MAX_STOP_SEQUENCES = 4
_MAX_NAME = 200


class OptionError(ValueError):
    """An option outside the protocol's limits (protocol.py turns it into an InputError)."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: Optional[str]
    parameters: Optional[Dict[str, Any]]


@dataclass(frozen=True)
class Sampling:
    """The sampling options beyond temperature and seed; None: mlx-lm's default (off)."""

    top_p: Optional[float] = None
    top_k: Optional[int] = None
    min_p: Optional[float] = None
    repetition_penalty: Optional[float] = None
    presence_penalty: Optional[float] = None
    frequency_penalty: Optional[float] = None


@dataclass(frozen=True)
class RequestOptions:
    tools: Tuple[Tool, ...] = ()
    #: 'none', 'auto', 'required' or the name of the one function to call.
    tool_choice: Optional[Union[str, Dict[str, str]]] = None
    #: {'type': 'json_object'} or {'type': 'json_schema', 'schema': {...}, ...}.
    response_format: Optional[Dict[str, Any]] = None
    sampling: Sampling = Sampling()
    #: Stop sequences: the answer ends before the first one met; () for none.
    stop: Tuple[str, ...] = ()

    @property
    def forced_tool(self) -> Optional[str]:
        """The function a named toolChoice forces, else None."""
        return self.tool_choice.get("name") if isinstance(self.tool_choice, dict) else None

    @property
    def uses_tools(self) -> bool:
        """Tools go to the chat template (and calls are parsed) unless the choice is 'none'."""
        return bool(self.tools) and self.tool_choice != "none"

    @property
    def must_call(self) -> bool:
        """'required' or a named function: the grammar forces a call."""
        return self.uses_tools and (self.tool_choice == "required" or self.forced_tool is not None)


NO_OPTIONS = RequestOptions()


def _number(raw: dict, key: str, low: float = -math.inf, high: float = math.inf, low_open: bool = False) -> Optional[float]:
    value = raw.get(key)
    if value is None:
        return None
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not (ok and (low < value if low_open else low <= value) and value <= high):
        raise OptionError(f"params.{key} must be a number {'above' if low_open else 'from'} {low}{'' if high == math.inf else f' to {high}'} or null")
    return float(value)


def _sampling(raw: dict) -> Sampling:
    top_k = raw.get("topK")
    if top_k is not None and not (isinstance(top_k, int) and not isinstance(top_k, bool) and top_k >= 0):
        raise OptionError("params.topK must be an integer of 0 or more, or null")
    return Sampling(
        top_p=_number(raw, "topP", 0.0, 1.0, low_open=True),
        top_k=top_k,
        min_p=_number(raw, "minP", 0.0, 1.0),
        repetition_penalty=_number(raw, "repetitionPenalty", 0.0, low_open=True),
        presence_penalty=_number(raw, "presencePenalty"),
        frequency_penalty=_number(raw, "frequencyPenalty"),
    )


def _name(value: Any, where: str) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= _MAX_NAME:
        raise OptionError(f"{where} must be a string of 1-{_MAX_NAME} characters")
    return value


def _tools(raw: Any) -> Tuple[Tool, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise OptionError("params.tools must be an array")
    tools = []
    for i, tool in enumerate(raw):
        if not isinstance(tool, dict):
            raise OptionError(f"params.tools[{i}] must be an object")
        description, parameters = tool.get("description"), tool.get("parameters")
        if description is not None and not isinstance(description, str):
            raise OptionError(f"params.tools[{i}].description must be a string")
        if parameters is not None and not isinstance(parameters, dict):
            raise OptionError(f"params.tools[{i}].parameters must be a JSON schema object")
        tools.append(Tool(_name(tool.get("name"), f"params.tools[{i}].name"), description, parameters))
    return tuple(tools)


def _tool_choice(raw: Any) -> Optional[Union[str, Dict[str, str]]]:
    if raw is None or raw in TOOL_CHOICES:
        return raw
    if isinstance(raw, dict) and "name" in raw:
        return {"name": _name(raw["name"], "params.toolChoice.name")}
    raise OptionError("params.toolChoice must be 'none', 'auto', 'required' or {name}")


def _response_format(raw: Any) -> Optional[Dict[str, Any]]:
    if raw is None:
        return None
    if not isinstance(raw, dict) or raw.get("type") not in ("json_object", "json_schema"):
        raise OptionError("params.responseFormat must be {type: 'json_object'} or {type: 'json_schema', schema}")
    if raw["type"] == "json_schema" and not isinstance(raw.get("schema"), dict):
        raise OptionError("params.responseFormat.schema must be a JSON schema object")
    return dict(raw)


def _stop(raw: Any) -> Tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or len(raw) > MAX_STOP_SEQUENCES or not all(isinstance(s, str) and s for s in raw):
        raise OptionError(f"params.stop must be an array of at most {MAX_STOP_SEQUENCES} non-empty strings")
    return tuple(raw)


def parse_options(raw: dict) -> RequestOptions:
    """The optional request parts of a params object; raises OptionError."""
    tools = _tools(raw.get("tools"))
    return RequestOptions(
        tools=tools,
        tool_choice=_tool_choice(raw.get("toolChoice")),
        response_format=_response_format(raw.get("responseFormat")),
        sampling=_sampling(raw),
        stop=_stop(raw.get("stop")),
    )


def parse_message_tool_fields(message: dict, where: str) -> Dict[str, Any]:
    """A message's toolCalls / toolCallId, checked; {} when it has neither."""
    extra: Dict[str, Any] = {}
    calls = message.get("toolCalls")
    if calls is not None:
        if not isinstance(calls, list):
            raise OptionError(f"{where}.toolCalls must be an array")
        clean: List[Dict[str, str]] = []
        for i, call in enumerate(calls):
            if not isinstance(call, dict) or not isinstance(call.get("arguments"), str):
                raise OptionError(f"{where}.toolCalls[{i}] must be {{id, name, arguments (JSON text)}}")
            clean.append({"id": _name(call.get("id"), f"{where}.toolCalls[{i}].id"),
                          "name": _name(call.get("name"), f"{where}.toolCalls[{i}].name"),
                          "arguments": call["arguments"]})
        extra["toolCalls"] = clean
    call_id = message.get("toolCallId")
    if call_id is not None:
        extra["toolCallId"] = _name(call_id, f"{where}.toolCallId")
    return extra
