"""Stop sequences on the real engine: a request's text ends at the first one it meets.

Matched on the detokenized text with mlx-lm's own TextStateMachine (the Aho-Corasick
text matcher mlx_lm.server strips its stop words with): text that might be the start of
a stop sequence is held back until the next token tells, the text before a match is
emitted, the match and anything after it never are. Each stop sequence leads to a state
of its own, so the state the machine ends in names the one met (the protocol's
`stopSequence`, Anthropic's `stop_sequence`).

Why text and not token ids (mlx-lm's StopSequences, which mlx_lm.server also runs on the
ids of each stop word encoded alone): a model rarely writes a stop word with the tokens
of the word encoded alone (after a space, merged with the next character, split
otherwise), so the id matcher misses what the text matcher finds; the text matcher finds
every match the id matcher would, one detokenizer step later at most.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

_NORMAL = "normal"


def _state_of(index: int) -> str:
    return f"stop:{index}"


class StopWatch:
    """One request's stop sequences over its streamed text (make one per request)."""

    def __init__(self, stops: Sequence[str]) -> None:
        from mlx_lm.generate import TextStateMachine

        # An empty string would match everywhere; the protocol refuses it, this guards.
        self._stops = [s for s in stops if s]
        transitions: dict = {_NORMAL: [(stop, _state_of(i)) for i, stop in enumerate(self._stops)]}
        for i in range(len(self._stops)):
            transitions[_state_of(i)] = []  # terminal: nothing after a match is looked at
        self._machine: Any = TextStateMachine
        self._state = TextStateMachine(transitions).make_state(_NORMAL)
        #: The stop sequence met, once one is; None until then.
        self.matched: Optional[str] = None

    def feed(self, text: str) -> str:
        """The next token's text; returns what may be emitted now. After a match (see
        `matched`) the request must end: nothing more is emitted."""
        if self.matched is not None:
            return ""
        self._state, segments = self._machine.split(self._state, text)
        visible = "".join(piece for state, piece in segments if state == _NORMAL)
        if self._state[0] != _NORMAL:
            self.matched = self._stops[int(self._state[0].split(":", 1)[1])]
        return visible

    def flush(self) -> str:
        """At a natural end (end of sequence, length): the held-back text, which turned
        out not to be a stop sequence."""
        if self.matched is not None:
            return ""
        self._state, held, _ = self._machine.flush(self._state)
        return held


def stop_watch(stops: Sequence[str]) -> Optional[StopWatch]:
    """A request's StopWatch, or None when it has no stop sequences."""
    return StopWatch(stops) if any(stops) else None
