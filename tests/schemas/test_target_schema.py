"""The target file's schema: what `turngate probe` writes validates; the schema and the reader agree."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.schemas.schemas import CALL_LOG, ROOT, TARGET, line_problems, load, problems
from tests.server.miniatures.app import Behaviour, serve
from tests.turngate_cli import turngate
from turngate.engines.fake.install import install
from turngate.judge.connectors.http_options import (
    _OPTION_FIELDS,
    AUTH_SCHEMES,
    EVENTS_SOURCES,
    KNOWN_CAPABILITIES,
    TargetProblem,
    http_options,
)
from turngate.protocol.skill_patch import MODULE_ORDER


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """`turngate probe --out` against a miniature Skill-Runner that runs the fake codex (which keeps a
    call log) and serves each attempt's audit record: the probe learns its patch modules and finds its
    audit source, so the target file has every field the probe writes. Yields the folder."""
    root = tmp_path_factory.mktemp("probed")
    install(root / "bin", scripts=root / "scripts", call_log=root / "calls.jsonl")
    (root / "scripts").mkdir()
    with serve(Behaviour(engine_bin=str(root / "bin"), audit="agrees")) as (url, _miniature):
        done = turngate(
            "probe", "--target", url, "--scripts", str(root / "scripts"),
            "--call-log", str(root / "calls.jsonl"), "--engine", "codex", "--no-timeout-probe",
            "--model", "codex=gpt-schema", "--auth-env", "TG_TOKEN", "--out", "target.yaml",
            cwd=root, env={"TG_TOKEN": "not-a-secret"},
        )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    yield root


def test_the_target_file_the_probe_writes_validates(probed: Path) -> None:
    written = yaml.safe_load((probed / "target.yaml").read_text(encoding="utf-8"))
    # what the probe found, so the file is worth validating
    assert {"engines", "models", "auth", "events_source", "patch_modules", "audit_source"} <= set(written)
    assert problems(TARGET, written) == []


def test_the_call_log_the_servers_engines_wrote_validates(probed: Path) -> None:
    """The fake codex the miniature ran for the probe's jobs, with the patched SKILL.md it read."""
    text = (probed / "calls.jsonl").read_text(encoding="utf-8")
    assert any(json.loads(line).get("skills") for line in text.splitlines())
    assert line_problems(CALL_LOG, text) == []


@pytest.mark.parametrize(
    "target", sorted((ROOT / "docs").rglob("*target*.yaml")), ids=lambda path: str(path.relative_to(ROOT))
)
def test_the_target_files_in_docs_validate(target: Path) -> None:
    assert problems(TARGET, yaml.safe_load(target.read_text(encoding="utf-8"))) == []


def test_the_readmes_target_file_validates() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    yaml_blocks = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    blocks = [block for block in yaml_blocks if "scripts_dir:" in block]
    assert blocks, "README.md shows no target file (a yaml block with scripts_dir)"
    for block in blocks:
        assert problems(TARGET, yaml.safe_load(block)) == []


def test_the_schema_has_the_fields_and_names_the_reader_knows() -> None:
    schema = load(TARGET)
    fields = schema["properties"]
    assert sorted(fields) == sorted(_OPTION_FIELDS)
    assert sorted(fields["capabilities"]["items"]["enum"]) == sorted(KNOWN_CAPABILITIES)
    assert fields["events_source"]["enum"] == list(EVENTS_SOURCES)
    assert fields["auth"]["properties"]["scheme"]["enum"] == list(AUTH_SCHEMES)
    assert fields["patch_modules"]["additionalProperties"]["enum"] == list(MODULE_ORDER)


VALID: dict[str, Any] = {"base_url": "http://127.0.0.1:8765", "scripts_dir": "/tmp/tg/scripts"}

# Each is refused by the schema and by the reader (its one-line message names the field).
BROKEN: list[tuple[str, dict[str, Any], str]] = [
    ("a base_url that is no http URL", {"base_url": "ftp://127.0.0.1"}, "base_url"),
    ("no scripts_dir", {"scripts_dir": ...}, "scripts_dir"),
    ("a field turngate does not know", {"base_uri": "http://x"}, "base_uri"),
    ("jobs 0", {"jobs": 0}, "jobs"),
    ("jobs a boolean", {"jobs": True}, "jobs"),
    ("retries below 0", {"retries": -1}, "retries"),
    ("an events source that does not exist", {"events_source": "sse"}, "events_source"),
    ("a capability that does not exist", {"capabilities": ["history", "teleport"]}, "capabilities"),
    ("an auth scheme that does not exist", {"auth": {"scheme": "digest", "env": "TOKEN"}}, "auth.scheme"),
    ("slots 0", {"slots": 0}, "slots"),
    ("a real timeout of 0 s", {"session_timeout_real_sec": 0}, "session_timeout_real_sec"),
    ("a null call log", {"call_log": None}, "call_log"),
    ("no {attempt}", {"audit_source": {"path": "/{job}", "marker_found": "ok"}}, "audit_source.path"),
    ("no marker_found", {"audit_source": {"path": "/{job}/{attempt}"}}, "audit_source.marker_found"),
    ("patch modules a list", {"patch_modules": ["## Rules"]}, "patch_modules"),
]  # fmt: skip


@pytest.mark.parametrize(("broken", "change", "field"), BROKEN, ids=[item[0] for item in BROKEN])
def test_a_broken_target_file_is_refused_by_the_schema_and_the_reader(
    broken: str, change: dict[str, Any], field: str
) -> None:
    assert problems(TARGET, VALID) == [] and http_options(VALID, None).jobs == 1
    raw = {**VALID, **change}
    raw = {name: value for name, value in raw.items() if value is not ...}
    assert problems(TARGET, raw) != [], broken
    with pytest.raises(TargetProblem, match=re.escape(field)) as refused:
        http_options(raw, Path("target.yaml"))
    assert str(refused.value).startswith("target.yaml: ") and "\n" not in str(refused.value)


def test_the_schema_refuses_what_the_reader_lets_pass_silently() -> None:
    """A model for an engine turngate does not fake, or a module name the spec does not have, would be
    ignored by the run; the schema says so."""
    assert problems(TARGET, {**VALID, "models": {"aider": "opus"}}) != []
    assert problems(TARGET, {**VALID, "patch_modules": {"## Rules": "rules-module"}}) != []
