"""``python -m turngate``: the ``turngate`` command under the name people type.

The code lives in the ``harness`` package; this name only forwards to it, so
the command, ``python -m turngate`` and the distribution share one name
without renaming every module.
"""

from harness import __version__

__all__ = ["__version__"]
