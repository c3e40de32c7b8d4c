"""Install the pinned real CLIs with npm into the cache, and write launchers for them.

``npm install --prefix <cache>/<engine>@<version> <package>@<version>``: one
folder per pinned version, so two codex versions live side by side. The
launchers (``DIR/codex``, ``DIR/gemini``, ``DIR/opencode``) are small Python
files like the fake engines' (turngate/engines/fake/install.py), bound to one pinned
version each; iflow is not installable, so ``DIR/iflow`` is the fake, and so is ``DIR/kilo`` (kilo is not
pinned: its real captures are in ``corpus/kilo/``).
"""

from __future__ import annotations

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
from turngate.engines.real.lock import Pin

LAUNCHER = """#!{python} -S
# turngate launcher for the REAL {engine} CLI {version} ({package}), pointed at turngate's model server.
# Written by `turngate engines real launchers`; delete this folder to remove it.
import sys

sys.path.insert(0, {package_parent!r})
from turngate.engines.real.launch import main

raise SystemExit(main({engine!r}, {executable!r}, {version!r}, {defaults!r}, sys.argv[1:]))
"""


class InstallProblem(RuntimeError):
    """npm is missing or failed; the message names the package and the log."""


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
    npm = shutil.which("npm")
    if npm is None:
        raise InstallProblem(f"{pin.name}: npm: not found on PATH (Node.js is needed for real engines)")
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "npm-install.log"
    started = time.monotonic()
    with log.open("wb") as out:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--prefix",
                str(folder),
                f"{pin.package}@{pin.version}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    seconds = round(time.monotonic() - started, 1)
    if done.returncode != 0 or not pin.executable(cache).exists():
        raise InstallProblem(
            f"{pin.name}: npm install {pin.package}@{pin.version}: exit {done.returncode}: see {log}"
        )
    return Installed(pin, folder, seconds, _size(folder), True)


def write_launchers(
    directory: Path,
    pins: Iterable[Pin],
    cache: Path,
    *,
    model_url: str | None = None,
    scripts: Path | None = None,
    call_log: Path | None = None,
    python: str = sys.executable,
) -> list[Path]:
    """One launcher per engine of ``pins`` (the first pin of an engine wins), the other fakes beside them."""
    defaults = {}
    if model_url:
        defaults["TURNGATE_MODEL_URL"] = model_url
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
    total = 0
    for path in folder.rglob("*"):
        try:
            if path.is_file() and not path.is_symlink():
                total += path.stat().st_size
        except OSError:
            continue
    return total
