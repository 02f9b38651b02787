"""Sleeps for simulated work without drifting.

At small time scales a decode step lasts a fraction of a millisecond, below what a
sleep can resolve. Like the sim's pacer, this keeps a target time and sleeps only
when it is ahead, so many tiny durations add up to the right total.
"""
from __future__ import annotations

import time
from typing import Callable

#: Lag beyond which the pacer stops catching up (the process was starved, not idle).
MAX_CATCH_UP_S = 0.015


class Pacer:
    def __init__(self, clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        self._clock = clock
        self._sleep = sleep
        self._target = clock()

    def resync(self) -> None:
        """Forget the past: idle time is not credit for later work."""
        self._target = self._clock()

    def wait(self, seconds: float) -> None:
        now = self._clock()
        if now - self._target > MAX_CATCH_UP_S:
            self._target = now
        self._target += max(0.0, seconds)
        ahead = self._target - self._clock()
        if ahead > 0.0005:
            self._sleep(ahead)
