"""The docs quote every named variant exactly as fidelity applies it: the tables are the code's own."""

from __future__ import annotations

from pathlib import Path

from turngate.tools.realengines.variants import drift_tables, markdown_tables

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_docs_real_engines_has_the_variant_tables_per_engine_as_the_code_has_them() -> None:
    # Regenerate with `python -m turngate.tools.realengines.variants`.
    assert markdown_tables() in (DOCS / "real-engines.md").read_text(encoding="utf-8")


def test_docs_drift_has_what_real_drift_makes_of_each_variant_as_the_code_has_it() -> None:
    # Regenerate with `python -m turngate.tools.realengines.variants --drift`.
    assert drift_tables() in (DOCS / "drift.md").read_text(encoding="utf-8")


def test_the_docs_name_the_fail_on_drift_flag_and_the_offline_commands() -> None:
    drift = (DOCS / "drift.md").read_text(encoding="utf-8")
    real = (DOCS / "real-engines.md").read_text(encoding="utf-8")
    for text in (drift, real):
        assert "--fail-on-drift" in text
        assert "--saved" in text
    assert "test_no_variant_explains_a_deliberate_format_change" in real
