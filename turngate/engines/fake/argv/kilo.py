"""The `kilo` command line (Kilo CLI 7.7.7, `@kilocode/cli`), read as its yargs setup reads it.

Kilo is a fork of opencode, and its `run [message..]` command is opencode
1.2.1's with more options: the same strict yargs CLI, the same `--dir`
(`process.chdir` first of all, `Failed to change directory to <dir>` and exit 1
when it cannot), `--thinking` (reasoning printed only with it: `h = interactive ?
thinking ?? true : thinking ?? false` in the bundled run command), `--format`,
`--command`, `-s/--session`, `-c/--continue`, `--fork`. So this module reuses
the opencode fake's readings (`turngate.engines.fake.argv.opencode`) and adds what
kilo adds: `--auto` (approve every permission not explicitly denied: Skill-Runner
v0.7.9 passes it), `--cloud-fork`, `--pure`, `-p/--password`, `-u/--username`,
`-i/--interactive`.

What differs from opencode, from the real 7.7.7 captured in November 2026
(`corpus/kilo/`, the research notes' `captures/kilo/`):

- help goes to **stderr**, and `kilo --help` starts with a log line (`INFO
  <UTC time> +<ms>ms service=default version=7.7.7 command=--help
  process_role=main run_id=<uuid> opencode`) before the block-letter banner; `kilo
  run --help` prints the `run` help alone (the capture `run-help.txt` has no log
  line, byte for byte the same as an unknown option's output);
- an unknown option or value prints the `run` help on stderr and exits 1,
  with no "Unknown argument" line (as opencode 1.0.62);
- `--version` prints `7.7.7` on stdout;
- errors are opencode's UI.error: a bold bright red `Error: ` even when stderr
  is not a terminal (a bad `--dir`, and `Session not found` for an unknown
  `--session`: `turngate.engines.fake.engine`).

Not simulated (a `turngate fake kilo: ... is not simulated` line, exit 1): the
TUI, the other commands, `run --fork`, `run --cloud-fork`, `run
--interactive`. Not modelled: permissions `--auto` would otherwise ask for (the
real run rejects them and ends with "run ended with an auto-rejected
permission"); the fake plays its script with or without `--auto` (the call log's
argv shows which).
"""

from __future__ import annotations

import os
import time

# kilo is opencode's fork: the same readings of `--dir`, the message words and `--format`.
from turngate.engines.fake.argv.opencode import _ERROR_PREFIX, _directory, _prompt, run_invocation
from turngate.engines.fake.argv.tokens import (
    ARRAY,
    BOOLEAN,
    NUMBER,
    STRING,
    Option,
    read_argv,
    validation_message,
)
from turngate.engines.fake.invocation import Invocation, UsageError
from turngate.engines.fake.sessions import uuid_shaped

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.argv.tokens import Parsed

ENGINE = "kilo"
VERSION = "7.7.7"

_GLOBAL_OPTIONS = (
    Option("help", BOOLEAN, alias="h"),
    Option("version", BOOLEAN, alias="v"),
    Option("print-logs", BOOLEAN),
    Option("log-level", STRING, choices=("DEBUG", "INFO", "WARN", "ERROR")),
    Option("pure", BOOLEAN),
)
# What a build without resume lacks: every option that continues a session.
_RESUME_OPTIONS = frozenset({"continue", "session", "fork", "cloud-fork"})
# `kilo run`'s options, in its help's order.
_RUN_OPTIONS = (
    Option("command", STRING),
    Option("continue", BOOLEAN, alias="c"),
    Option("session", STRING, alias="s"),
    Option("fork", BOOLEAN),
    Option("cloud-fork", BOOLEAN),
    Option("share", BOOLEAN),
    Option("model", STRING, alias="m"),
    Option("agent", STRING),
    Option("format", STRING, choices=("default", "json"), default="default"),
    Option("file", ARRAY, alias="f"),
    Option("title", STRING),
    Option("attach", STRING),
    Option("password", STRING, alias="p"),
    Option("username", STRING, alias="u"),
    Option("dir", STRING),
    Option("port", NUMBER),
    Option("variant", STRING),
    Option("thinking", BOOLEAN),
    Option("interactive", BOOLEAN, alias="i", default=False),
    Option("auto", BOOLEAN, default=False),
)
# The default command, `kilo [project]`: the TUI.
_TUI_OPTIONS = (
    Option("port", NUMBER),
    Option("hostname", STRING),
    Option("mdns", BOOLEAN),
    Option("mdns-domain", STRING),
    Option("cors", ARRAY),
    Option("model", STRING, alias="m"),
    Option("continue", BOOLEAN, alias="c"),
    Option("session", STRING, alias="s"),
    Option("fork", BOOLEAN),
    Option("cloud-fork", BOOLEAN),
    Option("worktree", STRING),
    Option("prompt", STRING),
    Option("agent", STRING),
    Option("auto", BOOLEAN, default=False),
    Option("mini", BOOLEAN, default=False),
    Option("replay", BOOLEAN),  # declared as `--no-replay`: yargs reads it as the negation of `replay`
    Option("replay-limit", NUMBER),
)
# 7.7.7's other commands and their aliases, as its help lists them; any other first word is the TUI's project.
_OTHER_COMMANDS = frozenset(
    {
        "completion", "acp", "mcp", "attach", "debug", "auth", "providers", "agent", "upgrade",
        "uninstall", "serve", "models", "stats", "export", "import", "github", "pr", "session", "plugin",
        "plug", "db", "console", "cloud", "roll-call", "profile", "remote", "daemon", "config",
        "worktree", "help",
    }
)  # fmt: skip
# The help's usage text is kilo's block-letter banner (rows as printed: some end in spaces).
_BANNER = (
    "██  ██ ██🬺🬏   ██  ██   ██🬺🬏     ████ ██     ██🬺🬏   ",
    "████🬺🬏 ~~██   ██  ~~ ██~~██   ██~~~~ ██     ~~██   ",
    "██  ██ ██████ 🬁🬬████ 🬁🬬██~~   🬁🬬████ 🬁🬬████ ██████ ",
    "~~  ~~ ~~~~~~   ~~~~   ~~       ~~~~   ~~~~ ~~~~~~",
)
# 7.7.7's help texts, captured from the real build (stderr, not a terminal; November 2026), after
# the banner and its blank line.
_TOP_HELP = """\
Commands:
  kilo completion          generate shell completion script
  kilo acp                 start ACP (Agent Client Protocol) server
  kilo mcp                 manage MCP (Model Context Protocol) servers
  kilo [project]           start kilo tui                                                  [default]
  kilo attach <url>        attach to a running kilo server
  kilo run [message..]     run kilo with a message
  kilo debug               debugging and troubleshooting tools
  kilo auth                manage AI providers and credentials                  [aliases: providers]
  kilo agent               manage agents
  kilo upgrade [target]    upgrade kilo to the latest or a specific version
  kilo uninstall           uninstall kilo and remove all related files
  kilo serve               starts a headless kilo server
  kilo models [provider]   list all available models
  kilo stats               show token usage and cost statistics
  kilo export [sessionID]  export session data as JSON
  kilo import <file>       import session data from JSON file or URL
  kilo github              manage GitHub agent
  kilo pr                  manage pull requests
  kilo session             manage sessions
  kilo plugin <module>     install plugin and update config                          [aliases: plug]
  kilo db                  database tools
  kilo console             open or stop the local Kilo Console (deprecated)
  kilo cloud               run Cloud Agent tasks
  kilo roll-call <filter>  batch-test text models matching a filter for connectivity and latency
  kilo profile             show Kilo account profile
  kilo remote              enable remote connection for real-time session relay
  kilo daemon              manage the local kilo daemon
  kilo config              configuration tools
  kilo worktree            manage git worktrees
  kilo help [command]      show full CLI reference

Positionals:
  project  path to start kilo in                                                            [string]

Options:
  -h, --help          show help                                                            [boolean]
  -v, --version       show version number                                                  [boolean]
      --print-logs    print logs to stderr                                                 [boolean]
      --log-level     log level                 [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]
      --pure          run without external plugins                                         [boolean]
      --port          port to listen on                                        [number] [default: 0]
      --hostname      hostname to listen on                          [string] [default: "127.0.0.1"]
      --mdns          enable mDNS service discovery (defaults hostname to 0.0.0.0)
                                                                          [boolean] [default: false]
      --mdns-domain   custom domain name for mDNS service (default: kilo.local)
                                                                    [string] [default: "kilo.local"]
      --cors          additional domains to allow for CORS                     [array] [default: []]
  -m, --model         model to use in the format of provider/model                          [string]
  -c, --continue      continue the last session                                            [boolean]
  -s, --session       session id to continue                                                [string]
      --fork          fork the session when continuing (use with --continue or --session)  [boolean]
      --cloud-fork    fetch session from cloud and continue locally (use with --session)   [boolean]
      --worktree      create (or reuse) a git worktree with this name and start kilo there  [string]
      --prompt        prompt to use                                                         [string]
      --agent         agent to use                                                          [string]
      --auto          auto-approve permissions that are not explicitly denied (dangerous!)
                                                                          [boolean] [default: false]
      --mini          start the minimal interactive interface             [boolean] [default: false]
      --no-replay     disable mini session history replay on resume and after resize       [boolean]
      --replay-limit  cap visible mini replay to the newest N messages                      [number]
"""
_RUN_HELP = """\
kilo run [message..]

run kilo with a message

Positionals:
  message  message to send                                                     [array] [default: []]

Options:
  -h, --help         show help                                                             [boolean]
  -v, --version      show version number                                                   [boolean]
      --print-logs   print logs to stderr                                                  [boolean]
      --log-level    log level                  [string] [choices: "DEBUG", "INFO", "WARN", "ERROR"]
      --pure         run without external plugins                                          [boolean]
      --command      the command to run, use message for args                               [string]
  -c, --continue     continue the last session                                             [boolean]
  -s, --session      session id to continue                                                 [string]
      --fork         fork the session before continuing (requires --continue or --session) [boolean]
      --cloud-fork   fetch session from cloud and continue locally (use with --session)    [boolean]
      --share        share the session                                                     [boolean]
  -m, --model        model to use in the format of provider/model                           [string]
      --agent        agent to use                                                           [string]
      --format       format: default (formatted) or json (raw JSON events)
                                          [string] [choices: "default", "json"] [default: "default"]
  -f, --file         file(s) to attach to message                                            [array]
      --title        title for the session (uses truncated prompt if no value provided)     [string]
      --attach       attach to a running kilo server (e.g., http://localhost:4096)          [string]
  -p, --password     basic auth password (defaults to KILO_SERVER_PASSWORD)                 [string]
  -u, --username     basic auth username (defaults to KILO_SERVER_USERNAME or 'kilo')       [string]
      --dir          directory to run in, path on remote server if attaching                [string]
      --port         port for the local server (defaults to random port if no value provided)
                                                                                            [number]
      --variant      model variant (provider-specific reasoning effort, e.g., high, max, minimal)
                                                                                            [string]
      --thinking     show thinking blocks                                                  [boolean]
  -i, --interactive  run in direct interactive split-footer mode          [boolean] [default: false]
      --auto         auto-approve permissions that are not explicitly denied (dangerous!)
                                                                          [boolean] [default: false]
"""
# The help lines of the options a build without resume lacks (the same labels in both helps).
_RESUME_LABELS = ("  -c, --continue ", "  -s, --session ", "      --fork ", "      --cloud-fork ")


def _with_banner(text: str) -> str:
    return "\n".join(_BANNER) + "\n\n" + text


def top_help_text(resumable: bool) -> str:
    """`kilo --help`, after its log line."""
    return _without_resume(_with_banner(_TOP_HELP), resumable)


def run_help_text(resumable: bool) -> str:
    """`kilo run --help`, and what an unknown option of `run` prints: the probe an orchestrator reads
    for `--session` (Skill-Runner v0.7.9 reads `kilo --help`, which has it too)."""
    return _without_resume(_with_banner(_RUN_HELP), resumable)


def _without_resume(text: str, resumable: bool) -> str:
    if resumable:
        return text
    lines = text.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith(_RESUME_LABELS))


def log_line(argv: list[str]) -> str:
    """The log line 7.7.7 writes on stderr before its top-level help: UTC time to the second, the
    milliseconds since the logger started, the command line, a fresh run id. With
    TURNGATE_FAKE_EPOCH_MS (reproducible output) the time is that epoch and the run id derives from it."""
    epoch = os.environ.get("TURNGATE_FAKE_EPOCH_MS", "")
    now_ms = int(epoch) if epoch.isdigit() else int(time.time() * 1000)
    since = 1 if epoch.isdigit() else max(1, int(time.process_time() * 1000))
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now_ms // 1000))
    run_id = uuid_shaped(f"kilo:log:{now_ms}:{os.getpid() if not epoch.isdigit() else 0}", 4)
    return (
        f"INFO  {stamp} +{since}ms service=default version={VERSION} command={' '.join(argv)}"
        f" process_role=main run_id={run_id} opencode\n"
    )


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool, emulate: str = "") -> Invocation:
    """Parse kilo's argv (program name excluded), or raise `UsageError` as kilo 7.7.7 fails.

    ``emulate``: unused (one build); the engine refuses any TURNGATE_EMULATE for kilo.
    """
    # yargs picks the command from the first positional it finds knowing only the global options.
    first = read_argv(argv, _GLOBAL_OPTIONS).positionals
    command = first[0] if first else ""
    if command == "run":
        return _parse_run(argv, resumable, stdin_is_tty)
    return _parse_top(argv, command, resumable)


def _options(command_options: tuple[Option, ...], resumable: bool) -> tuple[Option, ...]:
    kept = tuple(option for option in command_options if resumable or option.name not in _RESUME_OPTIONS)
    return _GLOBAL_OPTIONS + kept


def _parse_top(argv: list[str], command: str, resumable: bool) -> Invocation:
    if command in _OTHER_COMMANDS:
        raise UsageError(f"turngate fake kilo: 'kilo {command}' is not simulated; use 'kilo run'\n", 1)
    options = _options(_TUI_OPTIONS, resumable)
    parsed = read_argv(argv, options)
    help_text = top_help_text(resumable)
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_text, text_fd=2, warnings=(log_line(argv),))
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=VERSION + "\n")
    if validation_message(parsed, options) or len(parsed.positionals) > 1:
        raise UsageError(help_text, 1)
    raise UsageError("turngate fake kilo: the interactive TUI is not simulated; use 'kilo run'\n", 1)


def _parse_run(argv: list[str], resumable: bool, stdin_is_tty: bool) -> Invocation:
    options = _options(_RUN_OPTIONS, resumable)
    parsed = read_argv(argv, options)
    help_text = run_help_text(resumable)
    if parsed.flag("help"):
        return Invocation(engine=ENGINE, action="help", text=help_text, text_fd=2)
    if parsed.flag("version"):
        return Invocation(engine=ENGINE, action="version", text=VERSION + "\n")
    if validation_message(parsed, options):
        raise UsageError(help_text, 1)
    # The run handler changes directory before anything else it checks, as opencode 1.2.1's.
    directory = _directory(parsed)
    prompt = _prompt(parsed)
    if not prompt and stdin_is_tty:
        raise UsageError(_ERROR_PREFIX + "You must provide a message or a command\n", 1)
    _refuse_unsimulated(parsed)
    auto = (parsed.flag_spelling("auto"),) if parsed.flag("auto") else ()
    # `run` prints reasoning only with --thinking (its `thinking ?? false`).
    reasoning = "shown" if parsed.flag("thinking") else "hidden"
    return run_invocation(parsed, ENGINE, prompt, directory, reasoning, auto)


def _refuse_unsimulated(parsed: Parsed) -> None:
    if parsed.flag("fork"):
        if not (parsed.flag("continue") or parsed.text("session")):
            raise UsageError(_ERROR_PREFIX + "--fork requires --continue or --session\n", 1)
        raise UsageError("turngate fake kilo: 'run --fork' is not simulated\n", 1)
    for name in ("cloud-fork", "interactive"):
        if parsed.flag(name):
            raise UsageError(f"turngate fake kilo: 'run --{name}' is not simulated\n", 1)
