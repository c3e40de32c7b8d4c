"""The `gemini` command line (gemini-cli 0.16.0), read as its yargs setup reads it.

Mirrors `parseArguments` in gemini-cli's `config.ts`: `gemini [options]
[query..]` in strict mode, with a custom `.fail()` that prints the message
and then the help text on stderr and exits 1, and a `.check()` that refuses
contradictory options. Help and version win over everything else on the line
(yargs handles them before validating), so the probe `gemini --resume X
--help` prints help even where `--resume` is unknown.
"""

from __future__ import annotations

from turngate.engines.fake.argv.tokens import (
    ARRAY,
    BOOLEAN,
    STRING,
    Option,
    option_rows,
    prompt_words,
    read_argv,
    render_help,
    validation_message,
)
from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.argv.tokens import Parsed

ENGINE = "gemini"
VERSION = "0.16.0"

_RESUME_OPTIONS = frozenset({"resume", "list-sessions", "delete-session"})
_OPTIONS = (
    Option("debug", BOOLEAN, "Run in debug mode?", alias="d", default=False),
    Option("model", STRING, "Model", alias="m", nargs=True),
    Option(
        "prompt",
        STRING,
        "Prompt. Appended to input on stdin (if any).",
        alias="p",
        nargs=True,
        deprecated="Use the positional prompt instead. This flag will be removed in a future version.",
    ),
    Option(
        "prompt-interactive",
        STRING,
        "Execute the provided prompt and continue in interactive mode",
        alias="i",
        nargs=True,
    ),
    Option("sandbox", BOOLEAN, "Run in sandbox?", alias="s"),
    Option(
        "yolo",
        BOOLEAN,
        "Automatically accept all actions (aka YOLO mode, see"
        " https://www.youtube.com/watch?v=xvFZjo5PgG0 for more details)?",
        alias="y",
        default=False,
    ),
    Option(
        "approval-mode",
        STRING,
        "Set the approval mode: default (prompt for approval), auto_edit (auto-approve edit tools),"
        " yolo (auto-approve all tools)",
        nargs=True,
        choices=("default", "auto_edit", "yolo"),
    ),
    Option("experimental-acp", BOOLEAN, "Starts the agent in ACP mode"),
    Option("allowed-mcp-server-names", ARRAY, "Allowed MCP server names", nargs=True),
    Option("allowed-tools", ARRAY, "Tools that are allowed to run without confirmation", nargs=True),
    Option(
        "extensions",
        ARRAY,
        "A list of extensions to use. If not provided, all extensions are used.",
        alias="e",
        nargs=True,
    ),
    Option("list-extensions", BOOLEAN, "List all available extensions and exit.", alias="l"),
    Option(
        "resume",
        STRING,
        'Resume a previous session. Use "latest" for most recent or index number (e.g. --resume 5)',
        alias="r",
    ),
    Option("list-sessions", BOOLEAN, "List available sessions for the current project and exit."),
    Option(
        "delete-session",
        STRING,
        "Delete a session by index number (use --list-sessions to see available sessions).",
    ),
    Option(
        "include-directories",
        ARRAY,
        "Additional directories to include in the workspace (comma-separated or multiple"
        " --include-directories)",
        nargs=True,
    ),
    Option("screen-reader", BOOLEAN, "Enable screen reader mode for accessibility."),
    Option(
        "output-format",
        STRING,
        "The format of the CLI output.",
        alias="o",
        nargs=True,
        choices=("text", "json", "stream-json"),
    ),
    Option("fake-responses", STRING, hidden=True),
    Option("record-responses", STRING, hidden=True),
    Option("version", BOOLEAN, "Show version number", alias="v"),
    Option("help", BOOLEAN, "Show help", alias="h"),
)
_USAGE = (
    "Usage: gemini [options] [command]\n\n"
    "Gemini CLI - Launch an interactive CLI, use -p/--prompt for non-interactive mode"
)
_COMMAND_ROWS = (
    ("gemini [query..]", "Launch Gemini CLI  [default]"),
    ("gemini mcp", "Manage MCP servers"),
    ("gemini extensions <command>", "Manage Gemini CLI extensions.  [aliases: extension]"),
)
_QUERY_ROW = (
    "query",
    "Positional prompt. Defaults to one-shot; use -i/--prompt-interactive for interactive.",
)
_COMMANDS = frozenset({"mcp", "extensions", "extension"})
# Options that make gemini do something other than answer one prompt.
_NOT_SIMULATED = (
    "prompt-interactive", "list-sessions", "delete-session", "list-extensions", "experimental-acp",
)  # fmt: skip


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool) -> Invocation:
    """Parse gemini's argv (program name excluded), or raise `UsageError` as gemini-cli fails."""
    options = _options(resumable)
    parsed = read_argv(argv, options)
    if parsed.positionals and parsed.positionals[0] in _COMMANDS:
        raise UsageError(f"turngate fake gemini: 'gemini {parsed.positionals[0]}' is not simulated\n", 1)
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_text(resumable))
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=VERSION + "\n")
    problem = validation_message(parsed, options) or _contradiction(parsed)
    if problem:
        # gemini-cli's .fail(): the message, then the help, both on stderr.
        raise UsageError(f"{problem}\n{help_text(resumable)}", 1)
    for name in _NOT_SIMULATED:
        if parsed.last(name) is True or isinstance(parsed.last(name), str):
            raise UsageError(f"turngate fake gemini: --{name} is not simulated\n", 1)
    return _invocation(parsed, stdin_is_tty)


def help_text(resumable: bool) -> str:
    """`gemini --help`; without resume, the session options are gone as in older builds."""
    return render_help(
        _USAGE,
        (
            ("Commands", _COMMAND_ROWS),
            ("Positionals", (_QUERY_ROW,)),
            ("Options", option_rows(_options(resumable))),
        ),
    )


def _options(resumable: bool) -> tuple[Option, ...]:
    if resumable:
        return _OPTIONS
    return tuple(option for option in _OPTIONS if option.name not in _RESUME_OPTIONS)


def _contradiction(parsed: Parsed) -> str:
    """gemini-cli's `.check()`, in its order.

    Its third check, "When resuming a session, you must provide a message via
    --prompt (-p) or stdin" (thrown for `--resume` without `-p` whenever stdin
    is not a terminal), is left out: it would reject the documented resume
    line `gemini --resume <id> --yolo "<reply>"` run with stdin not a TTY.
    """
    prompt = parsed.text("prompt")
    if prompt and _query(parsed):
        return "Cannot use both a positional prompt and the --prompt (-p) flag together"
    if prompt and parsed.text("prompt-interactive"):
        return "Cannot use both --prompt (-p) and --prompt-interactive (-i) together"
    if parsed.flag("yolo") and parsed.text("approval-mode"):
        return "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead."
    return ""


def _invocation(parsed: Parsed, stdin_is_tty: bool) -> Invocation:
    # An empty -p counts as none.
    prompt = parsed.text("prompt") or _query(parsed)
    if not prompt and stdin_is_tty:
        raise UsageError("turngate fake gemini: interactive mode is not simulated; pass a prompt\n", 1)
    resume = parsed.last("resume")
    # `--resume` with no value is "latest" (gemini-cli's coerce turns "" into it).
    resume_latest = resume in ("", "latest")
    return Invocation(
        engine=ENGINE,
        action="run",
        prompt=prompt or None,
        prompt_from_stdin=not prompt,
        resume_id=resume if isinstance(resume, str) and not resume_latest else None,
        resume_latest=resume_latest,
        model=parsed.text("model") or None,
        output_format=_output_format(parsed),
        auto_flags=_auto_flags(parsed),
    )


def _query(parsed: Parsed) -> str:
    """The positional prompt: its words joined by one space, as gemini-cli joins them."""
    return " ".join(prompt_words(parsed.positionals, coerce_numbers=True))


def _output_format(parsed: Parsed) -> str:
    formats = parsed.values.get("output-format", [])
    if len(formats) > 1:
        # Repeated, yargs hands gemini-cli an array, which matches neither "json" nor
        # "stream-json": gemini then prints text.
        return "text"
    return parsed.text("output-format")


def _auto_flags(parsed: Parsed) -> tuple[str, ...]:
    flags = []
    if parsed.flag("yolo"):
        flags.append(parsed.flag_spelling("yolo"))
    if parsed.text("approval-mode") == "yolo":
        flags.append("--approval-mode=yolo")
    return tuple(flags)
