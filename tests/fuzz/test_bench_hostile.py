"""The hostile-shapes benchmark's plumbing (turngate/tools/bench_hostile.py), never its speed.

The shape matrix is whole (every unit x engine x delivery, named once), each shape builds bytes
the engine's reader takes the way it was meant (a reply is read back as the engine's final
message), and one child measurement of a tiny shape gives a full row. Speeds and resident sets
are `nox -s bench`'s figures, not asserted here.
"""

from __future__ import annotations

from collections import Counter

from turngate.tools import bench_hostile
from turngate.tools.bench_hostile import DELIVERIES, ENGINES, UNITS, shape_list, shapes, whole_gate

SMALL = 4096
COLUMNS = {
    "shape",
    "engine",
    "delivery",
    "mb",
    "sec",
    "mb_per_sec",
    "goal_mb_per_sec",
    "peak_rss_mb",
    "baseline_rss_mb",
    "decision",
    "meets_goal",
}


def test_every_shape_is_named_once_and_the_matrix_is_whole() -> None:
    listed = shape_list()
    keys = Counter(shape.key for shape in listed)
    assert [key for key, count in keys.items() if count > 1] == []
    assert len(shapes()) == len(listed)
    rows = {(shape.name, shape.engine, shape.delivery) for shape in listed}
    for name in UNITS:
        for engine in ENGINES:
            for delivery in DELIVERIES:
                wanted = (name, engine, delivery) in rows
                assert wanted == (engine != "iflow" or delivery != "noise"), (name, engine, delivery)
    assert {shape.delivery for shape in listed} == {*DELIVERIES, "stream"}


def test_every_shape_builds_bytes_its_engine_reads_as_meant() -> None:
    for shape in shape_list():
        stdout = shape.build(SMALL)
        assert isinstance(stdout, bytes)
        assert SMALL // 2 <= len(stdout) <= 2 * SMALL, shape.key
        assessment = whole_gate(shape.engine, stdout)
        assert assessment.decision.state, shape.key
        if shape.name in UNITS and shape.delivery == "reply":
            final = assessment.final_message
            unit = UNITS[shape.name].strip()
            assert final is not None and unit in final, shape.key
            assert final.replace(unit, "").strip() == "", shape.key  # the reply is the unit repeated


def test_one_tiny_shape_measured_in_a_child_gives_a_whole_row() -> None:
    shape = shapes()["tiny a\\n | codex | noise"]
    row = bench_hostile.measure_row(shape, 0.05)
    assert set(row) == COLUMNS, row.get("stderr_tail")
    assert (row["shape"], row["engine"], row["delivery"]) == (shape.name, "codex", "noise")
    state, reason = row["decision"].split("/")
    assert state and reason
    assert row["mb"] > 0 and row["sec"] is not None
    assert row["peak_rss_mb"] > 0 and row["baseline_rss_mb"] > 0
    assert shape.name in bench_hostile.render_table([row])
