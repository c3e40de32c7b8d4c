"""Find and load a case script, through a compiled cache (the hot path).

Validating a YAML script needs PyYAML and jsonschema, whose imports alone cost
several engine turns; so the first invocation compiles the script to plain
data with `marshal` (the interpreter's own, import-free format) in the state
folder, and later invocations load that unless the file changed.
"""

from __future__ import annotations

import marshal
import os

from fake_engines.problems import CASE_NOT_FOUND, ScriptProblem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Bump when the compiled form changes, so stale caches are recompiled.
COMPILED_FORMAT = 3
SUFFIXES = (".yaml", ".yml")


def find(scripts_dir: str, case_id: str) -> str:
    """The script file of a case, or CASE_NOT_FOUND naming where it looked."""
    for suffix in SUFFIXES:
        path = os.path.join(scripts_dir, case_id + suffix)
        if os.path.isfile(path):
            return path
    raise ScriptProblem(
        CASE_NOT_FOUND,
        os.path.join(scripts_dir, case_id + SUFFIXES[0]),
        "case",
        case_id,
        f"no script for case {case_id!r} in {scripts_dir}",
    )


def load(path: str, cache_dir: str | None) -> dict[str, Any]:
    """The compiled script at `path`; ScriptProblem if it is invalid."""
    status = os.stat(path)
    key = (COMPILED_FORMAT, os.path.abspath(path), status.st_mtime_ns, status.st_size, status.st_ino)
    cache_path = None
    if cache_dir is not None:
        cache_path = os.path.join(cache_dir, os.path.basename(path) + ".compiled")
        try:
            with open(cache_path, "rb") as cached:
                stored_key, compiled = marshal.load(cached)
            if stored_key == key:
                return dict(compiled)
        except (OSError, EOFError, ValueError, TypeError):
            pass  # no cache yet, or an unreadable one: compile afresh
    from pathlib import Path

    from fake_engines.install import ensure_site_packages

    ensure_site_packages()  # PyYAML and jsonschema live there; launchers start with -S
    from fake_engines.compiler import compile_script

    compiled = compile_script(Path(path))
    if cache_path is not None:
        _store(cache_path, (key, compiled))
    return compiled


def cache_dir_of(state_dir: str) -> str:
    """Where the engines keep compiled scripts, under their state folder."""
    return os.path.join(state_dir, "cache")


def precompile(path: str, state_dir: str) -> None:
    """Compile a script into the engines' cache from a process that has PyYAML and jsonschema loaded.

    The first engine turn of a case would otherwise import both (the slow path,
    about ten times an engine turn); a harness that writes the script already
    has them, and compiles it once for every engine process of the case. An
    invalid script is left for the engine to report, as it always does.
    """
    try:  # noqa: SIM105 - contextlib would be one more import on the engines' hot path
        load(path, cache_dir_of(state_dir))
    except ScriptProblem:
        pass


def _store(cache_path: str, entry: tuple[Any, ...]) -> None:
    # Write then rename, so a concurrent engine never reads half a cache entry.
    try:
        os.makedirs(os.path.dirname(cache_path), exist_ok=True)
        temporary = f"{cache_path}.{os.getpid()}.tmp"
        with open(temporary, "wb") as out:
            marshal.dump(entry, out)
        os.replace(temporary, cache_path)
    except OSError:
        pass  # a read-only state folder only costs speed
