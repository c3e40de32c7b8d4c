"""The exact argv the orchestrator builds per engine, mode, and first vs resume turn.

ENGINE_FORMATS.md "Command lines the orchestrator builds" and spec 003
"Adapter CLI 命令构造 MUST 与执行模式一致"::

    codex     codex exec --skip-git-repo-check --json --full-auto [-p PROFILE] [-m MODEL] PROMPT
              codex exec [-p PROFILE] resume --skip-git-repo-check --json --full-auto [-m MODEL] ID REPLY
    gemini    gemini [--resume ID] --yolo [--output-format json|stream-json] [--model MODEL] PROMPT
    iflow     iflow [--resume ID] --yolo --thinking [--model MODEL] -p PROMPT
    opencode  opencode run [--session=ID] --format json [--model PROVIDER/MODEL] PROMPT
    claude    claude [--resume ID] -p --output-format stream-json --verbose [--model MODEL] PROMPT
    qwen      qwen --output-format stream-json --approval-mode yolo [--model MODEL] [--resume ID] -p PROMPT
    codebuddy codebuddy -p --output-format stream-json --permission-mode bypassPermissions [-r ID]
              [--model MODEL] PROMPT
    kilo      kilo run --format json --auto --thinking [--session ID] [--model PROVIDER/MODEL] PROMPT

claude, qwen and codebuddy are not in the spec (003 names the flags of Gemini, iFlow and
Codex only) nor in ENGINE_FORMATS.md: their command lines are Skill-Runner v0.7.9's
(``server/engines/<engine>/adapter/command_builder.py`` and ``adapter_profile.json``),
checked against each CLI's ``--help``, less what belongs to Skill-Runner's own deployment:
codebuddy's ``--settings``, ``--setting-sources project``, ``--mcp-config`` and
``--strict-mcp-config`` name files Skill-Runner writes into the run folder, and claude's and
codebuddy's ``--json-schema`` carries Skill-Runner's v0.6.0 union-contract schema (the seed
edition has none: the reply itself carries the marker). claude gets no permission flag, as
in Skill-Runner (its permission mode is in the settings it writes; claude refuses
``--dangerously-skip-permissions`` and ``--permission-mode bypassPermissions`` as root
outside a sandbox). A sticky (resident) process of these three speaks their own stdin
protocol: started with ``--input-format stream-json`` and no prompt, it reads every user
message, the first included, as a JSON line on stdin (`stdin_message`).

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
- claude and codebuddy (commander) read their subcommands' names (``doctor``,
  ``mcp``, …) as those commands.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, Literal

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
# Engines whose resident process takes each user message as a stream-json line on stdin.
STDIN_MESSAGE_ENGINES: Final = ("claude", "qwen", "codebuddy")
MODES: Final = ("auto", "interactive")

# claude 2.1.331's and codebuddy 2.118.2's commander subcommands (their --help).
_CLAUDE_COMMANDS: Final = frozenset(
    {
        "agents", "attach", "auth", "auto-mode", "doctor", "gateway", "import", "install", "logs", "mcp",
        "plugin", "plugins", "purge", "respawn", "rm", "setup-token", "stop", "kill", "ultrareview", "update",
        "upgrade",
    }
)  # fmt: skip
_CODEBUDDY_COMMANDS: Final = frozenset(
    {
        "config", "mcp", "sandbox", "plugin", "doctor", "update", "install", "daemon", "ps", "logs", "attach",
        "kill", "auto-mode",
    }
)  # fmt: skip
# Whole prompts an engine reads as something other than text (see the module notes).
_MISREAD_WORDS: Final = {
    "codex": frozenset({"resume", "review", "help"}),
    "gemini": frozenset({"true", "false", "mcp", "extensions", "extension"}),
    "kilo": frozenset({"true", "false"}),  # over-matching a resume's reply only costs a space
    "claude": _CLAUDE_COMMANDS,
    "codebuddy": _CODEBUDDY_COMMANDS,
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
    resident: bool = False,
) -> tuple[str, ...]:
    """The argv of one turn; ``resume_id`` set means a resume turn. argv[0] is the engine's name.

    ``resident``: the first command line of a sticky process; for the engines that read their
    messages from stdin (`STDIN_MESSAGE_ENGINES`) it carries no prompt (`stdin_message` does)."""
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
        case "claude":
            return _claude(text, resume_id, options, resident)
        case "qwen":
            return _qwen(text, resume_id, options, resident)
        case "codebuddy":
            return _codebuddy(text, resume_id, options, resident)
        case _:
            return _opencode(text, resume_id, options)


def stdin_message(engine: str, text: str) -> str:
    """What a resident process of ``engine`` is sent on stdin for one user message: a stream-json
    user message (claude, qwen, codebuddy with ``--input-format stream-json``), or the text."""
    if engine not in STDIN_MESSAGE_ENGINES:
        return text
    return json.dumps({"type": "user", "message": {"role": "user", "content": text}}, ensure_ascii=False)


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


def _claude(prompt: str, resume_id: str | None, options: CommandOptions, resident: bool) -> tuple[str, ...]:
    resume = ("--resume", resume_id) if resume_id is not None else ()
    model = ("--model", options.model) if options.model else ()
    if resident:
        return (
            "claude",
            *resume,
            "-p",
            "--input-format",
            "stream-json",
            "--output-format",
            "stream-json",
            "--verbose",
            *model,
        )
    return ("claude", *resume, "-p", "--output-format", "stream-json", "--verbose", *model, prompt)


def _qwen(prompt: str, resume_id: str | None, options: CommandOptions, resident: bool) -> tuple[str, ...]:
    common = ("--output-format", "stream-json", "--approval-mode", "yolo")
    model = ("--model", options.model) if options.model else ()
    resume = ("--resume", resume_id) if resume_id is not None else ()
    if resident:
        return ("qwen", "--input-format", "stream-json", *common, *model, *resume)
    # the prompt as -p's value, as Skill-Runner passes it (qwen 0.24.4 still takes the deprecated flag)
    return ("qwen", *common, *model, *resume, "-p", prompt)


def _codebuddy(
    prompt: str, resume_id: str | None, options: CommandOptions, resident: bool
) -> tuple[str, ...]:
    common = ("-p", "--output-format", "stream-json", "--permission-mode", "bypassPermissions")
    resume = ("-r", resume_id) if resume_id is not None else ()
    model = ("--model", options.model) if options.model else ()
    if resident:
        return ("codebuddy", "-p", "--input-format", "stream-json", *common[1:], *resume, *model)
    return ("codebuddy", *common, *resume, *model, prompt)


def _as_text(engine: str, prompt: str) -> str:
    """The prompt as an argv word the engine reads as exactly that text (see the module notes)."""
    misread = prompt.startswith("-") or prompt in _MISREAD_WORDS.get(engine, ())
    if engine == "gemini":
        misread = misread or _YARGS_NUMBER.fullmatch(prompt) is not None
    return " " + prompt if misread else prompt


def _is_option_value(word: str) -> bool:
    return bool(word.strip()) and not word.startswith("-")
