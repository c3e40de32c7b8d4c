"""Hostile skill packages and ids sent to `turngate serve`: each a 4xx with a one-line reason naming the
file and field, never a 500 with a traceback, and never work proportional to what a value expands to.

Each attack here once answered HTTP 500 (RecursionError, ValueError for a NUL, ENAMETOOLONG) or held
the server for seconds (a SKILL.md front matter standing for 10^8 values).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.server.conftest import Server, multipart, zip_folder
from tests.server.test_hostile_requests import _zip
from turngate.judge.skill_writer import write_skill

ALIAS_BOMB = "\n".join(
    ['a0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    + [f"a{n}: &a{n} [{', '.join([f'*a{n - 1}'] * 10)}]" for n in range(1, 9)]
)


def _package(server: Server, change: Callable[[Path], None], name: str = "greet") -> tuple[bytes, str]:
    folder = server.root / "packages" / uuid.uuid4().hex
    skill = write_skill(folder, {}, name=name)
    change(skill)
    return zip_folder(skill)


def _runner(edit: Callable[[dict[str, Any]], None]) -> Callable[[Path], None]:
    def change(skill: Path) -> None:
        path = skill / "assets" / "runner.json"
        runner = json.loads(path.read_text(encoding="utf-8"))
        edit(runner)
        path.write_text(json.dumps(runner), encoding="utf-8")

    return change


def _write(relative: str, text: str) -> Callable[[Path], None]:
    def change(skill: Path) -> None:
        (skill / relative).write_text(text, encoding="utf-8")

    return change


def _skill_md(front: str) -> Callable[[Path], None]:
    return _write("SKILL.md", f"---\n{front}\n---\n\n# Greet\n")


ATTACKS = [
    pytest.param(
        _skill_md(f"{ALIAS_BOMB}\nname: *a8"), "SKILL.md", "front matter is too large", id="md-alias-bomb"
    ),
    pytest.param(_skill_md("name: " + "[" * 5000 + "]" * 5000), "SKILL.md", "too large", id="md-nested"),
    pytest.param(
        _write("assets/runner.json", "[" * 100_000 + "]" * 100_000), "runner.json", "nested", id="runner-list"
    ),
    pytest.param(
        _write("assets/runner.json", '{"a":' * 50_000 + "1" + "}" * 50_000),
        "runner.json",
        "nested",
        id="runner-obj",
    ),
    pytest.param(
        _write("assets/output.schema.json", '{"items":' * 900 + "{}" + "}" * 900),
        "output.schema.json",
        "nested deeper than 64",
        id="schema-900-deep",
    ),
    pytest.param(
        _write("assets/output.schema.json", json.dumps({"properties": {"a": {"pattern": "(?=x)y"}}})),
        "output.schema.json",
        "properties.a.pattern: '(?=x)y': not a pattern that can be matched in linear time",
        id="schema-lookahead",
    ),
    pytest.param(
        _write("assets/input.schema.json", json.dumps({"patternProperties": {"(a)\\1": {}}})),
        "input.schema.json",
        "not a pattern that can be matched in linear time",
        id="schema-backreference",
    ),
    pytest.param(
        _runner(lambda runner: runner["schemas"].update(output="assets/a\u0000b.json")),
        "runner.json",
        "schemas.output",
        id="schema-path-nul",
    ),
    pytest.param(
        _runner(lambda runner: runner["schemas"].update(output="assets/\ud800.json")),
        "runner.json",
        "schemas.output",
        id="schema-path-surrogate",
    ),
    pytest.param(
        _runner(lambda runner: runner["schemas"].update(output="assets/" + "x" * 300 + ".json")),
        "runner.json",
        "schemas.output",
        id="schema-path-component-300",
    ),
]


@pytest.mark.parametrize(("attack", "file", "words"), ATTACKS)
def test_a_hostile_package_is_a_400_naming_its_file(
    server: Server, attack: Callable[[Path], None], file: str, words: str
) -> None:
    body, content_type = _package(server, attack)
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400, answer
    message = answer["error"]["message"]
    assert file in message and words in message, message
    assert "\n" not in message and "Traceback" not in message
    assert server.call("GET", "/v1/health")[0] == 200


@pytest.mark.parametrize(
    "entry",
    [
        pytest.param("greet/" + "x" * 300, id="component-300"),
        pytest.param("greet/" + "/".join(["abcdefghi"] * 500), id="path-5000"),
        pytest.param("x" * 300 + "/SKILL.md", id="folder-300"),
    ],
)
def test_a_package_entry_name_the_file_system_cannot_hold_is_a_400(server: Server, entry: str) -> None:
    body, content_type = multipart(
        _zip([(entry, b"x", None), ("greet/SKILL.md", b"---\nname: greet\n---\n", None)])
    )
    code, answer = server.call("POST", "/v1/skill-packages/install", raw=body, content_type=content_type)
    assert code == 400, answer
    assert "\n" not in answer["error"]["message"]


def test_a_job_for_a_300_character_skill_id_is_refused_not_a_500(server: Server) -> None:
    request = {"skill_id": "s" * 300, "engine": "codex", "input": {}, "runtime_options": {}}
    code, answer = server.call("POST", "/v1/jobs", request)
    assert code in (400, 404), answer
    assert "\n" not in answer["error"]["message"]


def test_a_job_upload_with_a_300_character_entry_name_is_a_400(server: Server) -> None:
    from tests.server.test_api import waiting_job

    job = waiting_job(server)
    body, content_type = multipart(_zip([("x" * 300, b"data", None)]))
    code, answer = server.call("POST", f"/v1/jobs/{job}/upload", raw=body, content_type=content_type)
    assert code == 400, answer
    assert "\n" not in answer["error"]["message"]


@pytest.mark.parametrize("number", ["1e999", "-1e999", "NaN", "Infinity", "-Infinity"])
def test_a_number_json_cannot_carry_is_a_400_and_starts_no_run(server: Server, number: str) -> None:
    assert server.install()[0] == 200
    runs = server.root / "data" / "runs"
    before = sorted(runs.iterdir()) if runs.exists() else []
    body = '{"skill_id": "greet", "engine": "codex", "input": {"case": "x", "n": NUMBER}}'.replace(
        "NUMBER", number
    )
    code, answer = server.call("POST", "/v1/jobs", raw=body.encode())
    assert code == 400, answer
    assert number.lstrip("-") in answer["error"]["message"]
    assert (sorted(runs.iterdir()) if runs.exists() else []) == before
