"""A skill package (HTTP_API.md "Skills"): SKILL.md, assets/runner.json, and the schemas it names.

A package is a folder::

    <name>/SKILL.md              YAML front matter with ``name: <name>``, then the instructions
    <name>/assets/runner.json    the manifest, checked against runner.schema.json (next to this file)
    <name>/<schema files>        the JSON Schemas runner.json names under ``schemas``

``artifacts`` is a list of paths relative to the run's ``artifacts/`` folder,
each a file the run must leave there: a string, or an object whose ``pattern``
is the path (``{"role", "pattern", "required"}``, the form Skill-Runner reads).
``max_attempt`` is optional and, when present, an integer >= 1 (Decision 6; 002 "runner.json.max_attempt
(integer, >=1)"). JSON Schema calls ``2.0`` an integer, so the manifest is
validated with a type checker whose integers are Python ``int`` only (``bool``
excluded): a manifest value should mean what it was written as.

Two codes, by where the problem can be seen:

- ``SKILL_MANIFEST_INVALID``: runner.json on its own is wrong (not JSON, or not
  valid against runner.schema.json, or its engine lists contradict each other);
- ``SKILL_PACKAGE_INVALID``: anything else (a missing file, SKILL.md's front
  matter, ``id`` against ``name``, a schema file missing, outside the package,
  or not a JSON Schema).

When runner.json has several problems, the first in document order is reported.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import jsonschema
import jsonschema.exceptions
import jsonschema.protocols
import jsonschema.validators
import yaml

from turngate.base.bounded_yaml import YamlTooLarge, load_bounded, short_repr
from turngate.base.pathnames import path_problem
from turngate.base.patterns import unmatchable
from turngate.engines.readers import _bounded_json

SKILL_PACKAGE_INVALID: Final = "SKILL_PACKAGE_INVALID"
SKILL_MANIFEST_INVALID: Final = "SKILL_MANIFEST_INVALID"
SKILL_ENGINE_UNSUPPORTED: Final = "SKILL_ENGINE_UNSUPPORTED"
SKILL_EXECUTION_MODE_UNSUPPORTED: Final = "SKILL_EXECUTION_MODE_UNSUPPORTED"

ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
MODES: Final = ("auto", "interactive")
SCHEMA_KEYS: Final = ("input", "parameter", "output")
RUNNER_SCHEMA_PATH: Final = Path(__file__).with_name("runner.schema.json")

# Values in messages are shortened: a whole schema in one line helps nobody.
_MAX_SHOWN: Final = 60


class SkillPackageError(Exception):
    """A package turngate refuses, naming the file, the field (a JSON path) and the value.

    ``str()`` is one line: ``CODE: file: field: value: message`` (field and value
    left out when there is none). ``value`` is the ``repr`` of the offending value.
    The fields are read-only properties over ``args`` rather than a frozen
    dataclass: the interpreter and ``contextlib`` assign ``__traceback__`` on
    exceptions, which a frozen dataclass refuses, and ``args`` keeps pickling working.
    """

    def __init__(self, code: str, file: Path, field: str | None, value: str | None, message: str) -> None:
        super().__init__(code, file, field, value, message)
        self._fields = (code, file, field, value, message)

    @property
    def code(self) -> str:
        return self._fields[0]

    @property
    def file(self) -> Path:
        return self._fields[1]

    @property
    def field(self) -> str | None:
        return self._fields[2]

    @property
    def value(self) -> str | None:
        return self._fields[3]

    @property
    def message(self) -> str:
        return self._fields[4]

    def __str__(self) -> str:
        return f"{self.code}: {self.where(str(self.file))}"

    def where(self, file: str) -> str:
        """``file: field: value: message``, without the code (an API answer carries it apart)."""
        parts = [file] + [part for part in (self.field, self.value) if part is not None]
        return ": ".join([*parts, self.message])


@dataclass(frozen=True, slots=True)
class Skill:
    """A loaded, valid package. Schemas are the decoded JSON documents (treat them as read-only)."""

    name: str
    folder: Path
    skill_md: str  # SKILL.md as written; the runtime patch is applied to a copy in the run folder
    execution_modes: tuple[str, ...]
    engines: tuple[str, ...] | None  # None: no allow-list, every engine not in unsupported_engines
    unsupported_engines: tuple[str, ...]
    max_attempt: int | None  # None: interactive attempts are unbounded (Decision 6)
    artifacts: tuple[str, ...]
    output_schema: Mapping[str, Any] | None
    input_schema: Mapping[str, Any] | None
    parameter_schema: Mapping[str, Any] | None


def load_skill(folder: Path) -> Skill:
    """Read and check a package folder; raise `SkillPackageError` on the first problem."""
    # abspath, not resolve: the folder's name is the one the caller sees, even through a symlink.
    folder = Path(os.path.abspath(folder))
    if not folder.is_dir():
        raise SkillPackageError(SKILL_PACKAGE_INVALID, folder, None, None, "is not a folder")
    skill_md_path = folder / "SKILL.md"
    skill_md = _read_text(skill_md_path)
    name = skill_md_name(skill_md, skill_md_path)
    if name != folder.name:
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID,
            skill_md_path,
            "name",
            _shown(name),
            f"must equal the folder name {folder.name!r}",
        )
    runner_path = folder / "assets" / "runner.json"
    runner = parse_manifest(_read_text(runner_path), runner_path)
    if runner["id"] != name:
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID,
            runner_path,
            "id",
            _shown(runner["id"]),
            f"must equal the skill name {name!r}",
        )
    schemas: Mapping[str, str] = runner.get("schemas", {})
    loaded = {
        key: _schema_file(folder, runner_path, key, schemas[key]) for key in SCHEMA_KEYS if key in schemas
    }
    engines = runner.get("engines")
    return Skill(
        name=name,
        folder=folder,
        skill_md=skill_md,
        execution_modes=tuple(runner["execution_modes"]),
        engines=None if engines is None else tuple(engines),
        unsupported_engines=tuple(runner.get("unsupported_engines", ())),
        max_attempt=runner.get("max_attempt"),
        artifacts=tuple(
            item if isinstance(item, str) else str(item["pattern"]) for item in runner.get("artifacts", ())
        ),
        output_schema=loaded.get("output"),
        input_schema=loaded.get("input"),
        parameter_schema=loaded.get("parameter"),
    )


def supports(skill: Skill, engine: str, mode: str) -> str | None:
    """The stable refusal code for an engine or mode the skill does not run in, else None.

    The engine is checked first, so a request wrong on both counts names the engine.
    """
    if engine not in ENGINES or engine in skill.unsupported_engines:
        return SKILL_ENGINE_UNSUPPORTED
    if skill.engines is not None and engine not in skill.engines:
        return SKILL_ENGINE_UNSUPPORTED
    if mode not in skill.execution_modes:
        return SKILL_EXECUTION_MODE_UNSUPPORTED
    return None


def skill_md_name(text: str, file: Path) -> str:
    """The ``name`` in SKILL.md's YAML front matter (a ``---`` line, YAML, a ``---`` or ``...`` line)."""
    lines = text.removeprefix("\ufeff").splitlines()
    if not lines or lines[0].rstrip() != "---":
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, file, None, None, "must start with YAML front matter (a '---' line)"
        )
    closing = next((at for at in range(1, len(lines)) if lines[at].rstrip() in ("---", "...")), None)
    if closing is None:
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, file, None, None, "front matter has no closing '---' line"
        )
    try:
        front = load_bounded("\n".join(lines[1:closing]))
    except YamlTooLarge as error:  # an alias bomb, or nesting no front matter needs
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, file, None, None, f"front matter is too large: {error}"
        ) from None
    except yaml.YAMLError as error:
        problem = str(error).replace("\n", " ")
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, file, None, None, f"front matter is not YAML: {problem}"
        ) from None
    if not isinstance(front, dict):
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, file, None, _shown(front), "front matter must be a mapping"
        )
    if "name" not in front:
        raise SkillPackageError(SKILL_PACKAGE_INVALID, file, "name", None, "is required in the front matter")
    name = front["name"]
    if not isinstance(name, str) or not name:
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, file, "name", _shown(name), "must be a non-empty string"
        )
    return name


def parse_manifest(text: str, file: Path) -> dict[str, Any]:
    """runner.json's text to a checked document, or `SkillPackageError` (``SKILL_MANIFEST_INVALID``)."""
    try:
        document = _parse_json(text)
    except ValueError as error:
        raise SkillPackageError(
            SKILL_MANIFEST_INVALID, file, None, None, f"is not valid JSON: {error}"
        ) from None
    errors = sorted(_RUNNER_VALIDATOR.iter_errors(document), key=lambda error: _error_order(document, error))
    if errors:
        field, value, message = _friendly(errors[0])
        raise SkillPackageError(SKILL_MANIFEST_INVALID, file, field, value, message)
    assert isinstance(document, dict)  # the schema's root "type": "object"
    _check_engine_lists(document, file)
    return document


# runner.json -------------------------------------------------------------------------------


def _runner_validator() -> jsonschema.protocols.Validator:
    schema = json.loads(RUNNER_SCHEMA_PATH.read_text(encoding="utf-8"))
    base = jsonschema.Draft202012Validator
    base.check_schema(schema)
    # An integer is an int as written: not 2.0 (JSON Schema's "integer" accepts it), not a bool.
    types = base.TYPE_CHECKER.redefine("integer", lambda _checker, instance: type(instance) is int)
    strict: type[jsonschema.protocols.Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        base, type_checker=types
    )
    return strict(schema)


_RUNNER_VALIDATOR: Final = _runner_validator()


def _check_engine_lists(document: Mapping[str, Any], file: Path) -> None:
    """An engine both allowed and refused, or every engine refused, is a contradiction."""
    allowed = document.get("engines")
    refused: Sequence[str] = document.get("unsupported_engines", ())
    for at, engine in enumerate(refused):
        if allowed is not None and engine in allowed:
            raise SkillPackageError(
                SKILL_MANIFEST_INVALID,
                file,
                f"unsupported_engines[{at}]",
                _shown(engine),
                "is also listed in engines",
            )
    if allowed is None and set(ENGINES) <= set(refused):
        raise SkillPackageError(
            SKILL_MANIFEST_INVALID,
            file,
            "unsupported_engines",
            _shown(list(refused)),
            "leaves no engine to run on",
        )


def _friendly(error: jsonschema.exceptions.ValidationError) -> tuple[str | None, str | None, str]:
    """(field, value, message) for one schema error, in words a package author can act on."""
    path = list(error.absolute_path)
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    instance: Any = error.instance
    expected: Any = error.validator_value
    if path[:1] == ["max_attempt"]:
        return "max_attempt", _shown(instance), "must be an integer >= 1"
    match error.validator:
        case "required":
            missing = next(key for key in expected if key not in instance)
            return _json_path([*path, missing]), None, "is required"
        case "additionalProperties":
            known = schema.get("properties", {})
            extra = next(key for key in instance if key not in known)
            return _json_path([*path, extra]), None, f"is not a known field (known: {', '.join(known)})"
        case "type":
            return (
                _json_path(path),
                _shown(instance),
                f"must be {_TYPE_WORDS.get(str(expected), expected)}",
            )
        case "enum":
            choices = ", ".join(repr(choice) for choice in expected)
            return _json_path(path), _shown(instance), f"must be one of {choices}"
        case "minItems":
            return _json_path(path), _shown(instance), "must not be empty"
        case "uniqueItems":
            return _json_path(path), _shown(instance), "must not list the same value twice"
        case "pattern" if "description" in schema:
            return _json_path(path), _shown(instance), f"must be {schema['description']}"
    return _json_path(path), _shown(instance), error.message


_TYPE_WORDS: Final = {
    "object": "a JSON object",
    "array": "a list",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
}


def _error_order(document: object, error: jsonschema.exceptions.ValidationError) -> tuple[object, ...]:
    """Document order: each path step is the key's position in its object, or the list index.

    A missing required field sits at its parent's path, so it comes before the
    parent's fields. Ties (two keywords failing on one value) go by schema path.
    """
    position: list[int] = []
    node = document
    for part in error.absolute_path:
        if isinstance(node, dict) and part in node:
            position.append(list(node).index(part))
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            position.append(part)
            node = node[part]
        else:
            break
    return (tuple(position), [str(part) for part in error.absolute_schema_path])


def _json_path(parts: Sequence[object]) -> str | None:
    """``schemas.output``, ``execution_modes[1]``; None for the document itself."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or None


# Schema files ------------------------------------------------------------------------------


def _schema_file(folder: Path, runner_path: Path, key: str, relative: str) -> dict[str, Any]:
    field = f"schemas.{key}"
    unholdable = path_problem(relative)
    if unholdable is not None:
        raise SkillPackageError(SKILL_PACKAGE_INVALID, runner_path, field, _shown(relative), unholdable)
    path = folder / relative
    # resolve() follows symlinks, so a link pointing out of the package is caught too.
    if not path.resolve().is_relative_to(folder.resolve()):
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, runner_path, field, _shown(relative), "must stay inside the package"
        )
    if not path.is_file():
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, runner_path, field, _shown(relative), "names no file in the package"
        )
    text = _read_text(path)
    problem = _schema_problem(text)
    if problem is not None:
        raise SkillPackageError(SKILL_PACKAGE_INVALID, path, *problem)
    schema: dict[str, Any] = _parse_json(text)  # parsed again: the caller's own copy, never the cache's
    return schema


MAX_JSON_DEPTH: Final = 64  # runner.json and the schemas: deeper is refused before any check walks it


def _parse_json(text: str) -> Any:
    """A package's JSON file, or ValueError: also for nesting deeper than `MAX_JSON_DEPTH`, measured
    before decoding (json, and then jsonschema walking it, would meet it as a RecursionError)."""
    if _bounded_json.too_deep(text, limit=MAX_JSON_DEPTH):
        raise ValueError(f"nested deeper than {MAX_JSON_DEPTH}")
    return json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_no_constant)


@functools.lru_cache(maxsize=512)
def _schema_problem(text: str) -> tuple[str | None, str | None, str] | None:
    """What is wrong with a schema file's text (field, value shown, message), or None.

    A function of the text alone, kept for texts seen before: checking against the metaschema is
    most of what loading a package costs, and a server loads the same package for every job.
    """
    try:
        schema = _parse_json(text)
    except ValueError as error:
        return None, None, f"is not valid JSON: {error}"
    if not isinstance(schema, dict):
        return None, _shown(schema), "must be a JSON Schema object"
    dialect = schema.get("$schema")
    validator_class: type[jsonschema.protocols.Validator] = jsonschema.Draft202012Validator  # the default
    if dialect is not None:
        # validator_for answers the default for a dialect it does not know; refuse it instead.
        unknown: Any = None
        known = (
            jsonschema.validators.validator_for(schema, default=unknown) if isinstance(dialect, str) else None
        )
        if known is None:
            return "$schema", _shown(dialect), "is not a JSON Schema dialect jsonschema knows"
        validator_class = known
    # What check_schema does, but every error, so the first in document order can be named.
    meta = validator_class(validator_class.META_SCHEMA, format_checker=validator_class.FORMAT_CHECKER)
    problems = sorted(meta.iter_errors(schema), key=lambda error: _error_order(schema, error))
    if problems:
        first = problems[0]
        return (
            _json_path(list(first.absolute_path)),
            _shown(first.instance),
            f"is not a valid JSON Schema: {first.message}",
        )
    for where, pattern in _patterns(schema):  # matched against model-written text at every turn
        reason = unmatchable(pattern)
        if reason is not None:
            return _json_path(where), _shown(pattern), reason
    return None


def _patterns(schema: Any) -> Iterator[tuple[list[str | int], str]]:
    """Every regular expression a schema matches instances with: ``pattern`` values and
    ``patternProperties`` keys, with where each is."""
    stack: list[tuple[list[str | int], Any]] = [([], schema)]
    while stack:
        where, node = stack.pop()
        if isinstance(node, list):
            stack.extend(([*where, index], item) for index, item in enumerate(node))
        elif isinstance(node, dict):
            if isinstance(node.get("pattern"), str):
                yield [*where, "pattern"], node["pattern"]
            if isinstance(node.get("patternProperties"), dict):
                for key in node["patternProperties"]:
                    yield [*where, "patternProperties", key], key
            stack.extend(
                ([*where, key], item)
                for key, item in node.items()
                if isinstance(item, dict | list) and key not in _DATA_KEYWORDS
            )


_DATA_KEYWORDS: Final = frozenset({"const", "enum", "default", "examples"})  # values, not schemas


# Reading -----------------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SkillPackageError(SKILL_PACKAGE_INVALID, path, None, None, "is missing") from None
    except UnicodeDecodeError as error:
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, path, None, None, f"is not UTF-8: {error.reason}"
        ) from None
    except OSError as error:
        raise SkillPackageError(
            SKILL_PACKAGE_INVALID, path, None, None, error.strerror or str(error)
        ) from None


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys; {"max_attempt": 0, "max_attempt": 3} must not pass as 3.
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise ValueError(f"duplicate key {key!r}")
        document[key] = value
    return document


def _no_constant(name: str) -> object:
    # json.loads accepts NaN and Infinity, which are not JSON.
    raise ValueError(f"{name} is not JSON")


def _shown(value: object) -> str:
    return short_repr(value, _MAX_SHOWN, cut="...")  # never the whole value: it may stand for 10^9 others
