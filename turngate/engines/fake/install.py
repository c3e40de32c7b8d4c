"""Write the launchers, one per fake engine (`DIR/codex`, `DIR/gemini`, …: `invocation.ENGINES`).

Never on the user's PATH under the real names: the orchestrator under test is
pointed at DIR. A launcher is a Python file run with `-S` (no site import:
it halves start-up, and the engines need only the standard library; the
rare compile path turns site back on to reach PyYAML and jsonschema). Options
given at install time become defaults for the engines' environment variables,
so a server started by someone else finds the scripts without extra setup.
"""

from __future__ import annotations

import contextlib
import functools
import stat
import sys
from pathlib import Path

from turngate.engines.fake.invocation import ENGINES

PACKAGE_PARENT = Path(__file__).resolve().parents[3]  # the folder holding the turngate package

LAUNCHER = """#!{python} -S
# turngate fake engine: {engine}. NOT the real {engine} CLI.
# Written by `turngate engines install`; delete this folder to remove it.
import os
import sys

sys.path.insert(0, {package_parent!r})
for name, default in {defaults!r}.items():
    os.environ.setdefault(name, default)
from turngate.engines.fake.engine import main

code = main({engine!r}, sys.argv[1:])
try:
    sys.stdout.flush()
    sys.stderr.flush()
except BaseException:
    raise SystemExit(code)  # as Python ends it: the message and exit status 120 of a lost write
os._exit(code)  # no interpreter teardown: a seventh of an engine's start, and it holds nothing open
"""


def install(
    directory: Path,
    *,
    scripts: Path | None = None,
    state: Path | None = None,
    call_log: Path | None = None,
    non_resumable: tuple[str, ...] = (),
    python: str = sys.executable,
) -> list[Path]:
    """Write the launchers into `directory`; return their paths."""
    defaults = {}
    if scripts is not None:
        defaults["TURNGATE_SCRIPTS"] = str(scripts.resolve())
    if state is not None:
        defaults["TURNGATE_STATE"] = str(state.resolve())
    if call_log is not None:
        defaults["TURNGATE_CALL_LOG"] = str(call_log.resolve())
    if non_resumable:
        defaults["TURNGATE_NON_RESUMABLE"] = ",".join(non_resumable)
    directory.mkdir(parents=True, exist_ok=True)
    compile_package()
    written = []
    for engine in ENGINES:
        path = directory / engine
        path.write_text(
            LAUNCHER.format(
                python=python,
                engine=engine,
                package_parent=str(PACKAGE_PARENT),
                defaults=defaults,
            ),
            encoding="utf-8",
        )
        mode = path.stat().st_mode
        path.chmod(mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        written.append(path)
    return written


@functools.cache
def compile_package() -> None:
    """Write the engines' bytecode now, once per process, so that no engine start compiles it.

    Machines that set PYTHONDONTWRITEBYTECODE=1 (CI, these sessions) never keep
    the bytecode an engine compiles, so each engine process would compile the
    package again: 64 ms an engine start instead of 28 ms. py_compile writes
    whatever that variable says; a read-only install only keeps the slow start.
    """
    import compileall

    with contextlib.suppress(OSError):
        compileall.compile_dir(str(Path(__file__).resolve().parent), quiet=2)
        for package in (PACKAGE_PARENT / "turngate", PACKAGE_PARENT / "turngate" / "engines"):
            compileall.compile_file(str(package / "__init__.py"), quiet=2)


def ensure_site_packages() -> None:
    """Make site-packages importable in a launcher started with -S (compile path only)."""
    if "site" not in sys.modules or not any("site-packages" in entry for entry in sys.path):
        import site

        site.main()
