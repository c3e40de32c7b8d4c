"""The `codex` command line (codex-cli 0.99.0), read as its clap parser reads it.

Only `codex exec [OPTIONS] [PROMPT]` and `codex exec resume [OPTIONS]
[SESSION_ID] [PROMPT]` run a turn; the rest answers --help/--version or is
refused. The parse follows clap 4 step by step, because orchestrators show
its messages to people and tests compare them byte for byte (every shape
below was checked against the real codex-cli 0.99.0):

- each command reads its own words up to its subcommand word; `exec` options
  go before `resume`, and after it only `resume`'s own (smaller) set is known;
- `--help`/`-h` (long/short help) and `--version` answer at once, so an error
  later on the line is never reached;
- unknown, repeated or malformed arguments fail at once, naming the first;
  conflicts (`--full-auto` with `--yolo`) are checked after the whole line,
  the innermost command first;
- error texts end with clap's "Usage:" line, which lists the arguments used
  so far when clap builds it that way, and suggestions come from strsim's
  Jaro similarity above 0.7, as in clap.
"""

from __future__ import annotations

from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

ENGINE = "codex"
VERSION = "codex-cli 0.99.0"
# clap names a subcommand after its parent in its version line: `codex exec -V`.
_EXEC_VERSION = "codex-cli-exec 0.99.0"
# Builds the fake can emulate (`TURNGATE_EMULATE=codex@0.169.0`): version → whether it takes --full-auto.
# 0.169.0 dropped --full-auto (clap: "unexpected argument"); 0.146.1 still takes it (warning on stderr).
EMULATED_VERSIONS = {"0.99.0": True, "0.146.1": True, "0.169.0": False}
# What the builds that still take --full-auto but deprecate it write on stderr (0.146.1, real capture).
_FULL_AUTO_DEPRECATED = {
    "0.146.1": "warning: `--full-auto` is deprecated; use `--sandbox workspace-write` instead.\n"
}
# The usage line codex exec prints from 0.169.0 on (the subcommand moved into its own line).
_EXEC_USAGE_0_169 = "codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]"
_NO_PROMPT = "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.\n"
_FULL_AUTO = "full-auto"
_BYPASS = "dangerously-bypass-approvals-and-sandbox"


class _Arg:
    """One clap argument: `--long`, `-s`, hidden `--alias`es, and its value if it takes one."""

    __slots__ = ("aliases", "choices", "conflicts", "long", "many", "repeatable", "short", "value_name")

    def __init__(
        self,
        long: str,
        short: str = "",
        *,
        value_name: str = "",
        choices: tuple[str, ...] = (),
        many: bool = False,
        repeatable: bool = False,
        aliases: tuple[str, ...] = (),
        conflicts: str = "",
    ) -> None:
        self.long = long
        self.short = short
        self.value_name = value_name
        self.choices = choices
        # `num_args = 1..`: takes every following word up to the next option.
        self.many = many
        # `ArgAction::Append`; any other argument given twice is an error in clap 4.
        self.repeatable = repeatable
        self.aliases = aliases
        self.conflicts = conflicts

    def shown(self) -> str:
        """How clap names the argument in messages: `--profile <CONFIG_PROFILE>`, `--image <FILE>...`."""
        if not self.value_name:
            return f"--{self.long}"
        return f"--{self.long} <{self.value_name}>" + ("..." if self.many else "")


_HELP = _Arg("help", "h")
_VERSION = _Arg("version", "V")
_CONFIG = _Arg("config", "c", value_name="key=value", repeatable=True)
_ENABLE = _Arg("enable", value_name="FEATURE", repeatable=True)
_DISABLE = _Arg("disable", value_name="FEATURE", repeatable=True)
_IMAGES = _Arg("image", "i", value_name="FILE", many=True, repeatable=True)
_MODEL = _Arg("model", "m", value_name="MODEL")
_OSS = _Arg("oss")
_LOCAL_PROVIDER = _Arg("local-provider", value_name="OSS_PROVIDER")
_SANDBOX = _Arg(
    "sandbox", "s", value_name="SANDBOX_MODE", choices=("read-only", "workspace-write", "danger-full-access")
)
_PROFILE = _Arg("profile", "p", value_name="CONFIG_PROFILE")
_FULL_AUTO_ARG = _Arg(_FULL_AUTO, conflicts=_BYPASS)
_BYPASS_ARG = _Arg(_BYPASS, aliases=("yolo",), conflicts=_FULL_AUTO)
_CD = _Arg("cd", "C", value_name="DIR")
_ADD_DIR = _Arg("add-dir", value_name="DIR", repeatable=True)
_SKIP_GIT_REPO_CHECK = _Arg("skip-git-repo-check")
_EPHEMERAL = _Arg("ephemeral")
_JSON = _Arg("json", aliases=("experimental-json",))

_APPROVAL = _Arg(
    "ask-for-approval",
    "a",
    value_name="APPROVAL_POLICY",
    choices=("untrusted", "on-failure", "on-request", "never"),
)

# In clap's keymap order (the help's order), which breaks ties between suggestions.
_ROOT_ARGS = (
    _CONFIG, _ENABLE, _DISABLE, _IMAGES, _MODEL, _OSS, _LOCAL_PROVIDER, _PROFILE, _SANDBOX, _APPROVAL,
    _FULL_AUTO_ARG, _BYPASS_ARG, _CD, _Arg("search"), _ADD_DIR, _Arg("no-alt-screen"), _HELP, _VERSION,
)  # fmt: skip
_EXEC_ARGS = (
    _CONFIG, _ENABLE, _DISABLE, _IMAGES, _MODEL, _OSS, _LOCAL_PROVIDER, _SANDBOX, _PROFILE,
    _FULL_AUTO_ARG, _BYPASS_ARG, _CD, _SKIP_GIT_REPO_CHECK, _ADD_DIR, _EPHEMERAL,
    _Arg("output-schema", value_name="FILE"),
    _Arg("color", value_name="COLOR", choices=("always", "never", "auto")),
    _JSON, _Arg("output-last-message", "o", value_name="FILE"), _HELP, _VERSION,
)  # fmt: skip
_RESUME_ARGS = (
    _CONFIG, _Arg("last"), _Arg("all"), _ENABLE, _DISABLE,
    _Arg("image", "i", value_name="FILE", repeatable=True), _MODEL,
    _FULL_AUTO_ARG, _BYPASS_ARG, _SKIP_GIT_REPO_CHECK, _EPHEMERAL, _JSON, _HELP,
)  # fmt: skip


class _Command:
    """One clap command: its arguments, positionals, subcommand words, usage and help."""

    __slots__ = (
        "children", "group", "group_usage", "long_help", "longs", "name", "positionals", "short_help",
        "shorts", "smart_usage", "subcommands", "usage", "version",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        args: Sequence[_Arg],
        positionals: tuple[str, ...],
        subcommands: Iterable[str],
        *,
        usage: str,
        helps: tuple[str, str],
        version: str = "",
        group: tuple[str, ...] = (),
        smart_usage: bool = True,
    ) -> None:
        self.name = name
        # An unknown argument's error shows the line as given (0.99.0) or the command's usage (0.169.0).
        self.smart_usage = smart_usage
        self.positionals = positionals
        # Word → subcommand name, aliases included (`e` → `exec`), in clap's order.
        self.subcommands: dict[str, str] = {}
        for entry in subcommands:
            canonical, *aliases = entry.split()
            for word in (canonical, *aliases):
                self.subcommands[word] = canonical
        # The subcommands simulated here, for help and for "tip: 'resume --last' exists".
        self.children: dict[str, _Command] = {}
        self.longs: dict[str, _Arg] = {}
        self.shorts: dict[str, _Arg] = {}
        for arg in args:
            for long in (arg.long, *arg.aliases):
                self.longs[long] = arg
            if arg.short:
                self.shorts[arg.short] = arg
        # The full usage line(s), as clap prints them after "Usage: ".
        self.usage = usage
        self.long_help, self.short_help = helps
        self.version = version
        # The argument group clap derives from the command's own struct (flattened options
        # are not in it), and how a usage line shows it: `<SESSION_ID|--last|...>`.
        self.group = frozenset(group)
        shown = (member if member in positionals else self.longs[member].shown() for member in group)
        self.group_usage = f"<{'|'.join(shown)}>"


_EXEC_GROUP = (
    "image", "model", "oss", "local-provider", "sandbox", "profile", _FULL_AUTO, _BYPASS, "cd",
    "skip-git-repo-check", "add-dir", "ephemeral", "output-schema", "color", "json", "output-last-message",
    "PROMPT",
)  # fmt: skip
_ROOT_SUBCOMMANDS = (
    "exec e", "review", "login", "logout", "mcp", "mcp-server", "app-server", "completion", "sandbox",
    "debug", "apply a", "resume", "fork", "cloud", "features", "help",
)  # fmt: skip
_COMMANDS: dict[tuple[bool, str], tuple[_Command, _Command, _Command]] = {}


def _commands(resumable: bool, version: str = "0.99.0") -> tuple[_Command, _Command, _Command]:
    """codex, codex exec and codex exec resume; without resume there is no `resume` anywhere.

    ``version`` is the emulated build: its version lines, and without --full-auto from 0.169.0.
    """
    key = (resumable, version)
    if key not in _COMMANDS:
        hidden = () if resumable else ("resume",)
        full_auto = EMULATED_VERSIONS[version]

        def kept(args: tuple[_Arg, ...]) -> tuple[_Arg, ...]:
            return args if full_auto else tuple(arg for arg in args if arg is not _FULL_AUTO_ARG)

        exec_group = _EXEC_GROUP if full_auto else tuple(name for name in _EXEC_GROUP if name != _FULL_AUTO)
        root = _Command(
            "codex",
            kept(_ROOT_ARGS),
            ("PROMPT",),
            (entry for entry in _ROOT_SUBCOMMANDS if entry not in hidden),
            # codex overrides clap's usage for the top level.
            usage="codex [OPTIONS] [PROMPT]\n       codex [OPTIONS] <COMMAND> [ARGS]",
            helps=_without_resume((_ROOT_LONG_HELP, _ROOT_SHORT_HELP), resumable, _ROOT_RESUME_LINES),
            version=VERSION.replace("0.99.0", version),
            smart_usage=full_auto,
        )
        exec_ = _Command(
            "codex exec",
            kept(_EXEC_ARGS),
            ("PROMPT",),
            (entry for entry in ("resume", "review", "help") if entry not in hidden),
            usage="codex exec [OPTIONS] [PROMPT] [COMMAND]" if full_auto else _EXEC_USAGE_0_169,
            helps=_without_resume((_EXEC_LONG_HELP, _EXEC_SHORT_HELP), resumable, _EXEC_RESUME_LINE),
            version=_EXEC_VERSION.replace("0.99.0", version),
            group=exec_group,
            smart_usage=full_auto,
        )
        resume = _Command(
            "codex exec resume",
            kept(_RESUME_ARGS),
            ("SESSION_ID", "PROMPT"),
            (),
            usage="codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]",
            helps=(_RESUME_LONG_HELP, _RESUME_SHORT_HELP),
            group=("SESSION_ID", "last", "all", "image", "PROMPT"),
            smart_usage=full_auto,
        )
        root.children = {"exec": exec_}
        exec_.children = {"resume": resume} if resumable else {}
        _COMMANDS[key] = (root, exec_, resume)
    return _COMMANDS[key]


def _without_resume(helps: tuple[str, str], resumable: bool, lines: str) -> tuple[str, str]:
    if resumable:
        return helps
    return (helps[0].replace(lines, ""), helps[1].replace(lines, ""))


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool, emulate: str = "0.99.0") -> Invocation:
    """Parse codex's argv (program name excluded), or raise `UsageError` as codex fails.

    ``emulate``: the codex build to parse as (a key of EMULATED_VERSIONS).
    """
    try:
        return _parse(argv, resumable, stdin_is_tty, emulate)
    except _Printed as printed:
        return Invocation(engine=ENGINE, action=printed.action, text=printed.text)


class _Printed(Exception):
    """clap printed help or a version and exits 0, however the line goes on."""

    def __init__(self, action: str, text: str) -> None:
        super().__init__(action)
        self.action = action
        self.text = text


def _parse(argv: list[str], resumable: bool, stdin_is_tty: bool, emulate: str) -> Invocation:
    root_command, exec_command, resume_command = _commands(resumable, emulate)
    root = _Reader(root_command, argv, 0).read()
    if root.subcommand == "help":
        _print_help_of(root_command, argv[root.subcommand_at + 1 :])
    if root.subcommand != "exec":
        _check_conflicts(root)
        _check_config_overrides(root)
        what = f"'codex {root.subcommand}'" if root.subcommand else "the interactive TUI"
        raise UsageError(f"turngate fake codex: {what} is not simulated; use 'codex exec'\n", 2)
    exec_ = _Reader(exec_command, argv, root.subcommand_at + 1).read()
    resume = None
    if exec_.subcommand == "help":
        _print_help_of(exec_command, argv[exec_.subcommand_at + 1 :])
    elif exec_.subcommand == "review":
        raise UsageError("turngate fake codex: 'codex exec review' is not simulated\n", 2)
    elif exec_.subcommand == "resume":
        resume = _Reader(resume_command, argv, exec_.subcommand_at + 1).read()
        _check_conflicts(resume)
        _require_session_or_last(resume)
    _check_conflicts(exec_)
    _check_conflicts(root)
    _check_config_overrides(root, exec_, resume)
    return _invocation(exec_, resume, stdin_is_tty, emulate)


class _Matches:
    """What one command read: arguments used (first-use order), values, positionals."""

    __slots__ = (
        "command", "given", "pending_positional", "positionals", "subcommand", "subcommand_at", "used",
        "values",
    )  # fmt: skip

    def __init__(self, command: _Command) -> None:
        self.command = command
        # Arguments clap has recorded, in first-use order (an option waiting for its values,
        # or the last positional read, is not recorded yet: see `_Reader`).
        self.used: list[_Arg] = []
        self.values: dict[str, list[str]] = {}
        # (long name, spelling) of every argument occurrence, in order.
        self.given: list[tuple[str, str]] = []
        self.positionals: list[str] = []
        self.pending_positional = False
        self.subcommand = ""
        self.subcommand_at = 0

    def note(self, arg: _Arg, spelling: str) -> None:
        if arg not in self.used:
            self.used.append(arg)
        self.given.append((arg.long, spelling))

    def uses(self, long: str) -> bool:
        return any(arg.long == long for arg in self.used)

    def value(self, long: str) -> str | None:
        values = self.values.get(long)
        return values[-1] if values else None

    def recorded_positionals(self) -> int:
        return len(self.positionals) - self.pending_positional


class _Reader:
    """One command's pass over argv, from `start` to the end or to its subcommand word.

    Like clap, it records a flag at once but holds an option given its value in
    the following words (and the last positional) as pending until the next
    argument, the end of the line or the subcommand word. Recording it then
    is what checks "used twice", the value's choices and "a value is
    required"; an unknown argument reported first leaves it unrecorded.
    """

    __slots__ = (
        "argv", "command", "index", "matches", "pending", "pending_spelling", "pending_values", "trailing",
    )  # fmt: skip

    def __init__(self, command: _Command, argv: Sequence[str], start: int) -> None:
        self.command = command
        self.argv = argv
        self.index = start
        self.matches = _Matches(command)
        self.trailing = False  # after "--": only positionals
        self.pending: _Arg | None = None
        self.pending_spelling = ""
        self.pending_values: list[str] = []

    def read(self) -> _Matches:
        while self.index < len(self.argv):
            word = self.argv[self.index]
            if self.trailing or word == "-" or not word.startswith("-"):
                if self._positional(word):
                    break
            elif word == "--":
                self.trailing = True
            elif word.startswith("--"):
                self._long(word)
            else:
                self._short(word)
            self.index += 1
        self._record_pending()
        return self.matches

    def _positional(self, word: str) -> bool:
        """Take a positional (or a pending option's value); True at the subcommand word."""
        pending = self.pending
        if pending is not None and not self.trailing and (pending.many or not self.pending_values):
            self.pending_values.append(word)
            return False
        self._record_pending()
        command = self.command
        if not self.trailing and word in command.subcommands:
            self.matches.subcommand = command.subcommands[word]
            self.matches.subcommand_at = self.index
            return True
        if len(self.matches.positionals) == len(command.positionals):
            raise _extra_positional(self.matches, word, self.trailing)
        self.matches.positionals.append(word)
        self.matches.pending_positional = True
        return False

    def _long(self, word: str) -> None:
        name, equals, attached = word[2:].partition("=")
        arg = self.command.longs.get(name)
        if arg is None:
            self._record_pending_quietly()
            raise _unknown_long(self.matches, name, self.argv[self.index + 1 :])
        if not arg.value_name and equals:
            # Raised before the pending option is recorded, so the usage leaves it out.
            raise _error(
                f"unexpected value '{attached}' for '{arg.shown()}' found; no more were expected",
                usage=_usage_with_groups(self.matches, arg),
            )
        self._take(arg, "--" + name, attached if equals else None, long_help=True)

    def _short(self, word: str) -> None:
        for at in range(1, len(word)):
            arg = self.command.shorts.get(word[at])
            if arg is None:
                self._record_pending_quietly()
                raise _error(
                    f"unexpected argument '-{word[at]}' found",
                    tip=f"to pass '-{word[at]}' as a value, use '-- -{word[at]}'",
                    usage=self.command.usage,
                )
            # The rest of the word is the value (`-pprof`, `-p=prof`), else the next words.
            rest = word[at + 1 :]
            attached = rest[1:] if rest.startswith("=") else rest or None
            self._take(arg, "-" + word[at], attached if arg.value_name else None, long_help=False)
            if arg.value_name:
                return

    def _take(self, arg: _Arg, spelling: str, attached: str | None, *, long_help: bool) -> None:
        self._record_pending()
        if arg is _HELP:
            raise _Printed("help", self.command.long_help if long_help else self.command.short_help)
        if arg is _VERSION:
            raise _Printed("version", self.command.version + "\n")
        if not arg.value_name:
            self._record(arg, spelling, [])
        elif attached is not None:
            self._record(arg, spelling, [attached])
        else:
            self.pending, self.pending_spelling, self.pending_values = arg, spelling, []

    def _record_pending(self) -> None:
        self.matches.pending_positional = False
        arg = self.pending
        if arg is None:
            return
        self.pending = None
        if not self.pending_values:
            raise _error(_value_required(arg))
        self._record(arg, self.pending_spelling, self.pending_values)

    def _record_pending_quietly(self) -> None:
        # Before reporting an unknown argument clap records what is pending, ignoring errors.
        try:  # noqa: SIM105 - contextlib.suppress would cost an import at start-up
            self._record_pending()
        except UsageError:
            pass

    def _record(self, arg: _Arg, spelling: str, values: Sequence[str]) -> None:
        if arg in self.matches.used and not arg.repeatable:
            self.matches.used.remove(arg)  # clap drops it from the usage it prints
            message = f"the argument '{arg.shown()}' cannot be used multiple times"
            raise _error(message, usage=self.command.usage)
        self.matches.note(arg, spelling)
        for value in values:
            _check_choice(arg, value)
            self.matches.values.setdefault(arg.long, []).append(value)


def _print_help_of(command: _Command, words: Sequence[str]) -> None:
    """clap's `help [COMMAND]...` subcommand: the long help of the command named."""
    for word in words:
        child = command.children.get(command.subcommands.get(word, ""))
        if child is None:
            if word in command.subcommands:
                raise UsageError(f"turngate fake codex: '{command.name} {word}' is not simulated\n", 2)
            raise _error(f"unrecognized subcommand '{word}'", usage=command.usage)
        command = child
    raise _Printed("help", command.long_help)


def _check_conflicts(matches: _Matches) -> None:
    for arg in matches.used:
        rivals = [other for other in matches.used if other.long == arg.conflicts]
        if rivals:
            raise _error(
                f"the argument '{arg.shown()}' cannot be used with '{rivals[0].shown()}'",
                usage=_smart_usage(matches, excluding=rivals),
            )


def _require_session_or_last(resume: _Matches) -> None:
    """`resume` needs a SESSION_ID or `--last`.

    Real codex 0.99.0 accepts neither and quietly starts a new session; the fake
    refuses the way clap refuses a missing required group, so an orchestrator
    that loses its thread id is caught instead of silently starting over.
    """
    if resume.positionals or resume.uses("last"):
        return
    shown = [arg.shown() for arg in resume.used]
    raise _error(
        "the following required arguments were not provided:\n  <SESSION_ID|--last>",
        usage=" ".join(["codex exec resume", *shown, "<SESSION_ID|--last>", "[PROMPT]"]),
    )


def _check_config_overrides(*read: _Matches | None) -> None:
    """codex's own check of `-c key=value` (top level first), before it loads any config."""
    for matches in read:
        for override in matches.values.get("config", []) if matches is not None else []:
            key, equals, _ = override.partition("=")
            problem = "" if equals else "Invalid override (missing '=')"
            problem = problem or ("" if key.strip() else "Empty key in override")
            if problem:
                raise UsageError(f"Error parsing -c overrides: {problem}: {override}\n", 1)


def _invocation(exec_: _Matches, resume: _Matches | None, stdin_is_tty: bool, emulate: str) -> Invocation:
    read = (exec_,) if resume is None else (exec_, resume)
    prompt = exec_.positionals[0] if exec_.positionals else None
    resume_id = None
    resume_latest = False
    if resume is not None:
        session_id, resume_prompt = (*resume.positionals, None, None)[:2]
        resume_latest = resume.uses("last")
        if resume_latest:
            # codex: with `--last`, clap still fills SESSION_ID first; that word is the prompt.
            resume_prompt = session_id if resume_prompt is None else resume_prompt
            session_id = None
        resume_id = session_id
        # A prompt given before `resume` is used when resume has none.
        prompt = prompt if resume_prompt is None else resume_prompt
    prompt_from_stdin = prompt is None or prompt == "-"
    if prompt is None and stdin_is_tty:
        # codex reads stdin for a missing prompt unless it is a terminal; "-" forces the read.
        raise UsageError(_NO_PROMPT, 1)
    model = resume.value("model") if resume is not None else None
    return Invocation(
        engine=ENGINE,
        action="run",
        prompt=None if prompt_from_stdin else prompt,
        prompt_from_stdin=prompt_from_stdin,
        resume_id=resume_id,
        resume_latest=resume_latest,
        model=model or exec_.value("model"),
        output_format="json" if any(matches.uses("json") for matches in read) else "text",
        auto_flags=tuple(
            spelling for matches in read for long, spelling in matches.given if long in (_FULL_AUTO, _BYPASS)
        ),
        skip_git_repo_check=any(matches.uses("skip-git-repo-check") for matches in read),
        profile=exec_.value("profile"),
        warnings=(_FULL_AUTO_DEPRECATED[emulate],)
        if emulate in _FULL_AUTO_DEPRECATED and any(matches.uses(_FULL_AUTO) for matches in read)
        else (),
    )


# clap's errors ---------------------------------------------------------------------------


def _error(message: str, *, tip: str = "", usage: str = "") -> UsageError:
    """A clap error: message, tip, usage and the --help hint, separated by blank lines; exit 2."""
    parts = [f"error: {message}"]
    if tip:
        parts.append(f"  tip: {tip}")
    if usage:
        parts.append(f"Usage: {usage}")
    parts.append("For more information, try '--help'.")
    return UsageError("\n\n".join(parts) + "\n", 2)


def _value_required(arg: _Arg) -> str:
    return f"a value is required for '{arg.shown()}' but none was supplied" + _possible_values(arg)


def _possible_values(arg: _Arg) -> str:
    return f"\n  [possible values: {', '.join(arg.choices)}]" if arg.choices else ""


def _check_choice(arg: _Arg, value: str) -> None:
    if not arg.choices or value in arg.choices:
        return
    if not value:
        raise _error(_value_required(arg))  # clap's enum parser treats "" as no value
    similar = _similar(value, arg.choices)
    raise _error(
        f"invalid value '{value}' for '{arg.shown()}'" + _possible_values(arg),
        tip=f"a similar value exists: '{similar[-1]}'" if similar else "",
    )


def _unknown_long(matches: _Matches, name: str, remaining: Sequence[str]) -> UsageError:
    command = matches.command
    similar = _similar(name, command.longs)
    if similar:
        # clap counts the suggested argument as used when it builds the usage line.
        return _error(
            f"unexpected argument '--{name}' found",
            tip=f"a similar argument exists: '--{similar[-1]}'",
            usage=_smart_usage(matches, extra=command.longs[similar[-1]]),
        )
    tip = _subcommand_flag_tip(command, name, remaining)
    tip = tip or f"to pass '--{name}' as a value, use '-- --{name}'"
    usage = _smart_usage(matches) if command.smart_usage else command.usage
    return _error(f"unexpected argument '--{name}' found", tip=tip, usage=usage)


def _subcommand_flag_tip(command: _Command, name: str, remaining: Sequence[str]) -> str:
    """`codex exec --last resume`: "'resume --last' exists", for a subcommand later on the line."""
    found = []
    for word, child in command.children.items():
        similar = _similar(name, child.longs)
        if similar and word in remaining:
            found.append((remaining.index(word), f"'{word} --{similar[-1]}' exists"))
    return min(found)[1] if found else ""


def _extra_positional(matches: _Matches, word: str, trailing: bool) -> UsageError:
    command = matches.command
    if trailing and word in command.subcommands:
        return _error(
            f"unexpected argument '{word}' found",
            tip=f"subcommand '{word}' exists; to use it, remove the '--' before it",
            usage=command.usage,
        )
    similar = _similar(word, command.subcommands)
    if not similar:
        return _error(f"unexpected argument '{word}' found", usage=command.usage)
    if len(similar) == 1:
        tip = f"a similar subcommand exists: '{similar[0]}'"
    else:
        tip = "some similar subcommands exist: " + ", ".join(f"'{name}'" for name in similar)
    return _error(f"unrecognized subcommand '{word}'", tip=tip, usage=command.usage)


def _smart_usage(matches: _Matches, *, extra: _Arg | None = None, excluding: Sequence[_Arg] = ()) -> str:
    """clap's usage for an error: the command, the arguments used so far, then every
    positional, `<NAME>` if given and `[NAME]` if not; the full usage when nothing was used."""
    command = matches.command
    used = [arg for arg in matches.used if arg not in excluding]
    if extra is not None and extra not in used:
        used.append(extra)
    if command.name == "codex" or not (used or matches.recorded_positionals()):
        return command.usage
    given = matches.recorded_positionals()
    places = [f"<{name}>" if at < given else f"[{name}]" for at, name in enumerate(command.positionals)]
    return " ".join([command.name, *(arg.shown() for arg in used), *places])


def _usage_with_groups(matches: _Matches, flag: _Arg) -> str:
    """The usage clap prints for `--flag=value`.

    On this path clap's usage also lists argument groups in use: once an
    argument of the command's own group was recorded, the group replaces its
    members, e.g. `codex exec <--image <FILE>...|...|PROMPT>`.
    """
    command = matches.command
    grouped = any(arg.long in command.group for arg in matches.used) or (
        matches.recorded_positionals() > 0 and command.positionals[0] in command.group
    )
    if command.name == "codex" or not grouped:
        return _smart_usage(matches, extra=flag)
    used = [*matches.used, flag] if flag not in matches.used else matches.used
    shown = [arg.shown() for arg in used if arg.long not in command.group]
    return " ".join([command.name, *shown, command.group_usage])


def _similar(word: str, candidates: Iterable[str]) -> list[str]:
    """clap's `did_you_mean`: candidates with a Jaro similarity above 0.7, best last."""
    scored = [(_jaro(word, candidate), candidate) for candidate in candidates]
    # A stable sort on the score alone, so a tie keeps keymap order (and the later one wins).
    return [candidate for score, candidate in sorted(scored, key=lambda pair: pair[0]) if score > 0.7]


def _jaro(first: str, second: str) -> float:
    """strsim's `jaro`, the similarity clap's suggestions are based on."""
    if not first or not second:
        return float(first == second)
    reach = max(max(len(first), len(second)) // 2 - 1, 0)
    first_matched = [False] * len(first)
    second_matched = [False] * len(second)
    matches = 0
    for at, char in enumerate(first):
        for other in range(max(at - reach, 0), min(len(second), at + reach + 1)):
            if not second_matched[other] and second[other] == char:
                first_matched[at] = second_matched[other] = True
                matches += 1
                break
    if matches == 0:
        return 0.0
    first_chars = [char for char, matched in zip(first, first_matched, strict=True) if matched]
    second_chars = [char for char, matched in zip(second, second_matched, strict=True) if matched]
    transpositions = sum(a != b for a, b in zip(first_chars, second_chars, strict=True)) // 2
    return (matches / len(first) + matches / len(second) + (matches - transpositions) / matches) / 3.0


# Help texts, exactly as codex-cli 0.99.0 prints them (clap wraps them at 100 columns) --------

# What a build without resume lacks: the top-level `resume` command and `exec resume`.
_ROOT_RESUME_LINES = (
    "  resume      Resume a previous interactive session (picker by default; use --last to continue the\n"
    "              most recent)\n"
)
_EXEC_RESUME_LINE = "  resume  Resume a previous session by id or pick the most recent with --last\n"

_ROOT_LONG_HELP = """\
Codex CLI

If no subcommand is specified, options will be forwarded to the interactive CLI.

Usage: codex [OPTIONS] [PROMPT]
       codex [OPTIONS] <COMMAND> [ARGS]

Commands:
  exec        Run Codex non-interactively [aliases: e]
  review      Run a code review non-interactively
  login       Manage login
  logout      Remove stored authentication credentials
  mcp         [experimental] Run Codex as an MCP server and manage MCP servers
  mcp-server  [experimental] Run the Codex MCP server (stdio transport)
  app-server  [experimental] Run the app server or related tooling
  completion  Generate shell completion scripts
  sandbox     Run commands within a Codex-provided sandbox
  debug       Debugging tools
  apply       Apply the latest diff produced by Codex agent as a `git apply` to your local working
              tree [aliases: a]
  resume      Resume a previous interactive session (picker by default; use --last to continue the
              most recent)
  fork        Fork a previous interactive session (picker by default; use --last to fork the most
              recent)
  cloud       [EXPERIMENTAL] Browse tasks from Codex Cloud and apply changes locally
  features    Inspect feature flags
  help        Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]
          Optional user prompt to start the session

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`.
          Use a dotted path (`foo.bar.baz`) to override nested values. The `value` portion is parsed
          as TOML. If it fails to parse as TOML, the raw string is used as a literal.
         \x20
          Examples: - `-c model="o3"` - `-c 'sandbox_permissions=["disk-full-read-access"]'` - `-c
          shell_environment_policy.inherit=all`

      --enable <FEATURE>
          Enable a feature (repeatable). Equivalent to `-c features.<name>=true`

      --disable <FEATURE>
          Disable a feature (repeatable). Equivalent to `-c features.<name>=false`

  -i, --image <FILE>...
          Optional image(s) to attach to the initial prompt

  -m, --model <MODEL>
          Model the agent should use

      --oss
          Convenience flag to select the local open source model provider. Equivalent to -c
          model_provider=oss; verifies a local LM Studio or Ollama server is running

      --local-provider <OSS_PROVIDER>
          Specify which local provider to use (lmstudio or ollama). If not specified with --oss,
          will use config default or show selection

  -p, --profile <CONFIG_PROFILE>
          Configuration profile from config.toml to specify default options

  -s, --sandbox <SANDBOX_MODE>
          Select the sandbox policy to use when executing model-generated shell commands
         \x20
          [possible values: read-only, workspace-write, danger-full-access]

  -a, --ask-for-approval <APPROVAL_POLICY>
          Configure when the model requires human approval before executing a command

          Possible values:
          - untrusted:  Only run "trusted" commands (e.g. ls, cat, sed) without asking for user
            approval. Will escalate to the user if the model proposes a command that is not in the
            "trusted" set
          - on-failure: Run all commands without asking for user approval. Only asks for approval if
            a command fails to execute, in which case it will escalate to the user to ask for
            un-sandboxed execution
          - on-request: The model decides when to ask the user for approval
          - never:      Never ask for user approval Execution failures are immediately returned to
            the model

      --full-auto
          Convenience alias for low-friction sandboxed automatic execution (-a on-request, --sandbox
          workspace-write)

      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing. EXTREMELY
          DANGEROUS. Intended solely for running in environments that are externally sandboxed

  -C, --cd <DIR>
          Tell the agent to use the specified directory as its working root

      --search
          Enable live web search. When enabled, the native Responses `web_search` tool is available
          to the model (no per‑call approval)

      --add-dir <DIR>
          Additional directories that should be writable alongside the primary workspace

      --no-alt-screen
          Disable alternate screen mode
         \x20
          Runs the TUI in inline mode, preserving terminal scrollback history. This is useful in
          terminal multiplexers like Zellij that follow the xterm spec strictly and disable
          scrollback in alternate screen buffers.

  -h, --help
          Print help (see a summary with '-h')

  -V, --version
          Print version
"""

_ROOT_SHORT_HELP = """\
Codex CLI

Usage: codex [OPTIONS] [PROMPT]
       codex [OPTIONS] <COMMAND> [ARGS]

Commands:
  exec        Run Codex non-interactively [aliases: e]
  review      Run a code review non-interactively
  login       Manage login
  logout      Remove stored authentication credentials
  mcp         [experimental] Run Codex as an MCP server and manage MCP servers
  mcp-server  [experimental] Run the Codex MCP server (stdio transport)
  app-server  [experimental] Run the app server or related tooling
  completion  Generate shell completion scripts
  sandbox     Run commands within a Codex-provided sandbox
  debug       Debugging tools
  apply       Apply the latest diff produced by Codex agent as a `git apply` to your local working
              tree [aliases: a]
  resume      Resume a previous interactive session (picker by default; use --last to continue the
              most recent)
  fork        Fork a previous interactive session (picker by default; use --last to fork the most
              recent)
  cloud       [EXPERIMENTAL] Browse tasks from Codex Cloud and apply changes locally
  features    Inspect feature flags
  help        Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]  Optional user prompt to start the session

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`.
          Use a dotted path (`foo.bar.baz`) to override nested values. The `value` portion is parsed
          as TOML. If it fails to parse as TOML, the raw string is used as a literal
      --enable <FEATURE>
          Enable a feature (repeatable). Equivalent to `-c features.<name>=true`
      --disable <FEATURE>
          Disable a feature (repeatable). Equivalent to `-c features.<name>=false`
  -i, --image <FILE>...
          Optional image(s) to attach to the initial prompt
  -m, --model <MODEL>
          Model the agent should use
      --oss
          Convenience flag to select the local open source model provider. Equivalent to -c
          model_provider=oss; verifies a local LM Studio or Ollama server is running
      --local-provider <OSS_PROVIDER>
          Specify which local provider to use (lmstudio or ollama). If not specified with --oss,
          will use config default or show selection
  -p, --profile <CONFIG_PROFILE>
          Configuration profile from config.toml to specify default options
  -s, --sandbox <SANDBOX_MODE>
          Select the sandbox policy to use when executing model-generated shell commands [possible
          values: read-only, workspace-write, danger-full-access]
  -a, --ask-for-approval <APPROVAL_POLICY>
          Configure when the model requires human approval before executing a command [possible
          values: untrusted, on-failure, on-request, never]
      --full-auto
          Convenience alias for low-friction sandboxed automatic execution (-a on-request, --sandbox
          workspace-write)
      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing. EXTREMELY
          DANGEROUS. Intended solely for running in environments that are externally sandboxed
  -C, --cd <DIR>
          Tell the agent to use the specified directory as its working root
      --search
          Enable live web search. When enabled, the native Responses `web_search` tool is available
          to the model (no per‑call approval)
      --add-dir <DIR>
          Additional directories that should be writable alongside the primary workspace
      --no-alt-screen
          Disable alternate screen mode
  -h, --help
          Print help (see more with '--help')
  -V, --version
          Print version
"""

_EXEC_LONG_HELP = """\
Run Codex non-interactively

Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]

Commands:
  resume  Resume a previous session by id or pick the most recent with --last
  review  Run a code review against the current repository
  help    Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]
          Initial instructions for the agent. If not provided as an argument (or if `-` is used),
          instructions are read from stdin

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`.
          Use a dotted path (`foo.bar.baz`) to override nested values. The `value` portion is parsed
          as TOML. If it fails to parse as TOML, the raw string is used as a literal.
         \x20
          Examples: - `-c model="o3"` - `-c 'sandbox_permissions=["disk-full-read-access"]'` - `-c
          shell_environment_policy.inherit=all`

      --enable <FEATURE>
          Enable a feature (repeatable). Equivalent to `-c features.<name>=true`

      --disable <FEATURE>
          Disable a feature (repeatable). Equivalent to `-c features.<name>=false`

  -i, --image <FILE>...
          Optional image(s) to attach to the initial prompt

  -m, --model <MODEL>
          Model the agent should use

      --oss
          Use open-source provider

      --local-provider <OSS_PROVIDER>
          Specify which local provider to use (lmstudio or ollama). If not specified with --oss,
          will use config default or show selection

  -s, --sandbox <SANDBOX_MODE>
          Select the sandbox policy to use when executing model-generated shell commands
         \x20
          [possible values: read-only, workspace-write, danger-full-access]

  -p, --profile <CONFIG_PROFILE>
          Configuration profile from config.toml to specify default options

      --full-auto
          Convenience alias for low-friction sandboxed automatic execution (-a on-request, --sandbox
          workspace-write)

      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing. EXTREMELY
          DANGEROUS. Intended solely for running in environments that are externally sandboxed

  -C, --cd <DIR>
          Tell the agent to use the specified directory as its working root

      --skip-git-repo-check
          Allow running Codex outside a Git repository

      --add-dir <DIR>
          Additional directories that should be writable alongside the primary workspace

      --ephemeral
          Run without persisting session files to disk

      --output-schema <FILE>
          Path to a JSON Schema file describing the model's final response shape

      --color <COLOR>
          Specifies color settings for use in the output
         \x20
          [default: auto]
          [possible values: always, never, auto]

      --json
          Print events to stdout as JSONL

  -o, --output-last-message <FILE>
          Specifies file where the last message from the agent should be written

  -h, --help
          Print help (see a summary with '-h')

  -V, --version
          Print version
"""

_EXEC_SHORT_HELP = """\
Run Codex non-interactively

Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]

Commands:
  resume  Resume a previous session by id or pick the most recent with --last
  review  Run a code review against the current repository
  help    Print this message or the help of the given subcommand(s)

Arguments:
  [PROMPT]  Initial instructions for the agent. If not provided as an argument (or if `-` is used),
            instructions are read from stdin

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`.
          Use a dotted path (`foo.bar.baz`) to override nested values. The `value` portion is parsed
          as TOML. If it fails to parse as TOML, the raw string is used as a literal
      --enable <FEATURE>
          Enable a feature (repeatable). Equivalent to `-c features.<name>=true`
      --disable <FEATURE>
          Disable a feature (repeatable). Equivalent to `-c features.<name>=false`
  -i, --image <FILE>...
          Optional image(s) to attach to the initial prompt
  -m, --model <MODEL>
          Model the agent should use
      --oss
          Use open-source provider
      --local-provider <OSS_PROVIDER>
          Specify which local provider to use (lmstudio or ollama). If not specified with --oss,
          will use config default or show selection
  -s, --sandbox <SANDBOX_MODE>
          Select the sandbox policy to use when executing model-generated shell commands [possible
          values: read-only, workspace-write, danger-full-access]
  -p, --profile <CONFIG_PROFILE>
          Configuration profile from config.toml to specify default options
      --full-auto
          Convenience alias for low-friction sandboxed automatic execution (-a on-request, --sandbox
          workspace-write)
      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing. EXTREMELY
          DANGEROUS. Intended solely for running in environments that are externally sandboxed
  -C, --cd <DIR>
          Tell the agent to use the specified directory as its working root
      --skip-git-repo-check
          Allow running Codex outside a Git repository
      --add-dir <DIR>
          Additional directories that should be writable alongside the primary workspace
      --ephemeral
          Run without persisting session files to disk
      --output-schema <FILE>
          Path to a JSON Schema file describing the model's final response shape
      --color <COLOR>
          Specifies color settings for use in the output [default: auto] [possible values: always,
          never, auto]
      --json
          Print events to stdout as JSONL
  -o, --output-last-message <FILE>
          Specifies file where the last message from the agent should be written
  -h, --help
          Print help (see more with '--help')
  -V, --version
          Print version
"""

_RESUME_LONG_HELP = """\
Resume a previous session by id or pick the most recent with --last

Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]

Arguments:
  [SESSION_ID]
          Conversation/session id (UUID) or thread name. UUIDs take precedence if it parses. If
          omitted, use --last to pick the most recent recorded session

  [PROMPT]
          Prompt to send after resuming the session. If `-` is used, read from stdin

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`.
          Use a dotted path (`foo.bar.baz`) to override nested values. The `value` portion is parsed
          as TOML. If it fails to parse as TOML, the raw string is used as a literal.
         \x20
          Examples: - `-c model="o3"` - `-c 'sandbox_permissions=["disk-full-read-access"]'` - `-c
          shell_environment_policy.inherit=all`

      --last
          Resume the most recent recorded session (newest) without specifying an id

      --all
          Show all sessions (disables cwd filtering)

      --enable <FEATURE>
          Enable a feature (repeatable). Equivalent to `-c features.<name>=true`

      --disable <FEATURE>
          Disable a feature (repeatable). Equivalent to `-c features.<name>=false`

  -i, --image <FILE>
          Optional image(s) to attach to the prompt sent after resuming

  -m, --model <MODEL>
          Model the agent should use

      --full-auto
          Convenience alias for low-friction sandboxed automatic execution (-a on-request, --sandbox
          workspace-write)

      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing. EXTREMELY
          DANGEROUS. Intended solely for running in environments that are externally sandboxed

      --skip-git-repo-check
          Allow running Codex outside a Git repository

      --ephemeral
          Run without persisting session files to disk

      --json
          Print events to stdout as JSONL

  -h, --help
          Print help (see a summary with '-h')
"""

_RESUME_SHORT_HELP = """\
Resume a previous session by id or pick the most recent with --last

Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]

Arguments:
  [SESSION_ID]  Conversation/session id (UUID) or thread name. UUIDs take precedence if it parses.
                If omitted, use --last to pick the most recent recorded session
  [PROMPT]      Prompt to send after resuming the session. If `-` is used, read from stdin

Options:
  -c, --config <key=value>
          Override a configuration value that would otherwise be loaded from `~/.codex/config.toml`.
          Use a dotted path (`foo.bar.baz`) to override nested values. The `value` portion is parsed
          as TOML. If it fails to parse as TOML, the raw string is used as a literal
      --last
          Resume the most recent recorded session (newest) without specifying an id
      --all
          Show all sessions (disables cwd filtering)
      --enable <FEATURE>
          Enable a feature (repeatable). Equivalent to `-c features.<name>=true`
      --disable <FEATURE>
          Disable a feature (repeatable). Equivalent to `-c features.<name>=false`
  -i, --image <FILE>
          Optional image(s) to attach to the prompt sent after resuming
  -m, --model <MODEL>
          Model the agent should use
      --full-auto
          Convenience alias for low-friction sandboxed automatic execution (-a on-request, --sandbox
          workspace-write)
      --dangerously-bypass-approvals-and-sandbox
          Skip all confirmation prompts and execute commands without sandboxing. EXTREMELY
          DANGEROUS. Intended solely for running in environments that are externally sandboxed
      --skip-git-repo-check
          Allow running Codex outside a Git repository
      --ephemeral
          Run without persisting session files to disk
      --json
          Print events to stdout as JSONL
  -h, --help
          Print help (see more with '--help')
"""
