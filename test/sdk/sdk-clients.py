"""Drives `exobar serve` with the official Python clients, one dialect each.

Usage: sdk-clients.py BASE_URL MODEL [sim|mlx]
With `mlx` the model is a real MLX one with random weights: it calls a tool only when
the request forces it (tool_choice, written by constrained decoding), and its JSON is
valid only because the grammar makes it so; sampling is greedy so a run repeats.
Prints one JSON line per call ({"api", "id"?}); any failed check raises (non-zero exit).
"""
import json
import sys

import anthropic
import ollama
import openai
from pydantic import BaseModel, Field

base, model = sys.argv[1], sys.argv[2]
real = len(sys.argv) > 3 and sys.argv[3] == "mlx"
#: The sim calls the tool on its own (a scripted call); random weights only when forced.
#: (This anthropic release takes `temperature` only as an extra body field.)
claude_choice = {"type": "tool", "name": "get_weather"} if real else {"type": "auto"}
greedy = {"extra_body": {"temperature": 0}} if real else {}


def said(api, **fields):
    print(json.dumps({"api": api, **fields}), flush=True)


# --- Anthropic Messages: a streamed message, then a tool-use round trip.
claude = anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0)
with claude.messages.stream(model=model, max_tokens=8, messages=[{"role": "user", "content": "hello"}]) as stream:
    text = "".join(stream.text_stream)
    final = stream.get_final_message()
assert text and final.stop_reason == "max_tokens" and final.usage.output_tokens == 8, final
# The runner's prompt cache says what it served (a number, 0 on a miss); nothing is cache creation.
assert final.usage.cache_read_input_tokens is not None and final.usage.cache_creation_input_tokens == 0, final.usage
said("anthropic-messages", id=final.id, text=text)

weather = {
    "name": "get_weather",
    "description": "The weather in a city",
    "input_schema": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}}, "required": ["city"], "additionalProperties": False},
}
first = claude.messages.create(model=model, max_tokens=64, tools=[weather], tool_choice=claude_choice, **greedy, messages=[{"role": "user", "content": "weather in Paris?"}])
assert first.stop_reason == "tool_use", first
use = next(b for b in first.content if b.type == "tool_use")
assert use.name == "get_weather" and isinstance(use.input.get("city"), str), use
said("anthropic-messages", id=first.id, tool=use.name)
second = claude.messages.create(
    model=model,
    max_tokens=6,
    tools=[weather],
    **greedy,
    messages=[
        {"role": "user", "content": "weather in Paris?"},
        {"role": "assistant", "content": first.content},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "sunny"}]},
    ],
)
assert second.stop_reason == "max_tokens" and second.content[0].type == "text" and second.content[0].text, second
said("anthropic-messages", id=second.id, answered=True)

# --- OpenAI: Responses streamed with a function tool; chat completions with tools; parse with pydantic.
client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
fn = {
    "type": "function",
    "name": "get_weather",
    "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}}, "required": ["city"], "additionalProperties": False},
}
events = list(client.responses.create(model=model, input="weather in Paris?", tools=[fn], tool_choice="required", stream=True))
kinds = [e.type for e in events]
assert kinds[0] == "response.created" and kinds[-1] == "response.completed", kinds
done = events[-1].response
call = next(o for o in done.output if o.type == "function_call")
assert call.name == "get_weather" and "city" in json.loads(call.arguments), call
said("openai-responses", id=done.id, tool=call.name)

texts = list(client.responses.create(model=model, input="hello", max_output_tokens=5, stream=True))
assert any(e.type == "response.output_text.delta" for e in texts), [e.type for e in texts]
said("openai-responses", id=texts[-1].response.id)

chat = client.chat.completions.create(
    model=model,
    messages=[{"role": "user", "content": "weather in Paris?"}],
    tools=[{"type": "function", "function": {k: fn[k] for k in ("name", "description", "parameters")}}],
    tool_choice="required",
)
assert chat.choices[0].finish_reason == "tool_calls" and chat.choices[0].message.tool_calls[0].function.name == "get_weather", chat
said("openai-chat", id=chat.id, tool="get_weather")


class City(BaseModel):
    # Bounded, so random weights (which never close a string on their own) end within max_tokens.
    name: str = Field(max_length=12)
    population: int = Field(ge=0, le=99_999_999)
    coastal: bool


parsed = client.beta.chat.completions.parse(model=model, max_tokens=96, messages=[{"role": "user", "content": "a city"}], response_format=City, **greedy)
city = parsed.choices[0].message.parsed
assert isinstance(city, City), parsed
said("openai-chat", id=parsed.id, parsed=city.model_dump())

legacy = client.completions.create(model=model, prompt="once upon a time", max_tokens=4)
assert legacy.choices[0].finish_reason == "length" and legacy.choices[0].text, legacy
said("openai-completions", id=legacy.id)

# --- Ollama: chat streamed, list, ps.
local = ollama.Client(host=base)
parts = list(local.chat(model=model, messages=[{"role": "user", "content": "hello"}], stream=True, options={"num_predict": 6, "top_k": 40, "repeat_penalty": 1.1}))
assert parts[-1].done and parts[-1].eval_count == 6 and "".join(p.message.content for p in parts), parts[-1]
said("ollama-chat", chunks=len(parts))
listed = local.list()
assert any(m.model == model for m in listed.models), listed
running = local.ps()
assert any(m.model == model for m in running.models), running
said("ollama", listed=len(listed.models), running=len(running.models))
