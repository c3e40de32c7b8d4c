"""The `qwen` command line (Qwen Code 0.24.4), read as its yargs setup reads it.

Qwen Code is a fork of gemini-cli and keeps its yargs setup (`qwen [options]
[query..]`, strict, help and version winning over everything else). Skill-Runner
v0.7.9 runs (`server/engines/qwen/adapter/command_builder.py`, `adapter_profile.json`)::

    qwen --output-format stream-json --approval-mode yolo -p PROMPT
    qwen --output-format stream-json --approval-mode yolo --resume ID -p PROMPT

and probes `qwen --help` for `--resume`. The options and their types are read from the
real 0.24.4's help (`help/qwen-0.24.4.txt`, captured). A usage error prints the message,
then the help as the failing parse prints it (its command list differs from `--help`'s:
`help/qwen-0.24.4-usage.txt`, captured), on stderr, exit 1: `Unknown argument: bogus`.
Assumed from gemini-cli, not captured: which options take exactly one value (`nargs: 1`),
and the checks refusing a positional prompt with `-p`, and `--yolo` with `--approval-mode`.
"""

from __future__ import annotations

from turngate.engines.fake.argv.commander import help_text, without_entries
from turngate.engines.fake.argv.tokens import (
    ARRAY,
    BOOLEAN,
    NUMBER,
    STRING,
    Option,
    prompt_words,
    read_argv,
    validation_message,
)
from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.argv.tokens import Parsed

ENGINE = "qwen"
VERSION = "0.24.4"
_RESUME_WORDS = ("--resume", "--continue")
# gemini-cli 0.16's `nargs: 1` options (assumed kept by the fork): a value must follow.
_ONE_VALUE = frozenset(
    {
        "model", "prompt", "prompt-interactive", "output-format", "allowed-mcp-server-names",
        "allowed-tools", "extensions", "include-directories", "add-dir",
    }
)  # fmt: skip
_KINDS = (("[boolean]", BOOLEAN), ("[array]", ARRAY), ("[number]", NUMBER), ("[string]", STRING))
_COMMANDS = frozenset(
    {"mcp", "extensions", "extension", "auth", "hooks", "hook", "channel", "board", "review", "sandbox",
     "serve", "sessions", "update"}
)  # fmt: skip
_NOT_SIMULATED = ("prompt-interactive", "acp", "list-extensions")


def help_for(resumable: bool, *, failing: bool = False) -> str:
    """`qwen --help`, or the help a failing parse prints; without resume, its entries are gone."""
    text = help_text(f"qwen-{VERSION}-usage" if failing else f"qwen-{VERSION}")
    return text if resumable else without_entries(text, _RESUME_WORDS)


def options_of(text: str) -> tuple[Option, ...]:
    """The options a yargs help text lists: `-m, --model   Model  [string]`, aliases as their own
    options (`--include-directories, --add-dir`)."""
    found: list[Option] = []
    section = ""
    for line in text.split("\n"):
        if line and not line.startswith(" "):
            section = line
            continue
        label, _, rest = line.strip().partition("  ")
        if section != "Options:" or not label.startswith("-"):
            continue
        kind = next((kind for tag, kind in _KINDS if tag in rest), STRING)
        default = True if kind == BOOLEAN and "[default: true]" in rest else None
        names = [word.strip(",") for word in label.split()]
        alias = next((name[1:] for name in names if len(name) == 2), "")
        for name in (name[2:] for name in names if name.startswith("--")):
            found.append(
                Option(
                    name, kind, alias=alias, nargs=name in _ONE_VALUE, choices=_choices(rest), default=default
                )
            )
            alias = ""  # the one-letter alias belongs to the first long name
    return tuple(found)


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool) -> Invocation:
    """Parse qwen's argv (program name excluded), or raise `UsageError` as the real CLI fails."""
    options = options_of(help_for(resumable))
    parsed = read_argv(argv, options)
    if parsed.positionals and parsed.positionals[0] in _COMMANDS:
        raise UsageError(f"turngate fake qwen: 'qwen {parsed.positionals[0]}' is not simulated\n", 1)
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_for(resumable))
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=VERSION + "\n")
    problem = validation_message(parsed, options) or _contradiction(parsed)
    if problem:
        raise UsageError(f"{problem}\n{help_for(resumable, failing=True)}", 1)
    for name in _NOT_SIMULATED:
        if parsed.last(name) is True or isinstance(parsed.last(name), str):
            raise UsageError(f"turngate fake qwen: --{name} is not simulated\n", 1)
    return _invocation(parsed, stdin_is_tty)


def _contradiction(parsed: Parsed) -> str:
    if parsed.text("prompt") and _query(parsed):
        return "Cannot use both a positional prompt and the --prompt (-p) flag together"
    if parsed.flag("yolo") and parsed.text("approval-mode"):
        return "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead."
    return ""


def _query(parsed: Parsed) -> str:
    return " ".join(prompt_words(parsed.positionals, coerce_numbers=True))


def _invocation(parsed: Parsed, stdin_is_tty: bool) -> Invocation:
    prompt = parsed.text("prompt") or _query(parsed)
    input_format = parsed.text("input-format") or "text"
    if not prompt and stdin_is_tty and input_format == "text":
        raise UsageError("turngate fake qwen: interactive mode is not simulated; pass a prompt\n", 1)
    resume = parsed.last("resume")
    approval_mode = "yolo" if parsed.flag("yolo") else parsed.text("approval-mode") or "default"
    auto_flags = [parsed.flag_spelling("yolo")] if parsed.flag("yolo") else []
    if parsed.text("approval-mode") == "yolo":
        auto_flags.append("--approval-mode=yolo")
    output_format = parsed.text("output-format") or "text"
    log = {"output_format": output_format, "input_format": input_format, "approval_mode": approval_mode}
    return Invocation(
        engine=ENGINE,
        action="run",
        prompt=prompt or None,
        prompt_from_stdin=not prompt,
        resume_id=resume if isinstance(resume, str) and resume else None,
        # `--resume` without an id opens a picker in the terminal UI: here, the latest session.
        resume_latest=resume == "" or parsed.flag("continue"),
        model=parsed.text("model") or None,
        output_format=output_format,
        auto_flags=tuple(auto_flags),
        input_format=input_format,
        json_schema=parsed.text("json-schema") or None,
        log_fields=tuple(log.items()),
    )


def _choices(tags: str) -> tuple[str, ...]:
    at = tags.find("[choices: ")
    if at < 0:
        return ()
    listed = tags[at + len("[choices: ") :]
    found: list[str] = []
    while listed.startswith('"'):
        end = listed.find('"', 1)
        if end < 0:
            break
        found.append(listed[1:end])
        listed = listed[end + 1 :].lstrip(", ")
    return tuple(found)
