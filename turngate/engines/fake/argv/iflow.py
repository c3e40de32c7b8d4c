"""The `iflow` command line (iFlow CLI 0.3.9), read as its yargs setup reads it.

iFlow CLI is a fork of gemini-cli and keeps its yargs setup: `iflow [options]
[query..]` in strict mode, help and version winning over everything else on
the line. Unlike gemini-cli 0.16, whose custom `.fail()` prints the message
first, the fork fails the way plain yargs does: the help text, a blank line,
then the message, on stderr, exit 1. iFlow 0.3.9 itself could not be run
here; its option texts and the choices below are modelled on gemini-cli
(marked "assumed" where they are a guess).
"""

from __future__ import annotations

from turngate.engines.fake.argv.tokens import (
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

ENGINE = "iflow"
VERSION = "0.3.9"

_RESUME_OPTIONS = frozenset({"resume", "continue"})
# Assumed: `-m` and `-p` take `nargs: 1` as in gemini-cli, so a missing value is an error.
_OPTIONS = (
    Option("model", STRING, "Model", alias="m", nargs=True),
    Option("prompt", STRING, "Prompt. Appended to input on stdin (if any).", alias="p", nargs=True),
    Option("sandbox", BOOLEAN, "Run in sandbox?", alias="s"),
    Option("debug", BOOLEAN, "Run in debug mode?", alias="d", default=False),
    Option(
        "yolo",
        BOOLEAN,
        "Automatically accept all actions (aka YOLO mode, see"
        " https://www.youtube.com/watch?v=xvFZjo5PgG0 for more details)?",
        alias="y",
        default=False,
    ),
    Option("thinking", BOOLEAN, "Enable thinking mode for models that support it", default=False),
    Option("resume", STRING, "Resume a previous session by its session id", alias="r"),
    Option("continue", BOOLEAN, "Continue the most recent session", alias="c", default=False),
    Option("version", BOOLEAN, "Show version number", alias="v"),
    Option("help", BOOLEAN, "Show help", alias="h"),
)
_USAGE = (
    "Usage: iflow [options] [command]\n\n"
    "iFlow CLI - Launch an interactive CLI, use -p/--prompt for non-interactive mode"
)
_QUERY_ROW = ("query", "Positional prompt. Same as --prompt (-p); use one or the other.")


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool) -> Invocation:
    """Parse iflow's argv (program name excluded), or raise `UsageError` as yargs fails."""
    options = _options(resumable)
    parsed = read_argv(argv, options)
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_text(resumable))
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=VERSION + "\n")
    problem = validation_message(parsed, options) or _contradiction(parsed)
    if problem:
        # Plain yargs failure output: help, blank line, message.
        raise UsageError(f"{help_text(resumable)}\n{problem}\n", 1)
    return _invocation(parsed, stdin_is_tty)


def help_text(resumable: bool) -> str:
    """`iflow --help`; without resume, `--resume` and `--continue` are gone."""
    sections = (("Positionals", (_QUERY_ROW,)), ("Options", option_rows(_options(resumable))))
    return render_help(_USAGE, sections)


def _options(resumable: bool) -> tuple[Option, ...]:
    if resumable:
        return _OPTIONS
    return tuple(option for option in _OPTIONS if option.name not in _RESUME_OPTIONS)


def _contradiction(parsed: Parsed) -> str:
    # Assumed kept from gemini-cli's `.check()`: a positional prompt and -p together.
    if parsed.text("prompt") and _query(parsed):
        return "Cannot use both a positional prompt and the --prompt (-p) flag together"
    return ""


def _query(parsed: Parsed) -> str:
    # As in gemini-cli, the untyped positional words are joined by one space.
    return " ".join(prompt_words(parsed.positionals, coerce_numbers=True))


def _invocation(parsed: Parsed, stdin_is_tty: bool) -> Invocation:
    prompt = parsed.text("prompt") or _query(parsed)
    if not prompt and stdin_is_tty:
        raise UsageError("turngate fake iflow: interactive mode is not simulated; pass a prompt\n", 1)
    resume = parsed.text("resume")
    # Assumed: `--resume` without an id resumes the latest session, as gemini-cli's does;
    # an explicit id wins over `--continue`.
    resume_latest = not resume and (parsed.last("resume") == "" or parsed.flag("continue"))
    return Invocation(
        engine=ENGINE,
        action="run",
        prompt=prompt or None,
        prompt_from_stdin=not prompt,
        resume_id=resume or None,
        resume_latest=resume_latest,
        model=parsed.text("model") or None,
        output_format="text",
        auto_flags=(parsed.flag_spelling("yolo"),) if parsed.flag("yolo") else (),
        thinking=parsed.flag("thinking"),
    )
