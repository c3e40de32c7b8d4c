"""The skill package a case installs: SKILL.md, assets/runner.json and its schemas, from a scenario's
``skill`` block, in the form real servers of this family accept."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

GREETING_SCHEMA: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["greeting"],
    "properties": {"greeting": {"type": "string"}},
    "additionalProperties": False,
}
INPUT_SCHEMA: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    # The case token rides inline in the job's input; real servers refuse an undeclared or
    # file-sourced key given inline (HTTP_API.md, "Inputs").
    "properties": {"case": {"type": "string", "x-input-source": "inline"}},
    "required": ["case"],
}
PARAMETER_SCHEMA: Final[Mapping[str, Any]] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {},
}
SKILL_VERSION: Final = "1.0.0"


def write_skill(folder: Path, spec: Mapping[str, Any], name: str = "greet") -> Path:
    """A skill package from a scenario's ``skill`` block: SKILL.md, assets/runner.json, its schemas.

    Keys (all optional): ``output_schema`` (default the greeting schema; None for a schema that
    accepts any object, since real servers require one), ``max_attempt``, ``artifacts``, ``modes``.
    The package is one real servers accept: ``version``, and ``schemas.input``/``parameter``/``output``
    naming files that exist, the case token declared as an inline input.
    """
    root = folder / name
    (root / "assets").mkdir(parents=True)
    (root / "SKILL.md").write_text(
        f"---\nname: {name}\n---\n\n# Greet\n\nGreet the user.\n", encoding="utf-8"
    )
    output_schema = spec.get("output_schema", GREETING_SCHEMA)
    schemas = {
        "input": INPUT_SCHEMA,
        "parameter": PARAMETER_SCHEMA,
        "output": output_schema if output_schema is not None else {"type": "object"},
    }
    for key, schema in schemas.items():
        (root / "assets" / f"{key}.schema.json").write_text(json.dumps(schema), encoding="utf-8")
    runner: dict[str, Any] = {
        "id": name,
        "version": SKILL_VERSION,
        "execution_modes": list(spec.get("modes", ("auto", "interactive"))),
        "schemas": {key: f"assets/{key}.schema.json" for key in schemas},
    }
    if spec.get("max_attempt") is not None:
        runner["max_attempt"] = spec["max_attempt"]
    if spec.get("artifacts"):  # objects, the form every server of this family reads (not only strings)
        runner["artifacts"] = [
            {"role": path.replace(".", "_").replace("/", "_"), "pattern": path, "required": True}
            for path in spec["artifacts"]
        ]
    (root / "assets" / "runner.json").write_text(json.dumps(runner, indent=2), encoding="utf-8")
    return root


def skill_id(case: str) -> str:
    """One skill per case, so reinstalls never collide and HTTP cases can run in parallel.

    A case id is letters, digits, ``-`` and ``_`` (see ``case_folder.case_id``): already a valid folder
    and SKILL.md name; lower-cased because some servers fold skill ids.
    """
    return case.lower()
