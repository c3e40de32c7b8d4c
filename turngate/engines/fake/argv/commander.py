"""Command lines read the way commander.js reads them, for the fakes of claude and codebuddy.

Claude Code and CodeBuddy Code parse their argv with commander (`program [options]
[command] [prompt]`). Their option tables are not written out here: they are read
from each CLI's captured `--help` text (commander lays out every visible option as
`-s, --long <value>` / `[value]` / `<values...>`, with `(choices: "a", "b")` in its
description), so the fake knows exactly the options the real build shows, and a
build without resume (its help without the resume entries) knows none of them.

What commander does with a command line (`Command.parseOptions` and
`_parseCommand`, commander 12-14):

- a known option takes its value: `<value>` the next word whatever it is,
  `[value]` the next word unless it looks like an option, a boolean none;
  `--opt=value` and `-xvalue` (a short option with a value) attach it; `-abc`
  with `-a` boolean is `-a -bc`; a variadic `<values...>` takes words until the
  next option;
- known options are still read after an unknown one; the first unknown one is the
  error `error: unknown option '--x'` (with commander's "(Did you mean …?)" for a
  long option close to a known one), exit 1;
- `-h`/`--help` anywhere among the words it did not understand prints the help,
  exit 0, before that error; the version option prints as soon as it is read;
- `--` ends the options;
- a value outside an option's choices: `error: option '<flags>' argument '<v>' is
  invalid. Allowed choices are a, b.`; a required value missing: `error: option
  '<flags>' argument missing`.

Like everything a fake engine imports at start-up, it imports nothing at run time.
"""

from __future__ import annotations

import os

from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence

    Value = str | bool | None

HELP_DIR = os.path.join(os.path.dirname(__file__), "help")
# commander's suggestSimilar: at most this many edits, and at least this much alike.
_MAX_DISTANCE = 3
_MIN_SIMILARITY = 0.4


def help_text(name: str) -> str:
    """A captured help text shipped beside this module (`help/<name>.txt`), byte for byte."""
    with open(os.path.join(HELP_DIR, name + ".txt"), encoding="utf-8") as handle:
        return handle.read()


class Option:
    """One commander option, as its help line declares it: `-r, --resume [value]`."""

    __slots__ = ("choices", "flags", "longs", "short", "value")

    def __init__(self, flags: str, choices: tuple[str, ...] = ()) -> None:
        self.flags = flags  # as declared, for commander's messages
        words = flags.replace(",", " ").split()
        self.short = next((w for w in words if w.startswith("-") and not w.startswith("--")), "")
        self.longs = tuple(w for w in words if w.startswith("--"))
        last = words[-1] if words else ""
        # "required" <v>, "optional" [v], "variadic" <v...>, or "" for a boolean
        if last.startswith("<"):
            self.value = "variadic" if last.endswith("...>") else "required"
        elif last.startswith("["):
            self.value = "optional"
        else:
            self.value = ""
        self.choices = choices

    @property
    def name(self) -> str:
        """commander's attribute name: the long flag without `--` (and without a `no-`)."""
        long = self.longs[-1] if self.longs else self.short
        bare = long.lstrip("-")
        return bare[3:] if bare.startswith("no-") else bare


class Parsed:
    """What commander made of an argv: option values by name (each occurrence), operands, unknowns."""

    __slots__ = ("help", "operands", "unknown", "values", "version")

    def __init__(self) -> None:
        self.values: dict[str, list[Value]] = {}
        self.operands: list[str] = []
        self.unknown: list[str] = []
        self.help = False
        self.version = False

    def last(self, name: str) -> Value:
        values = self.values.get(name)
        return values[-1] if values else None

    def text(self, name: str) -> str:
        value = self.last(name)
        return value if isinstance(value, str) else ""

    def flag(self, name: str) -> bool:
        return self.last(name) is True

    def given(self, name: str) -> bool:
        return name in self.values


class UsageProblem(Exception):
    """A commander error: its message (without the newline commander adds)."""


class Program:
    """The options and commands a captured help text shows."""

    def __init__(
        self, help_text: str, *, version_flags: tuple[str, ...], help_flags: tuple[str, ...]
    ) -> None:
        self.help_text = help_text
        self.options: list[Option] = []
        self.commands: set[str] = set()
        self.version_flags = version_flags
        self.help_flags = help_flags
        section = ""
        for flags, description in _entries(help_text):
            if flags.endswith(":") and not description:
                section = flags
            elif section == "Options:" and flags.startswith("-"):
                self.options.append(Option(flags, _choices(description)))
            elif section == "Commands:":
                self.commands.update(flags.split(" ", 1)[0].split("|"))
        self._by_flag: dict[str, Option] = {}
        for option in self.options:
            for flag in (option.short, *option.longs):
                if flag:
                    self._by_flag.setdefault(flag, option)

    def find(self, flag: str) -> Option | None:
        return self._by_flag.get(flag)

    def parse(self, argv: Sequence[str]) -> Parsed:
        """Read `argv` as commander does; raise UsageProblem with commander's message."""
        parsed = Parsed()
        words = list(argv)
        dest = parsed.operands
        variadic: Option | None = None
        while words and not parsed.version:  # commander prints the version as soon as it reads it
            word = words.pop(0)
            if word == "--":
                if dest is parsed.unknown:
                    dest.append(word)
                dest.extend(words)
                break
            if variadic is not None and not _maybe_option(word):
                self._store(parsed, variadic, word)
                continue
            variadic = None
            option = self.find(word) if _maybe_option(word) else None
            if option is not None:
                if option.value == "required" or option.value == "variadic":
                    if not words:
                        raise UsageProblem(f"error: option '{option.flags}' argument missing")
                    self._store(parsed, option, words.pop(0))
                elif option.value == "optional":
                    value = words.pop(0) if words and not _maybe_option(words[0]) else None
                    self._store(parsed, option, value)
                else:
                    self._store(parsed, option, not word.startswith("--no-"))
                variadic = option if option.value == "variadic" else None
                continue
            if len(word) > 2 and word[0] == "-" and word[1] != "-":
                short = self.find(word[:2])
                if short is not None:
                    if short.value in ("required", "variadic", "optional"):
                        self._store(parsed, short, word[2:])
                    else:
                        self._store(parsed, short, True)
                        words.insert(0, "-" + word[2:])
                    continue
            equals = word.find("=")
            if word.startswith("--") and equals > 2:
                long = self.find(word[:equals])
                if long is not None and long.value:
                    self._store(parsed, long, word[equals + 1 :])
                    continue
            if dest is parsed.operands and _maybe_option(word):
                dest = parsed.unknown
            dest.append(word)
        if parsed.version:
            return parsed
        parsed.help = parsed.help or any(word in self.help_flags for word in parsed.unknown)
        if parsed.help:
            return parsed
        if parsed.unknown and not (parsed.operands and parsed.operands[0] in self.commands):
            raise UsageProblem(
                f"error: unknown option '{parsed.unknown[0]}'{self._suggestion(parsed.unknown[0])}"
            )
        return parsed

    def _store(self, parsed: Parsed, option: Option, value: Value) -> None:
        flags = (option.short, *option.longs)
        if any(flag in self.version_flags for flag in flags):
            parsed.version = True
            return
        if any(flag in self.help_flags for flag in flags):
            parsed.help = True
            return
        if isinstance(value, str) and option.choices and value not in option.choices:
            allowed = ", ".join(option.choices)
            invalid = f"error: option '{option.flags}' argument '{value}' is invalid."
            raise UsageProblem(f"{invalid} Allowed choices are {allowed}.")
        # An optional value left out is `true` to commander: the option was given, without a value.
        parsed.values.setdefault(option.name, []).append(True if value is None else value)

    def _suggestion(self, flag: str) -> str:
        """commander's `suggestSimilar` over the long flags the help shows."""
        if not flag.startswith("--"):
            return ""
        word = flag[2:].split("=", 1)[0]
        best, similar = _MAX_DISTANCE, []
        for candidate in dict.fromkeys(long[2:] for option in self.options for long in option.longs):
            if len(candidate) <= 1:
                continue
            distance = _edit_distance(word, candidate)
            length = max(len(word), len(candidate))
            if (length - distance) / length <= _MIN_SIMILARITY:
                continue
            if distance < best:
                best, similar = distance, [candidate]
            elif distance == best:
                similar.append(candidate)
        names = [f"--{name}" for name in sorted(similar)]
        if len(names) > 1:
            return f"\n(Did you mean one of {', '.join(names)}?)"
        return f"\n(Did you mean {names[0]}?)" if names else ""


def _maybe_option(word: str) -> bool:
    return len(word) > 1 and word[0] == "-"


def _entries(text: str) -> list[tuple[str, str]]:
    """(flags or section title, description) of each entry of a commander help text, the
    description's continuation lines joined: an entry starts two spaces in; its description
    follows two or more spaces later, or on the next lines, indented further."""
    entries: list[tuple[str, str]] = []
    for line in text.split("\n"):
        if line and not line.startswith(" "):
            entries.append((line.strip(), ""))
        elif line.startswith("  ") and not line.startswith("   "):
            head, _, rest = line[2:].partition("  ")
            entries.append((head.strip(), rest.strip()))
        elif line.strip() and entries:
            flags, description = entries[-1]
            entries[-1] = (flags, f"{description} {line.strip()}".strip())
    return entries


def _choices(description: str) -> tuple[str, ...]:
    """The `(choices: "a", "b")` of a commander option's description."""
    at = description.find("(choices: ")
    if at < 0:
        return ()
    listed = description[at + len("(choices: ") :]
    found: list[str] = []
    while listed.startswith('"'):
        end = listed.find('"', 1)
        if end < 0:
            break
        found.append(listed[1:end])
        listed = listed[end + 1 :].lstrip(", ")
    return tuple(found)


def _edit_distance(a: str, b: str) -> int:
    """commander's editDistance: Damerau-Levenshtein, optimal string alignment."""
    rows = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
    return rows[len(a)][len(b)]


def without_entries(text: str, words: Sequence[str]) -> str:
    """`text` without the help entries (an entry's line and its continuation lines) that mention
    any of `words`: a build that lacks a feature lacks its options and every line about it."""
    kept: list[list[str]] = []
    for line in text.split("\n"):
        starts = not line.startswith("   ") or not line.strip()
        if starts or not kept:
            kept.append([line])
        else:
            kept[-1].append(line)
    lowered = tuple(word.lower() for word in words)
    blocks = ["\n".join(block) for block in kept]
    return "\n".join(
        block
        for block in blocks
        if not (block.startswith("  ") and any(word in block.lower() for word in lowered))
    )


def print_command(engine: str, program: Program, argv: list[str], version_text: str) -> Parsed | Invocation:
    """A `-p` (print mode) command line of a Claude Code-like CLI (claude, codebuddy): their help or
    version, else the parsed options with one prompt, or `UsageError` as the real CLI fails (one of its
    subcommands, more than one prompt word, no `-p`: its terminal UI, which is not simulated)."""
    try:
        parsed = program.parse(argv)
    except UsageProblem as problem:
        raise UsageError(f"{problem}\n", 1) from None
    if parsed.version:
        return Invocation(engine=engine, action="version", text=version_text)
    if parsed.help:
        return Invocation(engine=engine, action="help", text=program.help_text)
    if parsed.operands and parsed.operands[0] in program.commands:
        raise UsageError(f"turngate fake {engine}: '{engine} {parsed.operands[0]}' is not simulated\n", 1)
    if len(parsed.operands) > 1:
        count = len(parsed.operands)
        raise UsageError(f"error: too many arguments. Expected 1 argument but got {count}.\n", 1)
    if not parsed.flag("print"):
        raise UsageError(f"turngate fake {engine}: the interactive session is not simulated; pass -p\n", 1)
    return parsed
