"""Stdin, read by a thread into an inbox the step loop looks at only when it chooses.

exo's runner reads new tasks only between generation steps and checks cancellations
at prefill-chunk boundaries and every ~100 decode steps. A blocking read of stdin
cannot be polled that way in Python, so a daemon thread parses lines as they come
and parks them here; the step loop decides when to look. Tasks and cancels are kept
apart because they are consumed at different points of a step.
"""
from __future__ import annotations

import logging
import threading
from collections import deque
from typing import IO, Callable, Deque, List, Optional, Set

from .protocol import Cancel, InputError, RunnerInput, SetPacing, Task, parse_input_line

log = logging.getLogger("exobar.mlx.inbox")


class Inbox:
    def __init__(self) -> None:
        self._tasks: Deque[RunnerInput] = deque()
        self._cancels: Deque[Cancel] = deque()
        self._pacings: Deque[SetPacing] = deque()
        self._closed = False
        self._cond = threading.Condition()

    # -- producer side (reader thread) --
    def put(self, item: RunnerInput) -> None:
        with self._cond:
            if isinstance(item, Cancel):
                self._cancels.append(item)
            elif isinstance(item, SetPacing):
                self._pacings.append(item)
            else:
                self._tasks.append(item)
            self._cond.notify_all()

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # -- consumer side (step loop) --
    @property
    def closed(self) -> bool:
        """True once stdin reached EOF (the supervisor is gone or closed the pipe)."""
        with self._cond:
            return self._closed

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Blocks until a task, cancel or pacing is queued or stdin closes; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: self._tasks or self._cancels or self._pacings or self._closed, timeout)

    def peek_task(self) -> Optional[RunnerInput]:
        with self._cond:
            return self._tasks[0] if self._tasks else None

    def pop_task(self) -> Optional[RunnerInput]:
        with self._cond:
            return self._tasks.popleft() if self._tasks else None

    def take_shutdown(self) -> Optional[RunnerInput]:
        """Removes and returns a queued Shutdown, wherever it is in the queue."""
        with self._cond:
            for item in self._tasks:
                if isinstance(item, Task) and item.kind == "Shutdown":
                    self._tasks.remove(item)
                    return item
            return None

    def take_cancels_for(self, task_ids: Set[str]) -> List[Cancel]:
        """Removes and returns the cancels aimed at `task_ids`; the others stay queued."""
        with self._cond:
            taken = [c for c in self._cancels if c.cancelled_task_id in task_ids]
            for cancel in taken:
                self._cancels.remove(cancel)
            return taken

    def drain_pacings(self) -> List[SetPacing]:
        """Every SetPrefillPacing that has arrived, in order."""
        with self._cond:
            pacings = list(self._pacings)
            self._pacings.clear()
            return pacings

    def drain_cancels(self) -> List[Cancel]:
        with self._cond:
            cancels = list(self._cancels)
            self._cancels.clear()
            return cancels


def start_reader(stream: IO[bytes], inbox: Inbox, on_bad_line: Callable[[str, str], None]) -> threading.Thread:
    """Starts the daemon thread that feeds `inbox` from `stream` until EOF."""

    def run() -> None:
        try:
            for raw in stream:
                line = raw.decode("utf-8", errors="replace").strip()
                if not line:
                    continue
                try:
                    inbox.put(parse_input_line(line))
                except InputError as err:
                    on_bad_line(line, str(err))
        except Exception:  # a broken pipe must still close the inbox, never hang the loop
            log.exception("stdin reader failed")
        finally:
            inbox.close()

    thread = threading.Thread(target=run, name="stdin-reader", daemon=True)
    thread.start()
    return thread
