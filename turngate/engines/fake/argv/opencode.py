"""The `opencode` command line, read as its yargs setup reads it, for three builds.

opencode's `index.ts` builds a strict yargs CLI whose default command starts
the TUI and whose `run [message..]` command answers one message. Its
`.fail()` handler prints only the help of the command being parsed (with no
message) for unknown arguments and invalid choices, on stdout, and exits 1;
here the help goes to stderr, the only stream a `UsageError` has. Help and
version win over everything else on the line.

Builds (`TURNGATE_EMULATE=opencode@<version>` picks one; unset, the default):

- `1.0.62`: the build the fake was written against, strict: `run --dir` and
  `run --thinking` are unknown arguments (help, exit 1), as they were to the
  real 1.0.62. Help texts are opencode 1.0.61's, the closest build available.
- `1.2.1`: the first build on the registry whose `run` takes both options
  Skill-Runner passes from v0.7.3 on (`opencode run --dir <run_dir>
  [--session=<id>] --format json --thinking --model <m> <prompt>`:
  `launch.run_dir_flag` in `server/engines/opencode/adapter/adapter_profile.json`
  from v0.7.3, `--thinking` in its `command_defaults` from v0.7.4; built by
  `command_builder.py`). In sst/opencode (now anomalyco/opencode)
  `packages/opencode/src/cli/cmd/run.ts`: `--thinking` (boolean, default
  false, "show thinking blocks") came with PR #12013 (2026-02-03): absent from
  the registry's 1.1.34, present in 1.1.53; `--dir` (string, "directory to run
  in, path on remote server if attaching") with PR #12443 (2026-02-06):
  absent from 1.1.65, present in 1.2.1 (the registry holds no build between
  those; checked in its `opencode-linux-x64` binaries, whose bundled run.ts is
  readable, November 2026). 1.2.1's `run` handler chdirs into `--dir` first of
  all (`process.chdir(args.dir)`, relative to the working directory; an empty
  value is ignored; with `--attach` the value goes to the server instead), and
  on failure prints `Error: Failed to change directory to <dir>` and exits 1;
  it prints reasoning parts only with `--thinking`. Help texts are 1.2.1's,
  byte for byte (yargs wraps them at 100 columns there). Not modelled: its
  first run on a fresh data folder prints "Performing one time database
  migration, may take a few minutes..." and `sqlite-migration:` lines on
  stdout before the events.
- default: 1.0.62's texts, options and output, and also `run --dir` and
  `run --thinking` as 1.2.1 reads them, so one install drives Skill-Runner
  editions before and after v0.7.3. Their help lines are not added (the help
  stays the real 1.0.61 text; orchestrators probe `run --help` for
  `--session` only), and reasoning is printed with or without `--thinking`, as
  the fake always did (docs/real-engines.md: reasoning echoes of the marker
  stay testable).
"""

from __future__ import annotations

import os

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
from turngate.engines.fake.frozen import value
from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.argv.tokens import Parsed

ENGINE = "opencode"
VERSION = "1.0.62"  # the default build's version line

_GLOBAL_OPTIONS = (
    Option("help", BOOLEAN, alias="h"),
    Option("version", BOOLEAN, alias="v"),
    Option("print-logs", BOOLEAN),
    Option("log-level", STRING, choices=("DEBUG", "INFO", "WARN", "ERROR")),
)
# What a build without resume lacks (`--fork` continues a session too, from 1.2.1).
_RESUME_OPTIONS = frozenset({"continue", "session", "fork"})
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
# What 1.2.1's run.ts adds to `run` (its builder, in its order after `attach`).
_DIR = Option("dir", STRING)
_THINKING = Option("thinking", BOOLEAN, default=False)
_RUN_OPTIONS_1_2_1 = (
    *_RUN_OPTIONS[:3],
    Option("fork", BOOLEAN),
    *_RUN_OPTIONS[3:],
    _DIR,
    Option("variant", STRING),
    _THINKING,
)
_TUI_OPTIONS_1_2_1 = (
    Option("port", NUMBER),
    Option("hostname", STRING),
    Option("mdns", BOOLEAN),
    Option("mdns-domain", STRING),
    Option("cors", ARRAY),
    Option("model", STRING, alias="m"),
    Option("continue", BOOLEAN, alias="c"),
    Option("session", STRING, alias="s"),
    Option("fork", BOOLEAN),
    Option("prompt", STRING),  # 1.2.1 dropped 1.0.62's -p alias
    Option("agent", STRING),
)
# opencode's other commands (hidden ones included); any other first word is the TUI's project.
_OTHER_COMMANDS_1_0_62 = frozenset(
    {
        "acp", "attach", "auth", "agent", "upgrade", "serve", "web", "models", "stats",
        "export", "import", "github", "pr", "mcp", "generate", "debug", "spawn",
    }
)  # fmt: skip
# 1.2.1's index.ts: `.completion("completion", …)` and its `.command(…)` list.
_OTHER_COMMANDS_1_2_1 = frozenset(
    {
        "completion", "acp", "mcp", "attach", "generate", "debug", "auth", "agent", "upgrade",
        "uninstall", "serve", "web", "models", "stats", "export", "import", "github", "pr", "session",
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
    "  -s, --session     session id to continue                              [string]\n",
)
# 1.2.1's help, captured from the real build (stdout, not a terminal; November 2026).
_RUN_HELP_1_2_1 = """\
opencode run [message..]

run opencode with a message

Positionals:
  message  message to send                                                     [array] [default: []]

Options:
  -h, --help        show help                                                              [boolean]
  -v, --version     show version number                                                    [boolean]
      --print-logs  print logs to stderr                                                   [boolean]
      --log-level   log level                   [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]
      --command     the command to run, use message for args                                [string]
  -c, --continue    continue the last session                                              [boolean]
  -s, --session     session id to continue                                                  [string]
      --fork        fork the session before continuing (requires --continue or --session)  [boolean]
      --share       share the session                                                      [boolean]
  -m, --model       model to use in the format of provider/model                            [string]
      --agent       agent to use                                                            [string]
      --format      format: default (formatted) or json (raw JSON events)
                                          [string] [choices: "default", "json"] [default: "default"]
  -f, --file        file(s) to attach to message                                             [array]
      --title       title for the session (uses truncated prompt if no value provided)      [string]
      --attach      attach to a running opencode server (e.g., http://localhost:4096)       [string]
      --dir         directory to run in, path on remote server if attaching                 [string]
      --port        port for the local server (defaults to random port if no value provided)[number]
      --variant     model variant (provider-specific reasoning effort, e.g., high, max, minimal)
                                                                                            [string]
      --thinking    show thinking blocks                                  [boolean] [default: false]
"""
_RUN_RESUME_HELP_LINES_1_2_1 = (
    "  -c, --continue    continue the last session                                              [boolean]\n"
    "  -s, --session     session id to continue                                                  [string]\n"
    "      --fork        fork the session before continuing (requires --continue or --session)  [boolean]\n",
)
_TOP_HELP_1_2_1 = """

Commands:
  opencode completion          generate shell completion script
  opencode acp                 start ACP (Agent Client Protocol) server
  opencode mcp                 manage MCP (Model Context Protocol) servers
  opencode [project]           start opencode tui                                          [default]
  opencode attach <url>        attach to a running opencode server
  opencode run [message..]     run opencode with a message
  opencode debug               debugging and troubleshooting tools
  opencode auth                manage credentials
  opencode agent               manage agents
  opencode upgrade [target]    upgrade opencode to the latest or a specific version
  opencode uninstall           uninstall opencode and remove all related files
  opencode serve               starts a headless opencode server
  opencode web                 start opencode server and open web interface
  opencode models [provider]   list all available models
  opencode stats               show token usage and cost statistics
  opencode export [sessionID]  export session data as JSON
  opencode import <file>       import session data from JSON file or URL
  opencode github              manage GitHub agent
  opencode pr <number>         fetch and checkout a GitHub PR branch, then run opencode
  opencode session             manage sessions

Positionals:
  project  path to start opencode in                                                        [string]

Options:
  -h, --help         show help                                                             [boolean]
  -v, --version      show version number                                                   [boolean]
      --print-logs   print logs to stderr                                                  [boolean]
      --log-level    log level                  [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]
      --port         port to listen on                                         [number] [default: 0]
      --hostname     hostname to listen on                           [string] [default: "127.0.0.1"]
      --mdns         enable mDNS service discovery (defaults hostname to 0.0.0.0)
                                                                          [boolean] [default: false]
      --mdns-domain  custom domain name for mDNS service (default: opencode.local)
                                                                [string] [default: "opencode.local"]
      --cors         additional domains to allow for CORS                      [array] [default: []]
  -m, --model        model to use in the format of provider/model                           [string]
  -c, --continue     continue the last session                                             [boolean]
  -s, --session      session id to continue                                                 [string]
      --fork         fork the session when continuing (use with --continue or --session)   [boolean]
      --prompt       prompt to use                                                          [string]
      --agent        agent to use                                                           [string]
"""
_TOP_RESUME_HELP_LINES_1_2_1 = (
    "  -c, --continue     continue the last session                                             [boolean]\n"
    "  -s, --session      session id to continue                                                 [string]\n"
    "      --fork         fork the session when continuing (use with --continue or --session)   [boolean]\n",
)
# 1.2.1's logo (src/cli/logo.ts), drawn by UI.logo: `_` a background cell, `^` a half block on the
# background, `~` a half block in the shadow colour; yargs trims each line of the usage text.
_LOGO_LEFT_1_2_1 = (" " * 19, "█▀▀█ █▀▀█ █▀▀█ █▀▀▄", "█__█ █__█ █^^^ █__█", "▀▀▀▀ █▀▀▀ ▀▀▀▀ ▀~~▀")
_LOGO_RIGHT_1_2_1 = (" " * 13 + "▄     ", "█▀▀▀ █▀▀█ █▀▀█ █▀▀█", "█___ █__█ █__█ █^^^", "▀▀▀▀ ▀▀▀▀ ▀▀▀▀ ▀▀▀▀")
_RESET = "\x1b[0m"


def _draw(row: str, fg: str, shadow: str, background: str) -> str:
    cells = {"_": background + " " + _RESET, "^": fg + background + "▀" + _RESET, "~": shadow + "▀" + _RESET}
    return "".join(" " if char == " " else cells.get(char, fg + char + _RESET) for char in row)


def _logo_1_2_1() -> str:
    # Bun.color("gray", "ansi") gives a colour code without its number in 1.2.1, as 1.0.61's logo had.
    left = (_LOGO_INK, "\x1b[38;5;235m", "\x1b[48;5;235m")
    right = (_RESET, "\x1b[38;5;238m", "\x1b[48;5;238m")
    rows = zip(_LOGO_LEFT_1_2_1, _LOGO_RIGHT_1_2_1, strict=True)
    return "\n" + "\n".join((_draw(a, *left) + " " + _draw(b, *right)).strip(" ") for a, b in rows)


@value
class _Build:
    """One opencode build as the fake reads its command line."""

    version: str
    run_options: tuple[Option, ...]
    tui_options: tuple[Option, ...]
    other_commands: frozenset[str]
    top_help: str
    run_help: str
    top_resume_lines: tuple[str, ...]  # the help lines a build without resume does not print
    run_resume_lines: tuple[str, ...]
    # 1.1.53 on: reasoning parts printed only with --thinking (run.ts: `args.thinking` gates them).
    thinking_gates_reasoning: bool
    # 1.2.1 on: `--fork requires --continue or --session`.
    checks_fork: bool


_BUILD_1_0_62 = _Build(
    version="1.0.62",
    run_options=_RUN_OPTIONS,
    tui_options=_TUI_OPTIONS,
    other_commands=_OTHER_COMMANDS_1_0_62,
    top_help=_LOGO + _TOP_HELP,
    run_help=_RUN_HELP,
    top_resume_lines=_RESUME_HELP_LINES,
    run_resume_lines=_RESUME_HELP_LINES,
    thinking_gates_reasoning=False,
    checks_fork=False,
)
# Builds `TURNGATE_EMULATE=opencode@<version>` selects (engine.py checks the name against these keys).
EMULATED_VERSIONS = {
    "1.0.62": _BUILD_1_0_62,
    "1.2.1": _Build(
        version="1.2.1",
        run_options=_RUN_OPTIONS_1_2_1,
        tui_options=_TUI_OPTIONS_1_2_1,
        other_commands=_OTHER_COMMANDS_1_2_1,
        top_help=_logo_1_2_1() + _TOP_HELP_1_2_1,
        run_help=_RUN_HELP_1_2_1,
        top_resume_lines=_TOP_RESUME_HELP_LINES_1_2_1,
        run_resume_lines=_RUN_RESUME_HELP_LINES_1_2_1,
        thinking_gates_reasoning=True,
        checks_fork=True,
    ),
}
# Unset TURNGATE_EMULATE: 1.0.62, taking 1.2.1's `run --dir` and `run --thinking` as well (the module
# docstring says why and what stays 1.0.62's).
_DEFAULT_BUILD = _Build(
    version="1.0.62",
    run_options=(*_RUN_OPTIONS, _DIR, _THINKING),
    tui_options=_TUI_OPTIONS,
    other_commands=_OTHER_COMMANDS_1_0_62,
    top_help=_LOGO + _TOP_HELP,
    run_help=_RUN_HELP,
    top_resume_lines=_RESUME_HELP_LINES,
    run_resume_lines=_RESUME_HELP_LINES,
    thinking_gates_reasoning=False,
    checks_fork=False,
)


def _build(emulate: str) -> _Build:
    return EMULATED_VERSIONS[emulate] if emulate else _DEFAULT_BUILD


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool, emulate: str = "") -> Invocation:
    """Parse opencode's argv (program name excluded), or raise `UsageError` as opencode fails.

    ``emulate``: the build to parse as (a key of EMULATED_VERSIONS); "" the default build.
    """
    build = _build(emulate)
    # yargs picks the command from the first positional it finds knowing only the global
    # options, then parses the whole line again with the command's options.
    first = read_argv(argv, _GLOBAL_OPTIONS).positionals
    command = first[0] if first else ""
    if command == "run":
        return _parse_run(argv, build, resumable, stdin_is_tty)
    return _parse_top(argv, command, build, resumable)


def top_help_text(resumable: bool, emulate: str = "") -> str:
    """`opencode --help`."""
    build = _build(emulate)
    return _without(build.top_help, resumable, build.top_resume_lines)


def run_help_text(resumable: bool, emulate: str = "") -> str:
    """`opencode run --help`: the probe an orchestrator reads for `--session`."""
    build = _build(emulate)
    return _without(build.run_help, resumable, build.run_resume_lines)


def _without(text: str, resumable: bool, resume_lines: tuple[str, ...]) -> str:
    if resumable:
        return text
    for lines in resume_lines:
        text = text.replace(lines, "")
    return text


def _options(command_options: tuple[Option, ...], resumable: bool) -> tuple[Option, ...]:
    kept = tuple(option for option in command_options if resumable or option.name not in _RESUME_OPTIONS)
    return _GLOBAL_OPTIONS + kept


def _parse_top(argv: list[str], command: str, build: _Build, resumable: bool) -> Invocation:
    if command in build.other_commands:
        message = f"turngate fake opencode: 'opencode {command}' is not simulated; use 'opencode run'\n"
        raise UsageError(message, 1)
    options = _options(build.tui_options, resumable)
    parsed = read_argv(argv, options)
    help_text = _without(build.top_help, resumable, build.top_resume_lines)
    answer = _help_or_version(parsed, help_text, build)
    if answer is not None:
        return answer
    # `[project]` takes one word; strict yargs calls any further word an unknown argument.
    if validation_message(parsed, options) or len(parsed.positionals) > 1:
        raise UsageError(help_text, 1)
    raise UsageError("turngate fake opencode: the interactive TUI is not simulated; use 'opencode run'\n", 1)


def _parse_run(argv: list[str], build: _Build, resumable: bool, stdin_is_tty: bool) -> Invocation:
    options = _options(build.run_options, resumable)
    parsed = read_argv(argv, options)
    help_text = _without(build.run_help, resumable, build.run_resume_lines)
    answer = _help_or_version(parsed, help_text, build)
    if answer is not None:
        return answer
    if validation_message(parsed, options):
        raise UsageError(help_text, 1)
    # 1.2.1's handler changes directory before anything else it checks.
    directory = _directory(parsed)
    prompt = _prompt(parsed)
    if not prompt and stdin_is_tty:
        # opencode appends stdin to the message when stdin is not a terminal, then needs text.
        raise UsageError(_ERROR_PREFIX + "You must provide a message or a command\n", 1)
    if build.checks_fork and parsed.flag("fork"):
        if not (parsed.flag("continue") or parsed.text("session")):
            raise UsageError(_ERROR_PREFIX + "--fork requires --continue or --session\n", 1)
        raise UsageError("turngate fake opencode: 'run --fork' is not simulated\n", 1)
    reasoning = ("shown" if parsed.flag("thinking") else "hidden") if build.thinking_gates_reasoning else ""
    return run_invocation(parsed, ENGINE, prompt, directory, reasoning)


def run_invocation(
    parsed: Parsed,
    engine: str,
    prompt: str,
    directory: str | None,
    reasoning: str,
    auto_flags: tuple[str, ...] = (),
) -> Invocation:
    """The rest of a checked `run` command line, as opencode reads it and its fork kilo too: the
    model (provider/model), the session, the output format, the agent."""
    model = parsed.text("model")
    if model and "/" not in model:
        raise UsageError(f"{_ERROR_PREFIX}invalid model '{model}': expected provider/model\n", 1)
    # `--continue` is checked before `--session`; an empty `--session` starts a new session.
    resume_latest = parsed.flag("continue")
    return Invocation(
        engine=engine,
        action="run",
        prompt=prompt or None,
        prompt_from_stdin=not prompt,
        resume_id=None if resume_latest else parsed.text("session") or None,
        resume_latest=resume_latest,
        model=model or None,
        output_format=_output_format(parsed),
        auto_flags=auto_flags,
        thinking=parsed.flag("thinking"),
        profile=parsed.text("agent") or None,
        directory=directory,
        reasoning=reasoning,
    )


def _directory(parsed: Parsed) -> str | None:
    """Where `run --dir` moves the turn (None: where it was started), or the refusal 1.2.1 prints.

    run.ts: `if (!args.dir) return` (absent, empty, `--no-dir`); with `--attach` the directory is
    the server's to resolve; else `process.chdir(args.dir)`, whose failure it reports as
    `Failed to change directory to <dir>` and exit 1. A repeated `--dir` is an array to yargs,
    which chdir refuses: the message shows it joined with commas, as JavaScript prints an array.
    """
    given = [value for value in parsed.values.get("dir", []) if isinstance(value, str)]
    if not given or given == [""] or parsed.text("attach"):
        return None
    shown = ",".join(given)
    if len(given) > 1 or not _enterable(given[0]):
        raise UsageError(f"{_ERROR_PREFIX}Failed to change directory to {shown}\n", 1)
    return given[0]


def _enterable(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.X_OK)


def _help_or_version(parsed: Parsed, help_text: str, build: _Build) -> Invocation | None:
    """yargs answers --help (first) and --version before validating or running anything."""
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_text)
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=build.version + "\n")
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
