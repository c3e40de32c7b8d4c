"""Command lines read the way yargs reads them, for the fakes of the Node engines.

gemini-cli, iFlow CLI (a gemini-cli fork) and opencode parse their argv with
yargs, so their fakes share one reading of it: `--opt=value`, `--opt value`,
short clusters (`-ym model`), `--no-flag`, `--`, camelCase spellings
(`--outputFormat`), and yargs-parser's rules for when the next word is an
option's value. The rules were checked against gemini-cli 0.16.0 (yargs
17.7) and opencode 1.0.61 (yargs 18.0); each cites the behaviour it mimics.

This module also lays out help the way yargs does when it does not wrap
(gemini-cli sizes its help to the terminal, so it does not wrap when stdout
is not one), and words yargs' validation messages.

Like everything a fake engine imports at start-up, it imports nothing at run
time (no `re`, no `typing`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    Value = str | bool

BOOLEAN = "boolean"
STRING = "string"
NUMBER = "number"
ARRAY = "array"


class Option:
    """One yargs option: its long name, one-letter alias, type, and help line."""

    __slots__ = ("alias", "choices", "default", "description", "hidden", "kind", "name", "nargs", "tags")

    def __init__(
        self,
        name: str,
        kind: str,
        description: str = "",
        *,
        alias: str = "",
        nargs: bool = False,
        choices: tuple[str, ...] = (),
        default: bool | str | None = None,
        deprecated: str = "",
        hidden: bool = False,
    ) -> None:
        self.name = name
        self.kind = kind
        self.description = description
        self.alias = alias
        # `nargs: 1`: the option must be followed by a value ("Not enough arguments following").
        self.nargs = nargs
        self.choices = choices
        self.default = default
        self.hidden = hidden
        self.tags = _tags(kind, choices, default, deprecated)

    def label(self) -> str:
        """The switch column of yargs' help: `-d, --debug`, or `    --name` without an alias."""
        return f"-{self.alias}, --{self.name}" if self.alias else f"    --{self.name}"


def _tags(kind: str, choices: tuple[str, ...], default: bool | str | None, deprecated: str) -> str:
    # yargs' order: [deprecated: …] [type] [choices: …] [default: …]
    tags = [f"[deprecated: {deprecated}]"] if deprecated else []
    tags.append(f"[{kind}]")
    if choices:
        tags.append(f"[choices: {quoted_list(choices)}]")
    if isinstance(default, bool):
        tags.append(f"[default: {'true' if default else 'false'}]")
    elif default is not None:
        tags.append(f"[default: {quoted_list((default,))}]")
    return " ".join(tags)


class Parsed:
    """What yargs-parser made of one argv.

    `values` maps each option's long name to the values it was given, in the
    order the options first appeared (the order yargs validates them in);
    `spellings` holds how each occurrence was written (`-y`, `--yolo`).
    Booleans are stored as bools, everything else as the given string.
    """

    __slots__ = ("missing_value_after", "positionals", "spellings", "unknown", "values")

    def __init__(self) -> None:
        self.values: dict[str, list[Value]] = {}
        self.spellings: dict[str, list[str]] = {}
        # yargs' `_`: what a command takes its positionals from, a lone "-" included.
        self.positionals: list[str] = []
        # Unknown option names, as yargs lists them in "Unknown arguments: …".
        self.unknown: list[str] = []
        # The key (as typed) of the last option left without its required value.
        self.missing_value_after = ""

    def given(self, name: str) -> bool:
        return name in self.values

    def last(self, name: str) -> Value | None:
        values = self.values.get(name)
        return values[-1] if values else None

    def text(self, name: str) -> str:
        """The last value as text; "" when absent or negated (`--no-model`)."""
        value = self.last(name)
        return value if isinstance(value, str) else ""

    def flag(self, name: str) -> bool:
        return self.last(name) is True

    def flag_spelling(self, name: str) -> str:
        """How the occurrence that left a boolean on was written ("" if it ends up off)."""
        if not self.flag(name):
            return ""
        return self.spellings[name][-1]

    def note_unknown(self, key: str) -> None:
        # yargs reports a dashed unknown key twice: as typed and in its camelCase expansion.
        for name in (key, camel_case(key)) if "-" in key else (key,):
            if name not in self.unknown:
                self.unknown.append(name)


def read_argv(argv: Sequence[str], options: Sequence[Option]) -> Parsed:
    """Read `argv` as yargs-parser does with these options known."""
    reader = _Reader(argv, options)
    reader.read()
    return reader.parsed


class _Reader:
    __slots__ = ("argv", "index", "keys", "parsed")

    def __init__(self, argv: Sequence[str], options: Sequence[Option]) -> None:
        self.argv = argv
        self.index = 0
        self.parsed = Parsed()
        # Every key that selects an option: long name, its camelCase form, one-letter alias.
        self.keys: dict[str, Option] = {}
        for option in options:
            self.keys[option.name] = option
            self.keys[camel_case(option.name)] = option
            if option.alias:
                self.keys[option.alias] = option

    def read(self) -> None:
        while self.index < len(self.argv):
            word = self.argv[self.index]
            if word == "--":
                # Words after "--" never reach the positionals: gemini 0.16 and opencode 1.0
                # both drop them from the prompt.
                return
            self._read_word(word)
            self.index += 1

    def _read_word(self, word: str) -> None:
        equals = word.find("=", 3)
        if word.startswith("--") and equals > 2:
            self._take(word[2:equals], "--" + word[2:equals], attached=word[equals + 1 :], long=True)
        elif word.startswith("--no-") and len(word) > 5:
            # yargs' boolean negation, which it applies to any key.
            self._store(word[5:], word, False)
        elif word.startswith("--") and len(word) > 2:
            self._take(word[2:], word, attached=None, long=True)
        elif word.startswith("-") and len(word) > 1 and not is_negative_number(word):
            self._read_cluster(word)
        else:
            self.parsed.positionals.append(word)

    def _read_cluster(self, word: str) -> None:
        """`-abc`: yargs-parser's short-option groups, letter by letter."""
        letters = word[1:-1]
        for at, letter in enumerate(letters):
            rest = word[at + 2 :]
            following = letters[at + 1] if at + 1 < len(letters) else ""
            if following == "=":  # -p=value
                self._take(letter, "-" + letter, attached=word[at + 3 :], long=False)
                return
            if rest == "-":
                self._store(letter, "-" + letter, "-")
                continue
            if letter.isalpha() and _is_number(rest):  # -n5
                self._store(letter, "-" + letter, rest)
                return
            if following and not (following.isalnum() or following == "_"):
                self._store(letter, "-" + letter, rest)
                return
            # A letter inside a group gets its default value (so gemini's `-px` is `-p ""`
            # plus an unknown `-x`).
            self._store(letter, "-" + letter, _default_value(self.keys.get(letter)))
        last = word[-1]
        if last != "-":
            self._take(last, "-" + last, attached=None, long=False)

    def _take(self, key: str, spelling: str, *, attached: str | None, long: bool) -> None:
        """Store an option met in argv, consuming the words after it that yargs gives it."""
        option = self.keys.get(key)
        if option is None:
            self.parsed.note_unknown(key)
            if attached is None and self._next_is_value(long):
                self.index += 1  # yargs gives an unknown option the next word, as if a string
        elif option.kind == ARRAY:
            self._take_array(option, key, spelling, attached)
        elif option.nargs:
            self._take_nargs(option, key, spelling, attached)
        elif option.kind == BOOLEAN:
            self._take_boolean(option, spelling, attached)
        elif attached is not None:
            self._store(key, spelling, attached)
        elif self._next_is_value(long):
            self.index += 1
            self._store(key, spelling, self.argv[self.index])
        else:
            self._store(key, spelling, _default_value(option))  # opencode's bare `--format` is "default"

    def _take_boolean(self, option: Option, spelling: str, attached: str | None) -> None:
        # `--yolo=abc` is false, and a following "true"/"false" is the flag's value.
        if attached is not None:
            self._store(option.name, spelling, attached == "true")
        elif self._following() in ("true", "false"):
            self.index += 1
            self._store(option.name, spelling, self.argv[self.index] == "true")
        else:
            self._store(option.name, spelling, True)

    def _take_nargs(self, option: Option, key: str, spelling: str, attached: str | None) -> None:
        # `nargs: 1`: the next word is the value unless it looks like an option ("-" and
        # negative numbers do not); none left is an error naming the key as typed.
        if attached is not None:
            self._store(option.name, spelling, attached)
            return
        following = self._following()
        if following is None or (looks_like_option(following) and not is_negative_number(following)):
            self.parsed.missing_value_after = key
            return
        self.index += 1
        self._store(option.name, spelling, following)

    def _take_array(self, option: Option, key: str, spelling: str, attached: str | None) -> None:
        # yargs' arrays are greedy (opencode's `-f a b c` attaches three files) unless they
        # have `nargs: 1` (gemini's `--allowed-tools a b` is one tool and the prompt "b").
        values = [] if attached is None else [attached]
        while self.index + 1 < len(self.argv) and not (option.nargs and values):
            following = self.argv[self.index + 1]
            if following.startswith("-") and not is_negative_number(following):
                break
            values.append(following)
            self.index += 1
        if option.nargs and not values:
            self.parsed.missing_value_after = key
            return
        self.parsed.values.setdefault(option.name, [])
        self.parsed.spellings.setdefault(option.name, [])
        for value in values:
            self._store(option.name, spelling, value)

    def _store(self, key: str, spelling: str, value: Value) -> None:
        option = self.keys.get(key)
        if option is None:
            self.parsed.note_unknown(key)
            return
        if option.kind == BOOLEAN and isinstance(value, str):
            value = value == "true"
        self.parsed.values.setdefault(option.name, []).append(value)
        self.parsed.spellings.setdefault(option.name, []).append(spelling)

    def _following(self) -> str | None:
        return self.argv[self.index + 1] if self.index + 1 < len(self.argv) else None

    def _next_is_value(self, long: bool) -> bool:
        """Whether yargs-parser takes the next word as a string option's value."""
        following = self._following()
        if following is None:
            return False
        if is_negative_number(following):
            return True
        if not following.startswith("-"):
            return True
        if long:
            return False  # after `--opt`, not even "-" is a value...
        # ...but after a short option it is: yargs tests /^(-|--)[^-]/ there.
        dashes = 2 if following.startswith("--") else 1
        return not (len(following) > dashes and following[dashes] != "-")


def _default_value(option: Option | None) -> Value:
    """yargs-parser's value for an option given without one: its default, else true for
    booleans (and unknown keys) and "" for the rest."""
    if option is None or option.kind == BOOLEAN:
        return True
    return option.default if isinstance(option.default, str) else ""


def prompt_words(positionals: Sequence[str], *, coerce_numbers: bool) -> list[str]:
    """The words a `[query..]`/`[message..]` positional ends up with.

    yargs re-reads positional values as `--query <word>`, which loses a lone
    "-" (gemini: `gemini a - b` asks "a b") and, for an untyped positional such
    as gemini's query, turns numbers into JS numbers (`gemini 1.50` asks "1.5",
    `0x1f` asks "31"); opencode's message is typed string and keeps them.
    """
    words = [word for word in positionals if word != "-"]
    return [_js_number_text(word) for word in words] if coerce_numbers else words


def _js_number_text(word: str) -> str:
    """`String(Number(word))` where yargs-parser would coerce `word`, else `word` itself."""
    if word[:2] == "0x" and _is_hex(word[2:]):
        return str(int(word, 16))
    if not _is_js_decimal(word) or (word.startswith("0") and word[1:2] not in ("", ".")):
        return word  # not a number to yargs, which also leaves "007" alone
    number = float(word)
    if number in (float("inf"), float("-inf")) or abs(int(number // 1)) > 2**53 - 1:
        return word  # coerced only when its floor is a safe integer
    if number == int(number):
        return str(int(number))
    digits, _, exponent = repr(number).partition("e")
    if not exponent:
        return digits
    power = int(exponent)
    if power < -6:
        return f"{digits}e{power}"  # JS: 1.5e-7
    sign = "-" if digits.startswith("-") else ""
    return f"{sign}0.{'0' * (-power - 1)}{digits.lstrip('-').replace('.', '')}"  # JS: 0.000015


def _is_js_decimal(word: str) -> bool:
    """yargs' /^[-]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(e[-+]?\\d+)?$/."""
    body, has_exponent, exponent = word.removeprefix("-").partition("e")
    if has_exponent and not _is_digits(exponent[1:] if exponent[:1] in ("+", "-") else exponent):
        return False
    whole, dot, fraction = body.partition(".")
    if not dot:
        return _is_digits(whole)
    if whole:
        return _is_digits(whole) and (not fraction or _is_digits(fraction))
    return _is_digits(fraction)


def _is_digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _is_hex(text: str) -> bool:
    return bool(text) and text.isascii() and all(char in "0123456789abcdefABCDEF" for char in text)


def looks_like_option(word: str) -> bool:
    """yargs' /^-[^0-9]/: "-" alone and "-5" are values, "--" is not."""
    return len(word) > 1 and word[0] == "-" and not ("0" <= word[1] <= "9")


def is_negative_number(word: str) -> bool:
    return word.startswith("-") and _is_number(word.lstrip("-"))


def _is_number(text: str) -> bool:
    return _is_digits(text.replace(".", "", 1))


def camel_case(key: str) -> str:
    """yargs-parser's camelCase expansion of a dashed key (`output-format` → `outputFormat`)."""
    if "-" not in key:
        return key
    if key == key.lower() or key == key.upper():
        key = key.lower()
    words = key.lstrip("-").split("-")
    return words[0] + "".join(word[:1].upper() + word[1:] for word in words[1:])


def quoted_list(values: Iterable[str]) -> str:
    """yargs' `stringifiedValues`: each value JSON-quoted, joined by ", "."""
    return ", ".join('"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"' for value in values)


def unknown_arguments_message(names: Sequence[str]) -> str:
    noun = "argument" if len(names) == 1 else "arguments"
    return f"Unknown {noun}: {', '.join(names)}"


def invalid_values_message(parsed: Parsed, options: Sequence[Option]) -> str:
    """yargs' choices check: one line per option given a value outside its choices, or ""."""
    by_name = {option.name: option for option in options}
    lines = []
    for name, values in parsed.values.items():
        choices = by_name[name].choices
        wrong = [value for value in values if isinstance(value, str) and value not in choices]
        if choices and wrong:
            lines.append(f"  Argument: {name}, Given: {quoted_list(wrong)}, Choices: {quoted_list(choices)}")
    return "\n".join(["Invalid values:", *lines]) if lines else ""


def validation_message(parsed: Parsed, options: Sequence[Option]) -> str:
    """The first complaint of yargs' validation, in its order: a missing value, unknown
    options (strict mode), values outside their choices; "" when the line passes."""
    if parsed.missing_value_after:
        return f"Not enough arguments following: {parsed.missing_value_after}"
    if parsed.unknown:
        return unknown_arguments_message(parsed.unknown)
    return invalid_values_message(parsed, options)


def render_help(usage: str, sections: Sequence[tuple[str, Sequence[tuple[str, str]]]]) -> str:
    """yargs' help without wrapping: the usage text, then titled sections of rows whose
    first column is padded to the section's widest entry."""
    blocks = [usage]
    for title, rows in sections:
        width = max(len(label) for label, _ in rows)
        lines = [f"  {label.ljust(width)}  {text}" for label, text in rows]
        blocks.append("\n".join([f"{title}:", *lines]))
    return "\n\n".join(blocks) + "\n"


def option_rows(options: Iterable[Option]) -> list[tuple[str, str]]:
    shown = (option for option in options if not option.hidden)
    return [(option.label(), f"{option.description}  {option.tags}") for option in shown]
