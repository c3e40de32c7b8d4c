"""The `opencode` command line (opencode 1.0.62), read as its yargs setup reads it.

opencode's `index.ts` builds a strict yargs CLI whose default command starts
the TUI and whose `run [message..]` command answers one message. Its
`.fail()` handler prints only the help of the command being parsed (with no
message) for unknown arguments and invalid choices, on stdout, and exits 1;
here the help goes to stderr, the only stream a `UsageError` has. Help and
version win over everything else on the line. Help texts are opencode
1.0.61's, the closest build available to check against.
"""

from __future__ import annotations

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

ENGINE = "opencode"
VERSION = "1.0.62"

_GLOBAL_OPTIONS = (
    Option("help", BOOLEAN, alias="h"),
    Option("version", BOOLEAN, alias="v"),
    Option("print-logs", BOOLEAN),
    Option("log-level", STRING, choices=("DEBUG", "INFO", "WARN", "ERROR")),
)
_RESUME_OPTIONS = frozenset({"continue", "session"})
# The default command, `opencode [project]`: the TUI.
_TUI_OPTIONS = (
    Option("model", STRING, alias="m"),
    Option("continue", BOOLEAN, alias="c"),
    Option("session", STRING, alias="s"),
    Option("prompt", STRING, alias="p"),
    Option("agent", STRING),
    Option("port", NUMBER),
    Option("hostname", STRING),
)
_RUN_OPTIONS = (
    Option("command", STRING),
    Option("continue", BOOLEAN, alias="c"),
    Option("session", STRING, alias="s"),
    Option("share", BOOLEAN),
    Option("model", STRING, alias="m"),
    Option("agent", STRING),
    Option("format", STRING, choices=("default", "json"), default="default"),
    Option("file", ARRAY, alias="f"),
    Option("title", STRING),
    Option("attach", STRING),
    Option("port", NUMBER),
)
# opencode's other commands (hidden ones included); any other first word is the TUI's project.
_OTHER_COMMANDS = frozenset(
    {
        "acp", "attach", "auth", "agent", "upgrade", "serve", "web", "models", "stats",
        "export", "import", "github", "pr", "mcp", "generate", "debug", "spawn",
    }
)  # fmt: skip
# opencode's UI.error: bold bright red "Error: ", even when stderr is not a terminal.
_ERROR_PREFIX = "\x1b[91m\x1b[1mError: \x1b[0m"
# The help's "Usage" is opencode's logo, drawn with a colour code that lost its number.
_LOGO_INK = "\x1b[38;5;\x07m"
_LOGO = (
    f"\n{_LOGO_INK}\xa0                   \x1b[0m             ▄\n"
    f"{_LOGO_INK}█▀▀█ █▀▀█ █▀▀█ █▀▀▄ \x1b[0m█▀▀▀ █▀▀█ █▀▀█ █▀▀█\n"
    f"{_LOGO_INK}█░░█ █░░█ █▀▀▀ █░░█ \x1b[0m█░░░ █░░█ █░░█ █▀▀▀\n"
    f"{_LOGO_INK}▀▀▀▀ █▀▀▀ ▀▀▀▀ ▀  ▀ \x1b[0m▀▀▀▀ ▀▀▀▀ ▀▀▀▀ ▀▀▀▀\n"
)
_TOP_HELP = """
Commands:
  opencode acp                 Start ACP (Agent Client Protocol) server
  opencode [project]           start opencode tui                      [default]
  opencode attach <url>        attach to a running opencode server
  opencode run [message..]     run opencode with a message
  opencode auth                manage credentials
  opencode agent               manage agents
  opencode upgrade [target]    upgrade opencode to the latest or a specific
                               version
  opencode serve               starts a headless opencode server
  opencode web                 starts a headless opencode server
  opencode models [provider]   list all available models
  opencode stats               show token usage and cost statistics
  opencode export [sessionID]  export session data as JSON
  opencode import <file>       import session data from JSON file or URL
  opencode github              manage GitHub agent
  opencode pr <number>         fetch and checkout a GitHub PR branch, then run
                               opencode

Positionals:
  project  path to start opencode in                                    [string]

Options:
  -h, --help        show help                                          [boolean]
  -v, --version     show version number                                [boolean]
      --print-logs  print logs to stderr                               [boolean]
      --log-level   log level
                            [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]
  -m, --model       model to use in the format of provider/model        [string]
  -c, --continue    continue the last session                          [boolean]
  -s, --session     session id to continue                              [string]
  -p, --prompt      prompt to use                                       [string]
      --agent       agent to use                                        [string]
      --port        port to listen on                      [number] [default: 0]
      --hostname    hostname to listen on        [string] [default: "127.0.0.1"]
"""
_RUN_HELP = """\
opencode run [message..]

run opencode with a message

Positionals:
  message  message to send                                 [array] [default: []]

Options:
  -h, --help        show help                                          [boolean]
  -v, --version     show version number                                [boolean]
      --print-logs  print logs to stderr                               [boolean]
      --log-level   log level
                            [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]
      --command     the command to run, use message for args            [string]
  -c, --continue    continue the last session                          [boolean]
  -s, --session     session id to continue                              [string]
      --share       share the session                                  [boolean]
  -m, --model       model to use in the format of provider/model        [string]
      --agent       agent to use                                        [string]
      --format      format: default (formatted) or json (raw JSON events)
                      [string] [choices: "default", "json"] [default: "default"]
  -f, --file        file(s) to attach to message                         [array]
      --title       title for the session (uses truncated prompt if no value
                    provided)                                           [string]
      --attach      attach to a running opencode server (e.g.,
                    http://localhost:4096)                              [string]
      --port        port for the local server (defaults to random port if no
                    value provided)                                     [number]
"""
# The help lines of the resume options, both in the top-level and the `run` help.
_RESUME_HELP_LINES = (
    "  -c, --continue    continue the last session                          [boolean]\n"
    "  -s, --session     session id to continue                              [string]\n"
)


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool) -> Invocation:
    """Parse opencode's argv (program name excluded), or raise `UsageError` as opencode fails."""
    # yargs picks the command from the first positional it finds knowing only the global
    # options, then parses the whole line again with the command's options.
    first = read_argv(argv, _GLOBAL_OPTIONS).positionals
    command = first[0] if first else ""
    if command == "run":
        return _parse_run(argv, resumable, stdin_is_tty)
    return _parse_top(argv, command, resumable)


def top_help_text(resumable: bool) -> str:
    """`opencode --help`."""
    return _without_resume(_LOGO + _TOP_HELP, resumable)


def run_help_text(resumable: bool) -> str:
    """`opencode run --help`: the probe an orchestrator reads for `--session`."""
    return _without_resume(_RUN_HELP, resumable)


def _without_resume(text: str, resumable: bool) -> str:
    return text if resumable else text.replace(_RESUME_HELP_LINES, "")


def _options(command_options: tuple[Option, ...], resumable: bool) -> tuple[Option, ...]:
    kept = tuple(option for option in command_options if resumable or option.name not in _RESUME_OPTIONS)
    return _GLOBAL_OPTIONS + kept


def _parse_top(argv: list[str], command: str, resumable: bool) -> Invocation:
    if command in _OTHER_COMMANDS:
        message = f"turngate fake opencode: 'opencode {command}' is not simulated; use 'opencode run'\n"
        raise UsageError(message, 1)
    options = _options(_TUI_OPTIONS, resumable)
    parsed = read_argv(argv, options)
    answer = _help_or_version(parsed, top_help_text(resumable))
    if answer is not None:
        return answer
    # `[project]` takes one word; strict yargs calls any further word an unknown argument.
    if validation_message(parsed, options) or len(parsed.positionals) > 1:
        raise UsageError(top_help_text(resumable), 1)
    raise UsageError("turngate fake opencode: the interactive TUI is not simulated; use 'opencode run'\n", 1)


def _parse_run(argv: list[str], resumable: bool, stdin_is_tty: bool) -> Invocation:
    options = _options(_RUN_OPTIONS, resumable)
    parsed = read_argv(argv, options)
    answer = _help_or_version(parsed, run_help_text(resumable))
    if answer is not None:
        return answer
    if validation_message(parsed, options):
        raise UsageError(run_help_text(resumable), 1)
    prompt = _prompt(parsed)
    if not prompt and stdin_is_tty:
        # opencode appends stdin to the message when stdin is not a terminal, then needs text.
        raise UsageError(_ERROR_PREFIX + "You must provide a message or a command\n", 1)
    model = parsed.text("model")
    if model and "/" not in model:
        raise UsageError(f"{_ERROR_PREFIX}invalid model '{model}': expected provider/model\n", 1)
    # `--continue` is checked before `--session`; an empty `--session` starts a new session.
    resume_latest = parsed.flag("continue")
    return Invocation(
        engine=ENGINE,
        action="run",
        prompt=prompt or None,
        prompt_from_stdin=not prompt,
        resume_id=None if resume_latest else parsed.text("session") or None,
        resume_latest=resume_latest,
        model=model or None,
        output_format=_output_format(parsed),
        profile=parsed.text("agent") or None,
    )


def _help_or_version(parsed: Parsed, help_text: str) -> Invocation | None:
    """yargs answers --help (first) and --version before validating or running anything."""
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_text)
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=VERSION + "\n")
    return None


def _prompt(parsed: Parsed) -> str:
    # yargs takes the command word out by position: the first positional, whatever it is
    # (`opencode --continue x run hi` sends "run hi").
    message = " ".join(prompt_words(parsed.positionals[1:], coerce_numbers=False))
    command = parsed.text("command")
    if command:
        # `--command NAME` runs a slash command with the message as its arguments.
        return f"/{command} {message}".rstrip()
    return message if message.strip() else ""


def _output_format(parsed: Parsed) -> str:
    # Repeated, `--format` is an array to opencode, which is not "json": default output.
    formats = parsed.values.get("format", [])
    return "json" if formats == ["json"] else "default"
