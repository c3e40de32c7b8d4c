"""`TURNGATE_EMULATE=codex@<version>`: the fake codex parses as a named real build.

The refusal texts are byte copies of what the real codex 0.169.0 prints
(captured November 2026, docs/real-engines.md); 0.146.1 still takes --full-auto.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from turngate.engines.fake.argv import codex
from turngate.engines.fake.invocation import UsageError

REAL_0_169_EXEC_REFUSAL = (
    "error: unexpected argument '--full-auto' found\n\n"
    "  tip: to pass '--full-auto' as a value, use '-- --full-auto'\n\n"
    "Usage: codex exec [OPTIONS] [PROMPT]\n"
    "       codex exec [OPTIONS] <COMMAND> [ARGS]\n\n"
    "For more information, try '--help'.\n"
)
REAL_0_169_RESUME_REFUSAL = (
    "error: unexpected argument '--full-auto' found\n\n"
    "  tip: to pass '--full-auto' as a value, use '-- --full-auto'\n\n"
    "Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]\n\n"
    "For more information, try '--help'.\n"
)


def test_0_169_refuses_full_auto_as_the_real_build_does() -> None:
    with pytest.raises(UsageError) as raised:
        codex.parse(
            ["exec", "--json", "--skip-git-repo-check", "--full-auto", "tg-case-x"],
            resumable=True,
            stdin_is_tty=False,
            emulate="0.169.0",
        )
    assert (raised.value.text, raised.value.exit_code) == (REAL_0_169_EXEC_REFUSAL, 2)


def test_0_169_refuses_full_auto_on_resume_too() -> None:
    with pytest.raises(UsageError) as raised:
        codex.parse(
            ["exec", "resume", "--full-auto", "x", "y"], resumable=True, stdin_is_tty=False, emulate="0.169.0"
        )
    assert (raised.value.text, raised.value.exit_code) == (REAL_0_169_RESUME_REFUSAL, 2)


@pytest.mark.parametrize("version", ["0.99.0", "0.146.1", "0.169.0"])
def test_every_emulated_build_takes_yolo(version: str) -> None:
    invocation = codex.parse(
        ["exec", "--json", "--skip-git-repo-check", "--yolo", "tg-case-x"],
        resumable=True,
        stdin_is_tty=False,
        emulate=version,
    )
    assert (invocation.action, invocation.auto_flags) == ("run", ("--yolo",))


@pytest.mark.parametrize("version", ["0.99.0", "0.146.1"])
def test_older_builds_take_full_auto(version: str) -> None:
    invocation = codex.parse(
        ["exec", "--json", "--full-auto", "tg-case-x"], resumable=True, stdin_is_tty=False, emulate=version
    )
    assert invocation.auto_flags == ("--full-auto",)


@pytest.mark.parametrize("version", ["0.99.0", "0.146.1", "0.169.0"])
def test_version_lines_name_the_emulated_build(version: str) -> None:
    for argv, line in (
        (["--version"], f"codex-cli {version}\n"),
        (["exec", "--version"], f"codex-cli-exec {version}\n"),
    ):
        assert codex.parse(argv, resumable=True, stdin_is_tty=False, emulate=version).text == line


def test_an_unknown_emulated_build_is_one_line_and_exit_97(tmp_path: Path) -> None:
    from turngate.engines.fake.install import install

    install(tmp_path / "bin")
    done = subprocess.run(
        [str(tmp_path / "bin" / "codex"), "--version"],
        capture_output=True,
        env={"TURNGATE_EMULATE": "codex@9.9.9", "TURNGATE_STATE": str(tmp_path), "PATH": sys.exec_prefix},
        check=False,
    )
    assert done.returncode == 97
    assert done.stderr.decode().splitlines() == [
        "turngate-fake-codex: TURNGATE_EMULATE: codex@9.9.9:"
        " known: codex@0.99.0, codex@0.146.1, codex@0.169.0"
    ]


def test_0_146_takes_full_auto_with_its_deprecation_warning() -> None:
    invocation = codex.parse(
        ["exec", "--json", "--full-auto", "tg-case-x"], resumable=True, stdin_is_tty=False, emulate="0.146.1"
    )
    assert invocation.warnings == (
        "warning: `--full-auto` is deprecated; use `--sandbox workspace-write` instead.\n",
    )
    assert (
        codex.parse(
            ["exec", "--json", "--yolo", "x"], resumable=True, stdin_is_tty=False, emulate="0.146.1"
        ).warnings
        == ()
    )
    assert (
        codex.parse(["exec", "--json", "--full-auto", "x"], resumable=True, stdin_is_tty=False).warnings == ()
    )
