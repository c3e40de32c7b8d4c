"""Catalogs read before, kept on disk: a new process (each `turngate` command, each pytest that loads
the plugin) takes the scenarios another one already parsed and validated instead of doing it again
(171 YAML files and their schema: about a third of a second of CPU).

A catalog is kept under a key made of everything its reading depends on: turngate's version and
Python's, the loader's own files (this package, its schemas and sentences, the YAML loader), and
every scenario file's path, size and modification time. Any change is a new key, so a kept catalog
is never stale; the folder keeps the few newest. A kept file that cannot be read (another Python, a
half-written file, a full disk) is read again from the YAML. Only the user's own cache folder is
read (``$XDG_CACHE_HOME/turngate/catalog``, or ``TURNGATE_CATALOG_CACHE``); ``TURNGATE_CATALOG_CACHE=off``
reads every catalog from its files.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final, TypeVar

from turngate import __version__
from turngate.base.pathnames import turngate_cache

KEPT: Final = 8  # catalogs kept in the folder: a user's, the shipped one, a few of a test run's
_LOADER_FILES: Final = (
    Path(__file__).resolve().parent,  # the catalog package: its code, schemas, sentences, editions
    Path(__file__).resolve().parents[2] / "base" / "data_yaml.py",
)

T = TypeVar("T")


def folder() -> Path | None:
    chosen = os.environ.get("TURNGATE_CATALOG_CACHE")
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    return Path(turngate_cache()) / "catalog"


def _loader_stats() -> list[tuple[str, int, int]]:
    stats = []
    for root in _LOADER_FILES:
        paths = sorted(root.rglob("*")) if root.is_dir() else [root]
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts:
                stat = path.stat()
                stats.append((str(path), stat.st_size, stat.st_mtime_ns))
    return stats


def key(root: Path, files: Sequence[Path]) -> str | None:
    """The catalog's key, or None when a file cannot be looked at (then nothing is kept)."""
    digest = hashlib.sha256()
    try:
        parts: list[object] = [__version__, sys.version, str(root), *_loader_stats()]
        for path in files:
            stat = path.stat()
            parts.append((str(path.resolve()), stat.st_size, stat.st_mtime_ns))
    except OSError:
        return None
    digest.update(repr(parts).encode("utf-8", "backslashreplace"))
    return digest.hexdigest()


def kept(catalog_key: str, read: Callable[[], T]) -> T:
    """The catalog kept under ``catalog_key``, else ``read()`` (kept for the next process)."""
    where = folder()
    if where is None:
        return read()
    path = where / f"{catalog_key}.pickle"
    try:
        with path.open("rb") as stored:
            return pickle.load(stored)  # type: ignore[no-any-return]
    except Exception:  # any unreadable kept file is read again from the YAML
        pass
    catalog = read()  # a bad scenario raises here: nothing is kept for it
    _keep(where, path, catalog)
    return catalog


def _keep(where: Path, path: Path, catalog: object) -> None:
    part: Path | None = None
    try:
        where.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("wb", dir=where, suffix=".part", delete=False) as stream:
            part = Path(stream.name)
            pickle.dump(catalog, stream, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(part, path)  # whole or not at all, whatever else runs at the same time
        part = None
        newest_first = sorted(where.glob("*.pickle"), key=_age)
        for old in newest_first[KEPT:]:
            old.unlink(missing_ok=True)
    except Exception:  # a read-only home, a full disk: the next process reads the YAML
        if part is not None:
            part.unlink(missing_ok=True)


def _age(kept_file: Path) -> int:
    try:
        return -kept_file.stat().st_mtime_ns
    except OSError:  # gone meanwhile (another process pruned it)
        return 0
