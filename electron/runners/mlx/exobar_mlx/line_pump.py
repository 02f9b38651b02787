"""The protocol stream, written by a thread of its own so the step loop never does.

A write to the stdout pipe wakes the supervisor that reads it, and on a loaded machine
the thread that wrote often lost its CPU to that wakeup right there: the loop's next
decode step waited behind other processes. Measured on the 2-core CI machine (tiny
llama-wide, CPU, three runners decoding at once after a 1,500-token prompt): the runner
writing its own lines decoded 10.0 tokens/s, the same runner with this pump 17.8, and
mlx_lm.server, whose HTTP handler thread writes while its generation thread computes,
10.7 (docs/mlx-runner.md, "Where decode time goes").

Lines keep their order (one queue, one writer). At most MAX_QUEUED lines wait: a loop
faster than the pipe (the test engine's steps take a few ms and give eight tokens each,
and the writer needs the interpreter lock the loop holds) blocks on a full queue rather
than running ahead of what the supervisor has seen, so an acknowledgement never trails
the loop by more than a step. A decode step of a real model gives fewer lines
than that and never waits. `drain` waits until every line queued
so far is written: the runner calls it before it exits, crashes or hangs on purpose, so
nothing it sent is lost. A write that fails (the supervisor is gone) is logged once and
the rest is dropped; stdin closing then ends the runner as usual.
"""
from __future__ import annotations

import logging
import queue
import threading
from typing import IO, Optional

log = logging.getLogger("exobar.mlx.protocol")

#: Lines the loop may be ahead of the pipe: one step of a full batch of eight.
MAX_QUEUED = 8


class LinePump:
    """A write-only text stream (write, flush) whose lines a daemon thread writes to `stream`."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream
        self._lines: "queue.Queue[str]" = queue.Queue(maxsize=MAX_QUEUED)
        self._failed: Optional[BaseException] = None
        threading.Thread(target=self._run, name="protocol-writer", daemon=True).start()

    def write(self, text: str) -> int:
        self._lines.put(text)
        return len(text)

    def flush(self) -> None:
        """Nothing to do here: the pump flushes each line it writes."""

    def drain(self) -> None:
        """Returns once every line queued before the call is written (or dropped after a failure)."""
        self._lines.join()

    def _run(self) -> None:
        while True:
            text = self._lines.get()
            try:
                if self._failed is None:
                    self._stream.write(text)
                    self._stream.flush()
            except Exception as err:  # the reader is gone: drop the rest, never block drain()
                self._failed = err
                log.error("the protocol stream failed, further lines are dropped: %s", err)
            finally:
                self._lines.task_done()
