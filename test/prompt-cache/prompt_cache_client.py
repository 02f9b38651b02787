"""The prompt cache as a Python user meets it: the official `openai` client against
`exobar serve`. Prints one JSON object with what each scenario saw; the vitest file
(openai-python-prompt-cache.test.ts) asserts on it.

usage: python3 prompt_cache_client.py BASE_URL SCENARIO MODEL [LONG_PROMPT_WORDS]
       python3 prompt_cache_client.py BASE_URL one MODEL [SALT]
(LONG_PROMPT_WORDS: the cancelled prompt's length, default 8000; a real model on a CPU
prefills far slower than the sim, so its test sends a shorter one. `one` asks one
100-word prompt, salted.)
"""
import json
import sys
import urllib.request

from openai import OpenAI


def words(n, salt):
    """n distinct words every tokenizer exobar tests with knows (w0...w989), salted first."""
    return " ".join([salt] + [f"w{i % 990}" for i in range(n - 1)])


def cached(usage):
    details = usage.prompt_tokens_details
    return details.cached_tokens if details is not None else None


def four_turns(client, model):
    messages = [{"role": "system", "content": words(30, "w7")}]
    seen = []
    for turn in range(4):
        messages.append({"role": "user", "content": words(10 + turn, f"w{100 + turn}")})
        answer = client.chat.completions.create(model=model, messages=messages, max_tokens=6, temperature=0)
        seen.append({"prompt": answer.usage.prompt_tokens, "cached": cached(answer.usage)})
        messages.append({"role": "assistant", "content": answer.choices[0].message.content})
    # The same again, streamed: usage arrives in the stream's last chunk.
    messages.append({"role": "user", "content": words(8, "w200")})
    usage = None
    for chunk in client.chat.completions.create(
        model=model, messages=messages, max_tokens=6, temperature=0, stream=True, stream_options={"include_usage": True}
    ):
        usage = chunk.usage or usage
    seen.append({"prompt": usage.prompt_tokens, "cached": cached(usage)})
    return {"turns": seen}


def ask_once(client, model, salt):
    """One 100-word prompt (salted), two tokens: its cached_tokens."""
    answer = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": words(100, salt)}], max_tokens=2, temperature=0
    )
    return cached(answer.usage)


def lru(client, model):
    def ask(salt):
        return ask_once(client, model, salt)

    # The cap holds two of these prompts: A, B, A again (A is now the most recent), C
    # (evicts B, the least recently used), then B misses and C still hits.
    return {"a": ask("w301"), "b": ask("w302"), "a_again": ask("w301"), "c": ask("w303"), "b_again": ask("w302"), "c_again": ask("w303")}


def cancelled_prefill(client, base_url, model, long_words):
    long_prompt = words(long_words, "w401")
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": long_prompt}], max_tokens=4, stream=True,
        stream_options={"include_usage": True},
    )
    finish = None
    usage = None
    sent = False
    for chunk in stream:
        if not sent:
            # The first chunk names the completion at once, before the prefill: cancel it now.
            sent = True
            cancel = urllib.request.Request(f"{base_url}/cancel/{chunk.id}", data=b"", method="POST")
            with urllib.request.urlopen(cancel, timeout=30) as answer:
                assert answer.status == 200, answer.status
        if chunk.choices and chunk.choices[0].finish_reason:
            finish = chunk.choices[0].finish_reason
        usage = chunk.usage or usage
    # The same prompt again: the cancelled prefill left nothing to serve it. Once this one
    # prefilled whole, a third is served from the cache (the prompt fits the cap).
    again = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": long_prompt}], max_tokens=4, temperature=0
    )
    third = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": long_prompt}], max_tokens=4, temperature=0
    )
    return {
        "finish": finish,
        "cancelledCompletionTokens": usage.completion_tokens if usage else None,
        "againCached": cached(again.usage),
        "thirdCached": cached(third.usage),
        "prompt": again.usage.prompt_tokens,
        # Greedy: the whole prefill's answer and the cache hit's must be the same text.
        "againText": again.choices[0].message.content,
        "thirdText": third.choices[0].message.content,
    }


def main():
    base_url, scenario, model = sys.argv[1], sys.argv[2], sys.argv[3]
    client = OpenAI(base_url=base_url, api_key="unused", timeout=300, max_retries=0)
    if scenario == "four_turns":
        result = four_turns(client, model)
    elif scenario == "lru":
        result = lru(client, model)
    elif scenario == "cancelled_prefill":
        result = cancelled_prefill(client, base_url, model, int(sys.argv[4]) if len(sys.argv) > 4 else 8000)
    elif scenario == "one":
        result = {"cached": ask_once(client, model, sys.argv[4] if len(sys.argv) > 4 else "w309")}
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
