"""Drives exobar, attached to the fake exo, with the official Python clients (Anthropic, OpenAI, Ollama).

Usage: exo-sdk-clients.py BASE_URL MODEL MODE
MODE "stream": a streamed message, read whole.
MODE "cancel": a streamed message cancelled by POST /v1/cancel/{message id} after its
message_start; the stream must still end cleanly for the client.
MODE "responses": OpenAI's responses.create, streamed.
MODE "chat-tools": OpenAI's chat completions with a function tool, streamed; the fake exo answers a call.
MODE "ollama-chat": Ollama's chat, streamed.
Prints one JSON line ({"id", "text", "stop_reason", "cancel"?}); a failed check raises.
"""
import json
import sys
import urllib.error
import urllib.request

import anthropic
import ollama
import openai

base, model, mode = sys.argv[1], sys.argv[2], sys.argv[3]
claude = anthropic.Anthropic(base_url=base, api_key="unused", max_retries=0)
words = " ".join(f"w{i}" for i in range(200))

if mode == "stream":
    with claude.messages.stream(model=model, max_tokens=3, messages=[{"role": "user", "content": words}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.id.startswith("msg_") and text == "tok0 tok1 tok2 ", (final, text)
    assert final.stop_reason == "max_tokens" and final.usage.output_tokens == 3, final
    print(json.dumps({"id": final.id, "text": text, "stop_reason": final.stop_reason}), flush=True)
elif mode == "cancel":
    cancel = None
    # A prompt long enough for a prefill in chunks: the test holds it open until the cancel is answered.
    long_prompt = " ".join(f"w{i % 990}" for i in range(20_000))
    with claude.messages.stream(model=model, max_tokens=3, messages=[{"role": "user", "content": long_prompt}]) as stream:
        for event in stream:
            if event.type == "message_start":
                request = urllib.request.Request(f"{base}/v1/cancel/{event.message.id}", method="POST")
                try:
                    with urllib.request.urlopen(request) as answer:
                        cancel = json.load(answer)
                except urllib.error.HTTPError as error:
                    raise AssertionError(f"cancel of {event.message.id}: {error.code} {error.read()!r}") from error
        final = stream.get_final_message()
    assert cancel and cancel["cancelled"] is True, cancel
    assert final.stop_reason is None and final.content == [], final
    print(json.dumps({"id": final.id, "text": "", "stop_reason": None, "cancel": cancel}), flush=True)
elif mode == "responses":
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    text, final = "", None
    for event in client.responses.create(model=model, input=words, max_output_tokens=3, stream=True):
        if event.type == "response.output_text.delta":
            text += event.delta
        elif event.type == "response.completed":
            final = event.response
    assert final and final.id.startswith("resp_") and text == "tok0 tok1 tok2 " and final.output_text == text, (final, text)
    assert final.usage.output_tokens == 3, final
    print(json.dumps({"id": final.id, "text": text}), flush=True)
elif mode == "chat-tools":
    client = openai.OpenAI(base_url=f"{base}/v1", api_key="unused", max_retries=0)
    tool = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}
    calls, finish, chunk_id = [], None, None
    for chunk in client.chat.completions.create(model=model, messages=[{"role": "user", "content": words}], tools=[tool], max_tokens=4, stream=True):
        chunk_id = chunk.id
        for choice in chunk.choices:
            calls.extend(choice.delta.tool_calls or [])
            finish = choice.finish_reason or finish
    assert finish == "tool_calls" and len(calls) == 1, (finish, calls)
    assert calls[0].function.name == "get_weather" and json.loads(calls[0].function.arguments) == {"city": "Paris"}, calls
    print(json.dumps({"id": chunk_id, "text": calls[0].function.arguments}), flush=True)
elif mode == "ollama-chat":
    client = ollama.Client(host=base)
    parts, last = [], None
    for part in client.chat(model=model, messages=[{"role": "user", "content": words}], stream=True, options={"num_predict": 3}):
        parts.append(part.message.content)
        last = part
    text = "".join(parts)
    assert last and last.done and last.eval_count == 3 and text == "tok0 tok1 tok2 ", (last, text)
    print(json.dumps({"id": "", "text": text}), flush=True)
else:
    raise SystemExit(f"unknown mode {mode}")
