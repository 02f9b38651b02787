"""Prompt-token counting for the test engine, the rule of shared/token-count.ts.

One token per whitespace-separated word, plus 4 template tokens per message and 3
for the generation prompt, so a test can build a prompt of an exact size and get the
same count from the sim and from this runner.
"""
from __future__ import annotations

import re
from typing import Iterable, List, Mapping

TEMPLATE_TOKENS_PER_MESSAGE = 4
GENERATION_PROMPT_TOKENS = 3


# JavaScript's \s, spelled out: Python's own whitespace set differs at the edges
# (it includes \x1c-\x1f and excludes U+FEFF), and the counts must match exactly.
_JS_WORD = re.compile(
    "[^\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]+"
)


def count_words(text: str) -> int:
    """Words as countWords in shared/token-count.ts counts them (text.match(/\\S+/g))."""
    return len(_JS_WORD.findall(text))


def count_prompt_tokens(messages: Iterable[Mapping[str, str]]) -> int:
    return len(prompt_tokens(messages))


def prompt_tokens(messages: Iterable[Mapping[str, str]]) -> List[str]:
    """The prompt as the test engine's tokens under the same rule: each message's
    template tokens (its role) and words, then the generation prompt's. Equal lists
    mean equal prompts, so the test engine's prompt cache can match prefixes."""
    tokens: List[str] = []
    for message in messages:
        tokens.extend([f"<{message['role']}>"] * TEMPLATE_TOKENS_PER_MESSAGE)
        tokens.extend(_JS_WORD.findall(message["content"]))
    tokens.extend(["<generate>"] * GENERATION_PROMPT_TOKENS)
    return tokens
