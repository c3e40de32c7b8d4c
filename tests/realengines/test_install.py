"""`turngate engines real install`: a CLI inside a Python wheel through pip (offline here: a wheel built
in the test, pip told to look in its folder only), and the installed size with hard links counted once."""

from __future__ import annotations

import base64
import hashlib
import os
import stat
import zipfile
from pathlib import Path

import pytest

from turngate.engines.real.lock import Pin
from turngate.engines.real.npm_install import InstallProblem, _size, install_pin

CLI = b"#!/bin/sh\necho 'demo-cli 9.9.9'\n"


def build_wheel(folder: Path) -> Path:
    """tgdemo 0.1.0: one package holding an executable, as codebuddy-agent-sdk holds codebuddy-headless."""
    files = {
        "tgdemo/__init__.py": b"",
        "tgdemo/bin/demo-cli": CLI,
        "tgdemo-0.1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tgdemo\nVersion: 0.1.0\n",
        "tgdemo-0.1.0.dist-info/WHEEL": (
            b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ),
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tgdemo-0.1.0.dist-info/RECORD,,")
    files["tgdemo-0.1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    wheel = folder / "tgdemo-0.1.0-py3-none-any.whl"
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, data in files.items():
            info = zipfile.ZipInfo(name)
            mode = 0o755 if name.endswith("demo-cli") else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            archive.writestr(info, data)
    return wheel


PIN = Pin("codebuddy", "tgdemo", "9.9.9", "tgdemo/bin/demo-cli", "pip", "0.1.0")


def test_a_pip_pin_installs_the_wheel_into_its_own_folder_and_finds_the_cli_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels)
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # no network: the wheel folder is the whole index
    monkeypatch.setenv("PIP_FIND_LINKS", str(wheels))
    cache = tmp_path / "cache"
    done = install_pin(PIN, cache)
    assert done.fresh
    executable = cache / "codebuddy@9.9.9" / "site" / "tgdemo" / "bin" / "demo-cli"
    assert PIN.executable(cache) == executable
    assert os.access(executable, os.X_OK)
    assert done.bytes >= len(CLI)
    assert (cache / "codebuddy@9.9.9" / "pip-install.log").exists()
    again = install_pin(PIN, cache)  # already there: nothing fetched
    assert (again.fresh, again.seconds) == (False, 0.0)


def test_a_pip_pin_the_index_does_not_have_is_one_line_naming_the_requirement_and_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))  # empty: nothing to install
    with pytest.raises(InstallProblem) as raised:
        install_pin(PIN, tmp_path / "cache")
    message = str(raised.value)
    assert message.startswith("codebuddy@9.9.9: pip install tgdemo==0.1.0: exit ")
    assert message.endswith("pip-install.log")
    assert "\n" not in message


def test_the_size_counts_a_hard_linked_binary_once_and_follows_no_symbolic_link(tmp_path: Path) -> None:
    binary = tmp_path / "pkg" / "bin" / "cli"
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"x" * 1000)
    twin = tmp_path / "pkg-linux-x64" / "cli"
    twin.parent.mkdir()
    os.link(binary, twin)  # npm's platform package and its wrapper share one inode
    assert binary.stat().st_nlink == 2
    (tmp_path / "link").symlink_to(binary)
    (tmp_path / "small").write_bytes(b"y" * 10)
    assert _size(tmp_path) == 1010
