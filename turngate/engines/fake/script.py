"""Find and load a case script, through a compiled cache (the hot path).

Validating a YAML script needs PyYAML and jsonschema, whose imports alone cost
several engine turns; so the first invocation compiles the script to plain
data with `marshal` (the interpreter's own, import-free format) in the state
folder, and later invocations load that unless the file changed. A harness that
writes a script for engines whose state folder it does not know (a server's)
compiles it beside the script instead, in `COMPANION_DIR`, where every engine
looks first.
"""

from __future__ import annotations

import marshal
import os

from turngate.engines.fake.problems import CASE_NOT_FOUND, ScriptProblem

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# Bump when the compiled form changes, so stale caches are recompiled.
COMPILED_FORMAT = 5
SUFFIXES = (".yaml", ".yml")
COMPANION_DIR = ".compiled"  # in the scripts folder: compiled by the harness that wrote the scripts


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
    cache_path = None if cache_dir is None else os.path.join(cache_dir, _compiled_name(path))
    for candidate in (companion_of(path), cache_path):
        if candidate is None:
            continue
        try:
            with open(candidate, "rb") as cached:
                stored_key, compiled = marshal.load(cached)
            if stored_key == key:  # the same file, unchanged since it was compiled
                return dict(compiled)
        except (OSError, EOFError, ValueError, TypeError):
            pass  # no cache yet, or an unreadable one: compile afresh
    from pathlib import Path

    from turngate.engines.fake.install import ensure_site_packages

    ensure_site_packages()  # PyYAML and jsonschema live there; launchers start with -S
    from turngate.engines.fake.compiler import compile_script

    compiled = compile_script(Path(path))
    if cache_path is not None:
        _store(cache_path, (key, compiled))
    return compiled


def cache_dir_of(state_dir: str) -> str:
    """Where the engines keep compiled scripts, under their state folder."""
    return os.path.join(state_dir, "cache")


def precompile(path: str, state_dir: str | None) -> None:
    """Compile a script into the engines' cache from a process that has PyYAML and jsonschema loaded.

    The first engine turn of a case would otherwise import both (the slow path,
    about ten times an engine turn); a harness that writes the script already
    has them, and compiles it once for every engine process of the case. An
    invalid script is left for the engine to report, as it always does.
    ``state_dir`` None: the engines' state folder is not known (a server's
    engines), so the script is compiled beside it, into `COMPANION_DIR`.
    """
    folder = cache_dir_of(state_dir) if state_dir is not None else companion_dir_of(path)
    try:  # noqa: SIM105 - contextlib would be one more import on the engines' hot path
        load(path, folder)
    except ScriptProblem:
        pass


def write_compiled(path: str, text: str, state_dir: str | None) -> None:
    """Write a case script for engines and compile it for them (`precompile`): whoever writes a
    script has PyYAML and jsonschema loaded, so no engine start of its case imports them."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    precompile(path, state_dir)


def remove_compiled(path: str) -> None:
    """A script that is going away, with its compiled form beside it (`discard_companion`)."""
    try:  # noqa: SIM105 - contextlib would be one more import on the engines' hot path
        os.unlink(path)
    except FileNotFoundError:
        pass
    discard_companion(path)


def companion_dir_of(path: str) -> str:
    """Where the compiled form of the script at ``path`` goes when its engines' state is unknown."""
    return os.path.join(os.path.dirname(path), COMPANION_DIR)


def companion_of(path: str) -> str:
    """The compiled form's file beside the script at ``path``."""
    return os.path.join(companion_dir_of(path), _compiled_name(path))


def _compiled_name(path: str) -> str:
    return os.path.basename(path) + ".compiled"


def discard_companion(path: str) -> None:
    """Remove the compiled form beside a script that is going away."""
    try:  # noqa: SIM105 - contextlib would be one more import on the engines' hot path
        os.unlink(companion_of(path))
    except OSError:
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
