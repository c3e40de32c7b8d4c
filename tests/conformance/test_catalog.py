"""The catalog itself: every file valid, IDs unique, every spec heading covered, quotes verbatim."""

from __future__ import annotations

from pathlib import Path

import pytest

from turngate.judge.catalog import CATALOG_DIR, CatalogError, load_catalog
from turngate.judge.catalog.editions import edition_named
from turngate.judge.catalog.spec import SHARED_SPEC_DIR, SPEC_DIR, SPEC_IDS

CATALOG = load_catalog()
BY_ID = {scenario.id: scenario for scenario in CATALOG}


@pytest.mark.parametrize("spec_id", sorted(SPEC_IDS.values()))
def test_every_spec_scenario_and_decision_has_a_case(spec_id: str) -> None:
    assert spec_id in BY_ID, f"no scenario file scenarios/{spec_id}.yaml for this spec heading"


@pytest.mark.parametrize("scenario", CATALOG, ids=[scenario.id for scenario in CATALOG])
def test_quotes_are_verbatim(scenario: object) -> None:
    source = scenario.source  # type: ignore[attr-defined]
    if "edition" in source:  # quoted from a later edition's text, shipped with the package
        text = edition_named(source["edition"]).texts[source["file"].split("_", 1)[0]].text()
    else:
        # the spec's own files ship with the package; the other reference texts are beside the repository
        folder = SPEC_DIR if source["file"].startswith("0") else SHARED_SPEC_DIR.parent
        if not (folder / source["file"]).is_file():
            pytest.skip(f"{source['file']} is not beside the repository ({folder})")
        text = (folder / source["file"]).read_text(encoding="utf-8")
    lines = {line.strip() for line in text.splitlines()}
    for line in source["quote"].strip().splitlines():
        assert line.strip() in lines or line.strip() in text, f"not in {source['file']}: {line!r}"
    assert source["heading"] in text


def test_the_shipped_catalog_loads_with_unique_ids() -> None:
    assert len(BY_ID) == len(CATALOG)
    assert all(scenario.path.is_relative_to(CATALOG_DIR) for scenario in CATALOG)


def _write(root: Path, relative: str, text: str) -> Path:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


GOOD = (CATALOG_DIR / "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("text", "field", "words"),
    [
        (GOOD.replace("level: MUST", "level: MAYBE"), "level", "'MAYBE'"),
        (GOOD.replace("mode: interactive", "mode: batch"), "runtime.mode", "'batch'"),
        (GOOD.replace("  - reply: Formal", "  - shout: Formal"), "steps.1", "shout"),
        (
            GOOD.replace("id: interactive-run-lifecycle/max-attempt/exceeded-fails", "id: a/b/c"),
            "id",
            "'a/b/c'",
        ),
        (GOOD.replace("steps:\n  - start: null", "steps:\n  - cancel: null"), "steps[0]", "cancel"),
        (GOOD + "  - reply: [unclosed\n", "line", "not YAML"),
    ],
)
def test_a_bad_scenario_file_is_one_error_naming_file_field_and_value(
    tmp_path: Path, text: str, field: str, words: str
) -> None:
    path = _write(tmp_path, "interactive-run-lifecycle/max-attempt/exceeded-fails.yaml", text)
    with pytest.raises(CatalogError) as caught:
        load_catalog(tmp_path)
    message = str(caught.value)
    assert message.startswith(str(path))
    assert field in message
    assert words in message
    assert "\n" not in message


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "x/y/z.yaml",
        GOOD.replace("id: interactive-run-lifecycle/max-attempt/exceeded-fails", "id: x/y/z"),
    )
    assert [scenario.id for scenario in load_catalog(tmp_path)] == ["x/y/z"]
    with pytest.raises(CatalogError, match="already used by"):
        load_catalog(tmp_path, paths=[path, path])  # the same ID reached twice (e.g. through a symlink)
