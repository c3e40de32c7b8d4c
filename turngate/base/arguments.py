"""Command-line values checked as they are parsed: one line naming the option and value, exit 2.

argparse prints its usage block before an error; ``OneLineParser`` prints only
the error, so every bad input of every subcommand reads the same way.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a command stopped by Ctrl-C


class OneLineParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line: ``turngate run: --jobs: 0: must be at least 1``."""

    def error(self, message: str) -> NoReturn:
        sys.stderr.write(f"{self.prog}: {message}\n")
        raise SystemExit(EXIT_USAGE)


def at_least_one(text: str) -> int:
    """A count that must be >= 1 (``--jobs``, ``--slots``)."""
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be at least 1")
    return value


def port(text: str) -> int:
    """A TCP port, 0 (any free port) to 65535."""
    value = _integer(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text}: a port is 0 (any free port) to 65535")
    return value


def positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"{text}: must be more than 0 seconds")
    return value


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a whole number") from None


class UsageProblem(Exception):
    """Bad input from the user: one line, exit code 2, no traceback."""
