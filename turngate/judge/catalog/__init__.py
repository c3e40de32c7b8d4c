"""The scenario catalog: ``scenarios/**/*.yaml`` read, validated and turned into ``Scenario`` values.

A bad file is one error naming the file, the field and the value (the first
problem in document order), never a traceback and never a silently skipped case.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.base.data_yaml import load_data
from turngate.base.shipped_data import data_dir
from turngate.judge.catalog import cache
from turngate.judge.catalog.checks import CONVENTION, REFERENCE, Checks
from turngate.judge.catalog.sentences import sentences

SCHEMA_PATH: Final = Path(__file__).with_name("scenario.schema.json")
CATALOG_DIR: Final = data_dir("scenarios")  # the shipped catalog (checkout or installed package)
# The catalog package itself: the sentences, conventions and scopes beside this module.
CATALOG_PACKAGE_DIR: Final = Path(__file__).resolve().parent
CATALOG_VERSION: Final = "1"
ENGINES: Final = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")
ACTIONS: Final = ("start", "reply", "advance_clock", "cancel", "restart")


class CatalogError(ValueError):
    """A scenario file turngate refuses: ``file: field: value: message``."""

    def __init__(self, file: Path, field: str, value: object, message: str) -> None:
        super().__init__(f"{file}: {field}: {value!r}: {message}")
        self.file, self.field, self.value, self.message = file, field, value, message


@dataclass(frozen=True, slots=True)
class Step:
    action: str
    argument: Any
    expect: Mapping[str, Any]
    by: Mapping[str, str] = field(default_factory=dict)  # this step's authorities, over the scenario's
    slots_full: bool = False  # other work holds every free slot during this step (slot_fill)


@dataclass(frozen=True, slots=True)
class Scenario:
    id: str
    title: str
    path: Path
    source: Mapping[str, str]
    level: str
    kind: str
    engines: tuple[str, ...]
    capabilities: frozenset[str]
    skill: Mapping[str, Any]
    runtime: Mapping[str, Any]
    engine_script: Mapping[str, Any]
    steps: tuple[Step, ...]
    readings: Mapping[str, Mapping[str, Mapping[str, Any]]]  # reading -> step index -> expect
    default_reading: str | None
    gemini_output_format: str | None = None
    by: Mapping[str, str] = field(default_factory=dict)  # check key -> authority, scenario-wide
    reading_by: Mapping[str, Mapping[str, Mapping[str, str]]] = field(default_factory=dict)
    given: tuple[str, ...] = ()  # checks establishing the GIVEN (Checks.given)
    editions: tuple[str, ...] = ()  # the editions it belongs to; empty: written from the seed, any edition

    def planned_under(self, edition: str) -> bool:
        """Whether a run judged by ``edition`` plans this scenario (one written for others: not)."""
        return not self.editions or edition in self.editions

    @property
    def capability(self) -> str:
        return self.id.split("/", 1)[0]

    def expectations(self, reading: str | None) -> tuple[Mapping[str, Any], ...]:
        """Each step's expectations under a reading of an ambiguous scenario (None: its default)."""
        chosen = reading or self.default_reading
        overrides = self.readings.get(chosen, {}) if chosen else {}
        return tuple(overrides.get(str(index), step.expect) for index, step in enumerate(self.steps))

    def checks(self) -> Checks:
        """What this scenario checks and on whose authority, as plain data for the verdict."""
        return Checks(
            self.id,
            tuple(step.expect for step in self.steps),
            tuple(step.action for step in self.steps),
            dict(self.by),
            tuple(dict(step.by) for step in self.steps),
            {name: dict(overrides) for name, overrides in self.readings.items()},
            self.default_reading,
            self.reading_by,
            self.given,
        )


def _schema() -> Mapping[str, Any]:
    loaded: Mapping[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


def load_scenario(path: Path, root: Path) -> Scenario:
    try:
        document = load_data(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise CatalogError(path, "(file)", None, str(error)) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "(document)"
        raise CatalogError(path, where, None, f"not YAML: {getattr(error, 'problem', error)}") from None
    import jsonschema  # here: a catalog read from the cache (most commands) never validates a file

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(
        validator.iter_errors(document), key=lambda problem: [str(part) for part in problem.absolute_path]
    )
    if errors:
        first = errors[0]  # the first problem in document order
        field = ".".join(str(part) for part in first.absolute_path) or "(root)"
        raise CatalogError(path, field, _short(first.instance), first.message.split("\n")[0][:200])
    expected_id = path.relative_to(root).with_suffix("").as_posix()
    if document["id"] != expected_id:
        raise CatalogError(path, "id", document["id"], f"must equal the file's path {expected_id!r}")
    steps = tuple(_step(path, index, item) for index, item in enumerate(document["steps"]))
    if steps[0].action != "start":
        raise CatalogError(path, "steps[0]", steps[0].action, "the first step must be `start`")
    ambiguous = document.get("ambiguous") or {}
    readings = ambiguous.get("readings", {})
    if ambiguous and ambiguous["default"] not in readings:
        raise CatalogError(path, "ambiguous.default", ambiguous["default"], "must name one of the readings")
    for name, overrides in readings.items():
        for key in overrides:
            if not key.isdigit() or int(key) >= len(steps):
                raise CatalogError(path, f"ambiguous.readings.{name}", key, "must be the index of a step")
    tags = document["tags"]
    scenario = Scenario(
        id=document["id"],
        title=document["title"],
        path=path,
        source=document["source"],
        level=document["level"],
        kind=tags.get("kind", "scenario"),
        engines=tuple(tags["engines"]),
        capabilities=frozenset(tags.get("capabilities", ())),
        skill=document.get("skill", {}),
        runtime=document["runtime"],
        engine_script=document["engine_script"],
        steps=steps,
        readings=readings,
        default_reading=ambiguous.get("default"),
        gemini_output_format=tags.get("gemini_output_format"),
        by=document.get("by", {}),
        reading_by=ambiguous.get("by", {}),
        given=tuple(document.get("given", ())),
        editions=tuple(document.get("editions", ())),
    )
    _check_authorities(path, scenario)
    return scenario


def _step(path: Path, index: int, item: Mapping[str, Any]) -> Step:
    action = next(key for key in item if key in ACTIONS)
    return Step(
        action, item[action], item.get("expect", {}), item.get("by", {}), bool(item.get("slots_full", False))
    )


def _check_authorities(path: Path, scenario: Scenario) -> None:
    """Every check names what backs it, and every sentence it cites exists."""
    known = sentences()
    for where, table in [("by", scenario.by)] + [
        (f"steps[{n}].by", s.by) for n, s in enumerate(scenario.steps)
    ]:
        for key, authority in table.items():
            if authority not in (CONVENTION, REFERENCE) and authority not in known:
                raise CatalogError(
                    path,
                    f"{where}.{key}",
                    authority,
                    "no such sentence in turngate/judge/catalog/sentences.yaml",
                )
    checks = scenario.checks()
    for reading, index, key in checks.checked_keys():
        if checks.authority(index, key, reading) is None:
            raise CatalogError(
                path,
                f"steps[{index}].expect.{key}" + (f" (reading {reading})" if reading else ""),
                scenario.expectations(reading)[index].get(key.split(".", 1)[0]),
                "no authority: cite a spec sentence, `convention` or `reference` in `by`",
            )


def _short(value: object) -> object:
    text = repr(value)
    return value if len(text) <= 80 else text[:77] + "..."


# Catalogs read in this process, by their files as they were then (path, size, mtime): a scenario is
# frozen, so one reading serves every caller (a test process, a pytest session, a judge asking again);
# a file changed, added or removed is a new key.
_READ: Final[dict[tuple[Any, ...], tuple[Scenario, ...]]] = {}
_READ_KEPT: Final = 4


def load_catalog(root: Path = CATALOG_DIR, *, paths: Sequence[Path] | None = None) -> tuple[Scenario, ...]:
    """Every scenario under ``root``, sorted by ID; IDs are unique."""
    files = sorted(paths) if paths is not None else sorted(root.rglob("*.yaml"))
    if not files:
        raise CatalogError(root, "(catalog)", None, "no scenario files")
    try:
        key: tuple[Any, ...] | None = (
            str(root),
            *((str(path), (stat := path.stat()).st_size, stat.st_mtime_ns) for path in files),
        )
    except OSError:  # a file gone meanwhile: read as asked, and let the reading say what is missing
        key = None
    if key is not None and key in _READ:
        return _READ[key]
    kept_as = cache.key(root, files) if key is not None else None
    catalog = (
        cache.kept(kept_as, lambda: _read_catalog(root, files))
        if kept_as is not None
        else _read_catalog(root, files)
    )
    if key is not None:
        if len(_READ) >= _READ_KEPT:  # a long-lived process never holds many: the oldest goes
            del _READ[next(iter(_READ))]
        _READ[key] = catalog
    return catalog


def _read_catalog(root: Path, files: Sequence[Path]) -> tuple[Scenario, ...]:
    scenarios = [load_scenario(path, root) for path in files]
    seen: dict[str, Path] = {}
    for scenario in scenarios:
        if scenario.id in seen:
            raise CatalogError(scenario.path, "id", scenario.id, f"already used by {seen[scenario.id]}")
        seen[scenario.id] = scenario.path
    return tuple(sorted(scenarios, key=lambda scenario: scenario.id))
