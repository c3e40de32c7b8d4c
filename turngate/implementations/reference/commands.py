"""The exact argv the orchestrator builds per engine, mode, and first vs resume turn.

ENGINE_FORMATS.md "Command lines the orchestrator builds" and spec 003
"Adapter CLI 命令构造 MUST 与执行模式一致"::

    codex     codex exec --skip-git-repo-check --json --full-auto [-p PROFILE] [-m MODEL] PROMPT
              codex exec [-p PROFILE] resume --skip-git-repo-check --json --full-auto [-m MODEL] ID REPLY
    gemini    gemini [--resume ID] --yolo [--output-format json|stream-json] [--model MODEL] PROMPT
    iflow     iflow [--resume ID] --yolo --thinking [--model MODEL] -p PROMPT
    opencode  opencode run [--session=ID] --format json [--model PROVIDER/MODEL] PROMPT
    kilo      kilo run --format json --auto --thinking [--session ID] [--model PROVIDER/MODEL] PROMPT

Both modes keep the automatic-execution flags (Gemini and iFlow ``--yolo``,
Codex ``--full-auto``, or ``--yolo`` where the deployment has no sandbox), iFlow
always gets ``--thinking``, and a resume turn keeps them all. So the mode does
not change the argv: `build_command` takes it anyway, so that tests can say so
and a future spec change has one place to go. A sticky (resident) process is
started with the first-turn argv; its later turns are lines on its stdin, not
command lines.

Which Codex flag: the spec allows both (003 "命令包含自动执行参数（`--full-auto` 或
`--yolo`）"). ``--full-auto`` is the default (ENGINE_FORMATS.md), but codex
0.169.0 refuses it (exit 2, "unexpected argument '--full-auto' found") while
every build seen, old and new, takes ``--yolo``. So the reference asks the
engine its version (``codex --version``) and builds ``--yolo`` from 0.169.0
on (`codex_auto_flag_for`): the one spec-allowed flag that build accepts.
A deployment that chose ``--yolo`` keeps it for every version.

kilo (Kilo CLI, an opencode fork) is in neither text: spec 003 names no flags
for it, nor for opencode. Its argv is Skill-Runner v0.7.9's
(``server/engines/kilo/adapter/adapter_profile.json`` ``command_defaults``, built
by ``command_builder.py``: ``run --format json --auto --thinking``, ``--session
ID`` before the model on a resume), checked against kilo 7.7.7's ``run --help``:
``--auto`` approves the permissions the config does not deny (without it a
tool call that asks ends the run: "run ended with an auto-rejected
permission"), ``--thinking`` prints the reasoning a marker echo may sit in.
Skill-Runner also passes ``--dir RUN``; the reference starts the engine in the
run folder, which is what ``--dir`` would name, so it leaves it out, and it
writes no ``KILO_CONFIG`` (Skill-Runner's denies the question tool, which
``kilo run`` denies by itself, and folders outside the run; the reference
writes no opencode config either).

Codex's ``-p`` goes before ``resume`` on a resume turn: ``codex exec resume``
does not know ``-p`` (ENGINE_FORMATS.md: "newer builds put -p <profile> before
resume").

A prompt is free text (a user's reply may be anything, 004 "自由文本"). Some
texts would not reach the engine as written, so they get one leading space:

- one that starts with ``-`` is read as an option by every engine (``--`` does
  not help: gemini, opencode and kilo drop the words after it);
- codex (clap) reads ``resume``, ``review`` and ``help`` as ``codex exec``
  subcommands;
- gemini (yargs) reads ``mcp`` and ``extension(s)`` as commands, a bare
  ``true``/``false`` right after ``--yolo`` as that flag's value, and a
  number-like query as a JavaScript number (``1.50`` is sent as ``1.5``);
- kilo (yargs) reads a bare ``true``/``false`` right after ``--thinking`` (a
  first turn without a model) as that flag's value, and then has no message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "kilo")
MODES: Final = ("auto", "interactive")

# Whole prompts an engine reads as something other than text (see the module notes).
_MISREAD_WORDS: Final = {
    "codex": frozenset({"resume", "review", "help"}),
    "gemini": frozenset({"true", "false", "mcp", "extensions", "extension"}),
    "kilo": frozenset({"true", "false"}),  # over-matching a resume's reply only costs a space
}
# yargs-parser's isNumber(): what gemini would coerce. Over-matching only costs a space.
_YARGS_NUMBER: Final = re.compile(
    r"0x[0-9a-f]+|-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[-+]?[0-9]+)?", re.IGNORECASE
)


# The first codex build known to refuse --full-auto (0.146.1 still takes it, with a deprecation warning).
CODEX_FULL_AUTO_REFUSED_FROM: Final = (0, 169, 0)
_VERSION_NUMBER: Final = re.compile(r"(\d+)\.(\d+)\.(\d+)")


def codex_auto_flag_for(version_line: str | None) -> Literal["--full-auto", "--yolo"]:
    """The automatic-execution flag for a codex build, from its ``--version`` line (None: unknown)."""
    found = _VERSION_NUMBER.search(version_line or "")
    if found and tuple(int(part) for part in found.groups()) >= CODEX_FULL_AUTO_REFUSED_FROM:
        return "--yolo"
    return "--full-auto"


@dataclass(frozen=True, slots=True)
class CommandOptions:
    """Per-deployment choices that real orchestrators make differently."""

    codex_auto_flag: Literal["--full-auto", "--yolo"] = "--full-auto"  # --yolo where no sandbox exists
    codex_profile: str | None = None
    gemini_output_format: Literal["json", "stream-json"] | None = None  # None: from .gemini/settings.json
    model: str | None = None  # opencode and kilo need "provider/model"

    def __post_init__(self) -> None:
        if self.codex_auto_flag not in ("--full-auto", "--yolo"):
            raise ValueError(
                f"CommandOptions.codex_auto_flag: {self.codex_auto_flag!r}: '--full-auto' or '--yolo'"
            )
        if self.gemini_output_format not in (None, "json", "stream-json"):
            raise ValueError(
                f"CommandOptions.gemini_output_format: {self.gemini_output_format!r}:"
                " None, 'json' or 'stream-json'"
            )
        for name in ("codex_profile", "model"):
            value = getattr(self, name)
            if value is not None and not _is_option_value(value):
                raise ValueError(f"CommandOptions.{name}: {value!r}: a non-empty word not starting with '-'")


def build_command(
    engine: str,
    mode: str,
    *,
    prompt: str,
    resume_id: str | None = None,
    options: CommandOptions | None = None,
) -> tuple[str, ...]:
    """The argv of one turn; ``resume_id`` set means a resume turn. argv[0] is the engine's name."""
    if engine not in ENGINES:
        raise ValueError(f"engine: {engine!r}: known: {', '.join(ENGINES)}")
    if mode not in MODES:
        raise ValueError(f"execution mode: {mode!r}: known: {', '.join(MODES)}")
    if resume_id is not None and not _is_option_value(resume_id):
        # An empty id would start a new session, and "-x" is read as an option (gemini
        # then resumes the *latest* session): neither is the session the run is in.
        raise ValueError(f"resume_id: {resume_id!r}: a non-empty word not starting with '-'")
    options = options or CommandOptions()
    text = _as_text(engine, prompt)
    match engine:
        case "codex":
            return _codex(text, resume_id, options)
        case "gemini":
            return _gemini(text, resume_id, options)
        case "iflow":
            return _iflow(text, resume_id, options)
        case "kilo":
            return _kilo(text, resume_id, options)
        case _:
            return _opencode(text, resume_id, options)


def _codex(prompt: str, resume_id: str | None, options: CommandOptions) -> tuple[str, ...]:
    common = ("--skip-git-repo-check", "--json", options.codex_auto_flag)
    profile = ("-p", options.codex_profile) if options.codex_profile else ()
    model = ("-m", options.model) if options.model else ()
    if resume_id is None:
        return ("codex", "exec", *common, *profile, *model, prompt)
    # The thread id is positional, before the reply.
    return ("codex", "exec", *profile, "resume", *common, *model, resume_id, prompt)


def _gemini(prompt: str, resume_id: str | None, options: CommandOptions) -> tuple[str, ...]:
    resume = ("--resume", resume_id) if resume_id is not None else ()
    output = ("--output-format", options.gemini_output_format) if options.gemini_output_format else ()
    model = ("--model", options.model) if options.model else ()
    return ("gemini", *resume, "--yolo", *output, *model, prompt)


def _iflow(prompt: str, resume_id: str | None, options: CommandOptions) -> tuple[str, ...]:
    resume = ("--resume", resume_id) if resume_id is not None else ()
    model = ("--model", options.model) if options.model else ()
    return ("iflow", *resume, "--yolo", "--thinking", *model, "-p", prompt)


def _opencode(prompt: str, resume_id: str | None, options: CommandOptions) -> tuple[str, ...]:
    if options.model and "/" not in options.model:
        raise ValueError(f"opencode model: {options.model!r}: expected provider/model")
    # `--session=ID` in one word, as ENGINE_FORMATS.md writes it.
    session = (f"--session={resume_id}",) if resume_id is not None else ()
    model = ("--model", options.model) if options.model else ()
    return ("opencode", "run", *session, "--format", "json", *model, prompt)


def _kilo(prompt: str, resume_id: str | None, options: CommandOptions) -> tuple[str, ...]:
    if options.model and "/" not in options.model:
        raise ValueError(f"kilo model: {options.model!r}: expected provider/model")
    # Skill-Runner v0.7.9's order: the session after the defaults, the model before the prompt.
    session = ("--session", resume_id) if resume_id is not None else ()
    model = ("--model", options.model) if options.model else ()
    return ("kilo", "run", "--format", "json", "--auto", "--thinking", *session, *model, prompt)


def _as_text(engine: str, prompt: str) -> str:
    """The prompt as an argv word the engine reads as exactly that text (see the module notes)."""
    misread = prompt.startswith("-") or prompt in _MISREAD_WORDS.get(engine, ())
    if engine == "gemini":
        misread = misread or _YARGS_NUMBER.fullmatch(prompt) is not None
    return " " + prompt if misread else prompt


def _is_option_value(word: str) -> bool:
    return bool(word.strip()) and not word.startswith("-")
