"""Lists or runs the runner's unit tests and writes one JSON line per case to a file.

vitest (python-unittest.test.ts) reports each Python case as its own test from these
lines, so a failure (with its traceback) or a skip (with its reason) is named in the
test output instead of hiding inside one case. Run from electron/runners/mlx:

    python3 tests/report_cases.py list OUT.jsonl   # {"id"} per case, discovery only
    python3 tests/report_cases.py run OUT.jsonl    # {"id", "outcome", "message", "seconds"} per case

The results go to a file, not stdout, because a test may print; each line is written
as its case ends, so a run that dies half-way still tells which cases ran. A failure in
a class or module fixture (setUpClass, setUpModule) has an id of unittest's own, like
"setUpClass (tests.test_x.Case)", that no listed case has.
"""

import json
import sys
import time
import unittest
from typing import IO, Dict, Iterator


def _cases(suite: unittest.TestSuite) -> Iterator[unittest.TestCase]:
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            yield from _cases(test)
        else:
            yield test


def _discover() -> unittest.TestSuite:
    return unittest.TestLoader().discover("tests", top_level_dir=".")


class _Recording(unittest.TextTestResult):
    """A text result that also writes each case's outcome as a JSON line to `out`."""

    def __init__(self, *args, out: IO[str], **kwargs):
        super().__init__(*args, **kwargs)
        self._out = out
        self._records: Dict[str, dict] = {}
        self._started: Dict[str, float] = {}

    def _record(self, test: unittest.TestCase, outcome: str, message: str = "") -> None:
        key = test.id()
        previous = self._records.get(key)
        if previous is not None and previous["outcome"] == "fail":
            # A failed subtest fails its case whatever follows; every failure's text is kept.
            if outcome == "fail":
                previous["message"] += "\n" + message
            return
        self._records[key] = {"id": key, "outcome": outcome, "message": message}
        if key not in self._started:
            # A class or module fixture's error: no startTest/stopTest comes for it.
            self._write(key, 0.0)

    def _write(self, key: str, seconds: float) -> None:
        record = self._records.pop(key, None)
        if record is None:
            return
        record["seconds"] = round(seconds, 3)
        self._out.write(json.dumps(record) + "\n")
        self._out.flush()

    def startTest(self, test):
        self._started[test.id()] = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        super().stopTest(test)
        self._write(test.id(), time.monotonic() - self._started[test.id()])

    def addSuccess(self, test):
        super().addSuccess(test)
        self._record(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._record(test, "fail", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._record(test, "fail", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._record(test, "skip", reason)

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._record(test, "pass", "expected failure")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._record(test, "fail", "unexpected success: the case is marked expectedFailure but passed")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self._record(test, "fail", f"{subtest.id()}:\n{self._exc_info_to_string(err, test)}")


def main(argv) -> int:
    if len(argv) != 3 or argv[1] not in ("list", "run"):
        sys.stderr.write(__doc__)
        return 2
    command, path = argv[1], argv[2]
    suite = _discover()
    with open(path, "w", encoding="utf-8") as out:
        if command == "list":
            for test in _cases(suite):
                out.write(json.dumps({"id": test.id()}) + "\n")
            return 0

        def make_result(*args, **kwargs):
            return _Recording(*args, out=out, **kwargs)

        result = unittest.TextTestRunner(stream=sys.stderr, verbosity=1, resultclass=make_result).run(suite)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
