"""Install the pinned real CLIs into the cache (npm, or pip for a CLI inside a wheel), and write
launchers for them.

``npm install --prefix <cache>/<engine>@<version> <package>@<version>``, or
``pip install --no-deps --only-binary :all: --target <cache>/<engine>@<version>/site
<package>==<package_version>`` (codebuddy): one folder per pinned version, so
two codex versions live side by side. The launchers (``DIR/codex``,
``DIR/claude``...) are small Python files like the fake engines'
(turngate/engines/fake/install.py), bound to one pinned version each; iflow
is not installable, so ``DIR/iflow`` is the fake.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from turngate.engines.fake.install import PACKAGE_PARENT
from turngate.engines.fake.install import install as install_fakes
from turngate.engines.real.launch import RETRIES_VARIABLE
from turngate.engines.real.lock import PIP_FOLDER, Pin

LAUNCHER = """#!{python} -S
# turngate launcher for the REAL {engine} CLI {version} ({package}), pointed at turngate's model server.
# Written by `turngate engines real launchers`; delete this folder to remove it.
import sys

sys.path.insert(0, {package_parent!r})
from turngate.engines.real.launch import main

raise SystemExit(main({engine!r}, {executable!r}, {version!r}, {defaults!r}, sys.argv[1:]))
"""


class InstallProblem(RuntimeError):
    """npm or pip is missing or failed; the message names the package and the log."""


@dataclass(frozen=True, slots=True)
class Installed:
    pin: Pin
    folder: Path
    seconds: float  # 0.0 when it was already installed
    bytes: int
    fresh: bool


def install_pin(pin: Pin, cache: Path, *, force: bool = False) -> Installed:
    folder = pin.folder(cache)
    if pin.executable(cache).exists() and not force:
        return Installed(pin, folder, 0.0, _size(folder), False)
    command = _pip_command(pin, folder) if pin.source == "pip" else _npm_command(pin, folder)
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{pin.source}-install.log"
    started = time.monotonic()
    with log.open("wb") as out:
        done = subprocess.run(
            command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, check=False
        )
    seconds = round(time.monotonic() - started, 1)
    if done.returncode != 0 or not pin.executable(cache).exists():
        raise InstallProblem(
            f"{pin.name}: {pin.source} install {pin.requirement}: exit {done.returncode}: see {log}"
        )
    if not os.access(pin.executable(cache), os.X_OK):
        raise InstallProblem(f"{pin.name}: {pin.executable(cache)}: installed, but not executable")
    return Installed(pin, folder, seconds, _size(folder), True)


def _npm_command(pin: Pin, folder: Path) -> list[str]:
    npm = shutil.which("npm")
    if npm is None:
        raise InstallProblem(f"{pin.name}: npm: not found on PATH (Node.js is needed for real engines)")
    return [npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), pin.requirement]


def _pip_command(pin: Pin, folder: Path) -> list[str]:
    # This Python's own pip: the wheel's files land in a folder of their own (--target), nothing is
    # installed into turngate's environment, and no dependency is fetched (the CLI is one binary).
    try:
        import pip  # noqa: F401
    except ImportError:
        raise InstallProblem(f"{pin.name}: pip: not available to {sys.executable}") from None
    return [
        *(sys.executable, "-m", "pip", "install", "--no-deps", "--no-input", "--disable-pip-version-check"),
        *("--only-binary", ":all:", "--target", str(folder / PIP_FOLDER), pin.requirement),
    ]


def write_launchers(
    directory: Path,
    pins: Iterable[Pin],
    cache: Path,
    *,
    model_url: str | None = None,
    scripts: Path | None = None,
    call_log: Path | None = None,
    retries: int | None = None,
    python: str = sys.executable,
) -> list[Path]:
    """One launcher per engine of ``pins`` (the first pin of an engine wins), the fake iflow beside them.
    ``retries``: the CLIs' retry limit for failed model requests (else each engine's default)."""
    defaults = {}
    if model_url:
        defaults["TURNGATE_MODEL_URL"] = model_url
    if retries is not None:
        defaults[RETRIES_VARIABLE] = str(retries)
    if call_log is not None:
        defaults["TURNGATE_CALL_LOG"] = str(call_log.resolve())
    directory.mkdir(parents=True, exist_ok=True)
    # Every engine first gets its fake (iflow and kilo keep it); pinned engines are then written over.
    written = install_fakes(directory, scripts=scripts, call_log=call_log)
    seen: set[str] = set()
    for pin in pins:
        if pin.engine in seen:
            continue
        seen.add(pin.engine)
        path = directory / pin.engine
        path.write_text(
            LAUNCHER.format(
                python=python,
                engine=pin.engine,
                version=pin.version,
                package=pin.package,
                package_parent=str(PACKAGE_PARENT),
                executable=str(pin.executable(cache)),
                defaults=defaults,
            ),
            encoding="utf-8",
        )
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return written


def _size(folder: Path) -> int:
    """Bytes on disk of the regular files under ``folder``, each counted once: npm hard-links a
    platform binary into two packages (opencode's, claude's and kilo's have link count 2), which
    ``du`` counts once too. Symbolic links are not followed."""
    total = 0
    seen: set[tuple[int, int]] = set()
    for path in folder.rglob("*"):
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and (info.st_dev, info.st_ino) not in seen:
            seen.add((info.st_dev, info.st_ino))
            total += info.st_size
    return total
