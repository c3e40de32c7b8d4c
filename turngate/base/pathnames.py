"""Relative paths from outside turngate (zip entries, a manifest's schema paths): whether this system can
hold them, asked before the file system is, so that a bad name is a named refusal, never a fault."""

from __future__ import annotations

import os
from typing import Final

MAX_NAME_BYTES: Final = 255  # one path component, as ext4, XFS, APFS and NTFS hold it
MAX_PATH_BYTES: Final = 1024  # a whole relative path inside a package or a job's folder


def path_problem(relative: str) -> str | None:
    """Why ``relative`` cannot be a file's path on this system (None: it can), before the file system
    is asked: a NUL, text that is not UTF-8 (a lone surrogate), a name or a path too long (ENAMETOOLONG
    would otherwise surface as a server fault)."""
    if "\x00" in relative:
        return "holds a NUL character"
    try:
        encoded = relative.encode("utf-8")
    except UnicodeEncodeError:
        return "is not UTF-8 text"
    if len(encoded) > MAX_PATH_BYTES:
        return f"longer than {MAX_PATH_BYTES} bytes"
    if any(len(part) > MAX_NAME_BYTES for part in encoded.split(b"/")):
        return f"has a name longer than {MAX_NAME_BYTES} bytes"
    return None


def turngate_cache() -> str:
    """turngate's folder in the user's cache (``$XDG_CACHE_HOME``, else ``~/.cache``): engines, catalogs."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "turngate")
