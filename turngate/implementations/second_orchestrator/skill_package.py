"""The skill package: SKILL.md, assets/runner.json (max_attempt, schemas), the output schema.

``max_attempt`` is optional and must be an integer >= 1 (Decision 6); anything else refuses
the package, which the command protocol reports as ``package-refused``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class PackageRefused(Exception):
    pass


@dataclass(frozen=True)
class Skill:
    name: str
    skill_md: str
    max_attempt: int | None
    output_schema: dict[str, Any] | None
    modes: tuple[str, ...]
    artifacts: tuple[str, ...]


def load(skill_dir: Path) -> Skill:
    runner_path = skill_dir / "assets" / "runner.json"
    try:
        runner = json.loads(runner_path.read_text(encoding="utf-8")) if runner_path.exists() else {}
    except (OSError, ValueError) as error:
        raise PackageRefused(f"runner.json unreadable: {error}") from error
    if not isinstance(runner, dict):
        raise PackageRefused("runner.json is not an object")
    max_attempt = runner.get("max_attempt")
    if max_attempt is not None and (
        isinstance(max_attempt, bool) or not isinstance(max_attempt, int) or max_attempt < 1
    ):
        raise PackageRefused(f"invalid max_attempt {max_attempt!r}: an integer >= 1 is required")
    schemas = runner.get("schemas") if isinstance(runner.get("schemas"), dict) else {}
    assert isinstance(schemas, dict)
    output_schema: dict[str, Any] | None = None
    output_ref = schemas.get("output")
    if isinstance(output_ref, str):
        try:
            loaded = json.loads((skill_dir / output_ref).read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise PackageRefused(f"output schema unreadable: {error}") from error
        output_schema = loaded if isinstance(loaded, dict) else None
    modes = runner.get("execution_modes")
    artifacts = runner.get("artifacts")
    skill_md_path = skill_dir / "SKILL.md"
    return Skill(
        name=str(runner.get("id") or skill_dir.name),
        skill_md=skill_md_path.read_text(encoding="utf-8") if skill_md_path.exists() else "",
        max_attempt=max_attempt,
        output_schema=output_schema,
        modes=tuple(str(m) for m in modes) if isinstance(modes, list) else ("auto", "interactive"),
        artifacts=tuple(str(a) for a in artifacts) if isinstance(artifacts, list) else (),
    )
