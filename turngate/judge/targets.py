"""What ``--target`` names: the in-process reference, an HTTP job API, or a command-protocol program.

A target is a small frozen value (it crosses into worker processes) that
builds a fresh connector per case and says where the fake engines of that
target read their scripts and write their call log.

- ``reference``: the in-process reference orchestrator; ``reference:VARIANT`` one of its conforming
  variants (turngate/implementations/conforming_variants.py).
- ``http://HOST:PORT``: a server with the job API; options from ``--target-options FILE``.
- ``cmd:COMMAND``: a program speaking the line-JSON command protocol.
- ``FILE.yaml``: target options with ``base_url`` (an HTTP target).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turngate.base.optionsfile import read_mapping
from turngate.judge.connectors.http_options import HttpOptions, TargetProblem, http_options
from turngate.protocol.connector import Connector


@dataclass(frozen=True, slots=True)
class SharedServer:
    """A server every case of a run shares: its engines read scripts from one folder and log every
    call to one file (when it has one). ``hooks``: turngate serve's test hooks, with which each job
    has its own clock and names its own profile (so a sticky case sets no knob in the shared folder)."""

    scripts: Path
    call_log: Path | None  # None: the server's engines log nowhere turngate reads
    hooks: bool


@dataclass(frozen=True, slots=True)
class Target:
    name: str  # as the user wrote it, for reports
    kind: str  # reference | http | cmd
    http: HttpOptions | None = None
    command: str | None = None
    command_timeout_sec: float = 60.0
    variant: str | None = None  # reference only: a conforming variant (conforming_variants.py)
    mutant: str | None = None  # reference only: a spec mutant (turngate/implementations/mutants/)
    # reference only: the turn budget of a case that sets none (None: the connector's, 30 s, for fakes)
    turn_timeout_sec: float | None = None

    @property
    def shared(self) -> SharedServer | None:
        """The server the target's cases share (None: each case has engines of its own)."""
        if self.http is None:
            return None
        return SharedServer(self.http.scripts_dir, self.http.call_log, hooks=self.http.turngate_hooks)

    @property
    def max_jobs(self) -> int | None:
        return self.http.jobs if self.http else None

    def connector(self) -> Connector:
        match self.kind:
            case "reference":
                from turngate.implementations.conforming_variants import variant_named
                from turngate.implementations.reference_connector import ReferenceConnector

                budget = {} if self.turn_timeout_sec is None else {"turn_timeout_sec": self.turn_timeout_sec}
                return ReferenceConnector(variant=variant_named(self.variant), mutant=self.mutant, **budget)
            case "http":
                from turngate.judge.connectors.http import HttpConnector

                assert self.http is not None
                return HttpConnector(self.http)
            case "cmd":
                from turngate.judge.connectors.command import command_connector

                assert self.command is not None
                return command_connector(self.command, timeout_sec=self.command_timeout_sec)
        raise TargetProblem(f"--target: {self.name!r}: unknown kind {self.kind!r}")


def parse_target(
    value: str,
    options_file: Path | None = None,
    *,
    option: str = "--target",
    options_option: str = "--target-options",
) -> Target:
    """The target ``value`` names; what is wrong is one ``TargetProblem`` naming the option the user gave
    it with (``option``, ``options_option``: ``turngate run``'s by default, the pytest plugin's there)."""
    if options_file is not None and not value.startswith(("http://", "https://")):
        raise TargetProblem(
            f"{options_option}: only for an HTTP target ({option} http://HOST:PORT): {value!r}"
        )
    if value == "reference" or value.startswith("reference:"):
        variant = value.partition(":")[2] or None
        if variant is not None:
            from turngate.implementations.conforming_variants import VARIANTS

            if variant not in VARIANTS:
                known = ", ".join(VARIANTS)
                raise TargetProblem(
                    f"{option} {value}: {variant!r}: no such variant of the reference"
                    f" ({variant!r}: known: {known})"
                )
        return Target(value, "reference", variant=variant)
    if value.startswith("cmd:"):
        command = value[len("cmd:") :].strip()
        if not command:
            raise TargetProblem(f"{option} {value}: no command after 'cmd:'")
        return Target(value, "cmd", command=command)
    if value.startswith(("http://", "https://")):
        if options_file is None:  # http_options needs scripts_dir, which only an options file gives
            raise TargetProblem(
                f"{option} {value}: an HTTP target needs its options file, {options_option} FILE"
                " (scripts_dir at least: the folder the server's fake engines read their scripts from;"
                " see the README)"
            )
        try:
            raw = _options(options_file)
        except TargetProblem as problem:  # names the file
            raise TargetProblem(f"{options_option}: {problem}") from None
        raw.setdefault("base_url", value)
        if raw["base_url"] != value:
            raise TargetProblem(
                f"{options_option}: {options_file}: base_url: {raw['base_url']!r} differs from"
                f" {option} {value!r}"
            )
        return Target(value, "http", http=http_options(raw, options_file))
    path = Path(value)
    if path.suffix in (".yaml", ".yml", ".json") or path.exists():
        raw = _options(path)
        if "base_url" not in raw:
            raise TargetProblem(f"{path}: base_url: missing (the server's address, http://127.0.0.1:PORT)")
        return Target(str(raw["base_url"]), "http", http=http_options(raw, path))
    raise TargetProblem(
        f"{option}: {value!r}: expected reference, http://HOST:PORT, cmd:COMMAND or a target options file"
    )


def _options(path: Path) -> dict[str, Any]:
    return read_mapping(path, TargetProblem)
