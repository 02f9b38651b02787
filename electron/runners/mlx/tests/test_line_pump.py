import io
import threading
import unittest

from exobar_mlx.line_pump import MAX_QUEUED, LinePump


class SlowStream(io.StringIO):
    """A pipe whose reader lets each write through only when the test says so."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Semaphore(0)

    def write(self, text: str) -> int:
        self.gate.acquire()
        return super().write(text)


class BrokenStream(io.StringIO):
    def write(self, text: str) -> int:
        raise BrokenPipeError("the supervisor is gone")


class LinePumpTest(unittest.TestCase):
    def test_the_caller_never_waits_for_the_pipe_and_drain_waits_for_every_line_in_order(self):
        stream = SlowStream()
        pump = LinePump(stream)
        for n in range(3):
            pump.write(f"line {n}\n")  # returns although the pipe takes nothing yet
        self.assertEqual(stream.getvalue(), "")
        drained = threading.Thread(target=pump.drain)
        drained.start()
        for _ in range(3):
            stream.gate.release()
        drained.join(timeout=30)
        self.assertFalse(drained.is_alive())
        self.assertEqual(stream.getvalue(), "line 0\nline 1\nline 2\n")

    def test_a_writer_ahead_of_the_pipe_by_max_queued_lines_waits_for_it(self):
        stream = SlowStream()
        pump = LinePump(stream)
        writer = threading.Thread(target=lambda: [pump.write(f"{n}\n") for n in range(MAX_QUEUED + 2)])
        writer.start()
        writer.join(timeout=1)
        self.assertTrue(writer.is_alive())  # blocked: the pipe took nothing
        for _ in range(MAX_QUEUED + 2):
            stream.gate.release()
        writer.join(timeout=30)
        pump.drain()
        self.assertEqual(stream.getvalue(), "".join(f"{n}\n" for n in range(MAX_QUEUED + 2)))

    def test_a_broken_pipe_drops_the_rest_and_never_blocks_drain(self):
        pump = LinePump(BrokenStream())
        with self.assertLogs("exobar.mlx.protocol", level="ERROR"):
            pump.write("lost\n")
            pump.write("lost too\n")
            pump.drain()


if __name__ == "__main__":
    unittest.main()
