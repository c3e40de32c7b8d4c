"""`turngate engines selfcheck`: every bundled example played on every engine profile reads back as said."""

from __future__ import annotations

from turngate.engines.fake.compiler import compile_script
from turngate.engines.selfcheck import EXAMPLES, PROFILES, report, run_selfcheck


def test_every_bundled_example_reads_back_on_every_profile() -> None:
    results = run_selfcheck()
    turns = sum(len(compile_script(path)["turns"]) for path in sorted(EXAMPLES.glob("*.yaml")))
    assert len(results) == turns * len(PROFILES)
    assert [check for check in results if check.problems] == []
    assert report(results).splitlines()[-1] == f"{len(results)} passed, 0 failed"
