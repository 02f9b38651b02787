"""Drives exobar, attached to the fake exo, with Anthropic's official Python client.

Usage: exo-sdk-clients.py BASE_URL MODEL MODE
MODE "stream": a streamed message, read whole.
MODE "cancel": a streamed message cancelled by POST /v1/cancel/{message id} after its
message_start; the stream must still end cleanly for the client.
Prints one JSON line ({"id", "text", "stop_reason", "cancel"?}); a failed check raises.
"""
import json
import sys
import urllib.error
import urllib.request

import anthropic

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
else:
    raise SystemExit(f"unknown mode {mode}")
