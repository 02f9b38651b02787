"""Shared helpers for the runner's unit tests (standard library only)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

RUNNER_DIR = Path(__file__).resolve().parent.parent
RUNNER = RUNNER_DIR / "runner.py"


class CapturingWriter:
    """A ProtocolWriter stream that keeps every message."""

    def __init__(self) -> None:
        self.lines: List[str] = []

    def write(self, text: str) -> None:
        self.lines.extend(line for line in text.splitlines() if line)

    def flush(self) -> None:
        pass

    @property
    def messages(self) -> List[Dict[str, Any]]:
        return [json.loads(line) for line in self.lines]


def describe(message: Dict[str, Any]) -> str:
    """A compact label for an output message, for order assertions."""
    kind = message["type"]
    if kind == "TaskAcknowledged":
        return f"ack:{message['taskId']}"
    if kind == "TaskStatusUpdated":
        return f"task:{message['taskId']}:{message['status']}"
    if kind == "RunnerStatusUpdated":
        return f"runner:{message['status']['kind']}"
    if kind == "ChunkGenerated":
        chunk = message["chunk"]
        if chunk["kind"] == "PrefillProgressChunk":
            return f"prefill:{message['commandId']}:{chunk['processedTokens']}/{chunk['totalTokens']}"
        if chunk["kind"] == "ErrorChunk":
            return f"error:{message['commandId']}"
        if chunk["kind"] == "ToolCallChunk":
            return f"toolcalls:{message['commandId']}"
        return f"token:{message['commandId']}:{chunk['finishReason']}"
    return kind


def generation(task_id: str, words: int = 5, max_tokens: Optional[int] = 3, content: Optional[str] = None) -> Dict[str, Any]:
    return {
        "kind": "TextGeneration",
        "taskId": task_id,
        "commandId": f"cmd-{task_id}",
        "params": {
            "messages": [{"role": "user", "content": content if content is not None else " ".join(["w"] * words)}],
            "maxTokens": max_tokens,
        },
    }


class RunnerProcess:
    """The runner as a real child process, its stdout parsed line by line."""

    def __init__(self, *args: str, env: Optional[Dict[str, str]] = None) -> None:
        full_env = {k: v for k, v in os.environ.items() if k not in ("MLX_METAL_FAST_SYNCH", "EXO_FAST_SYNCH")}
        full_env.update(env or {})
        self.proc = subprocess.Popen(
            [sys.executable, str(RUNNER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            start_new_session=True,
        )
        self.messages: List[Dict[str, Any]] = []
        self.stderr = b""
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            message = json.loads(raw)
            with self._cond:
                self.messages.append(message)
                self._cond.notify_all()

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, message: Dict[str, Any]) -> None:
        self.send_line(json.dumps(message))

    def send_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()

    def close_stdin(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def wait_for(self, predicate: Callable[[Dict[str, Any]], bool], timeout: float = 20.0) -> Dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"timed out; got {[describe(m) for m in self.messages]}")
                self._cond.wait(left)

    def wait_exit(self, timeout: float = 20.0) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(5)
        self._err_reader.join(5)
        return code

    def kill(self) -> None:
        """Ends the process group if still alive and closes the pipes."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
            self.proc.wait(5)
        self._reader.join(5)
        self._err_reader.join(5)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass

    def labels(self) -> List[str]:
        with self._cond:
            return [describe(m) for m in self.messages]
