"""`turngate coverage`: the scope file is complete and valid, and the matrix of a small hand-made
catalog is exactly what its steps, readings and authorities say."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import jsonschema
import pytest
import yaml

from turngate.cli.main import main
from turngate.judge.catalog import load_catalog
from turngate.judge.catalog.sentences import sentences
from turngate.tools.coverage import (
    ANY,
    SCOPE_PATH,
    SCOPE_SCHEMA_PATH,
    Combo,
    Scope,
    ScopeError,
    compute,
    load_scope,
    render_markdown,
    step_positions,
)

WAITS = "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting#then"
PENDING = "interactive-run-lifecycle/pausable-lifecycle/incomplete-turn-enters-waiting#and1"
STRICT = "interactive-run-lifecycle/strict-switch/resumable-strict-true#then"
MAX = "interactive-run-lifecycle/max-attempt/exceeded-fails#then"
AUTO = "interactive-run-lifecycle/completion-gate-by-mode/auto-success#then"
GEMINI = "interactive-engine-turn-protocol/adapter-cli-command/gemini-auto#then"
NEVER = "interactive-run-lifecycle/max-attempt/exceeded-fails#and1"
SOURCE = """source:
  file: 001_af4670374c42ecdf.txt
  heading: h
  quote: q
level: MUST
"""


def _write(root: Path, scenario_id: str, body: str) -> None:
    path = root / f"{scenario_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"id: {scenario_id}\ntitle: t\n{SOURCE}{body}", encoding="utf-8")


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    # resumable: start waits, a reply waits again, the clock runs past the deadline of that second
    # wait in two goes (strict: the timeout alone), then a restart.
    _write(
        tmp_path,
        "c/r/resumable",
        f"""tags: {{engines: [codex, gemini]}}
runtime: {{mode: interactive, profile: resumable}}
engine_script: {{turns: [{{steps: [{{say: a}}]}}]}}
by: {{state: "{WAITS}", pending: "{PENDING}", attempts: reference}}
steps:
  - start: null
    expect: {{state: waiting_user}}
  - reply: x
    expect: {{state: waiting_user, attempts: 2}}
  - advance_clock: 1199
    expect: {{attempts: 2}}
  - advance_clock: 1
    by: {{attempts: "{STRICT}"}}
    expect: {{attempts: 2}}
  - restart: null
    expect: {{pending: {{interaction_id: 2}}}}
""",
    )
    # sticky, ambiguous: under reading `fails` the first turn fails, so the reply runs no turn.
    _write(
        tmp_path,
        "c/r/sticky",
        f"""tags: {{engines: [iflow]}}
ambiguous:
  note: n
  default: waits
  readings:
    waits: {{}}
    fails: {{"0": {{state: failed}}, "1": {{state: failed, error_code: X}}}}
runtime: {{mode: interactive, profile: sticky_process}}
engine_script: {{resident: true, turns: [{{steps: [{{say: a}}]}}]}}
by: {{state: "{WAITS}", error_code: "{MAX}"}}
steps:
  - start: null
    expect: {{state: waiting_user}}
  - reply: x
    expect: {{state: succeeded}}
""",
    )
    # auto: its profile is not said (the default) and an argv line names its own authority and engine.
    _write(
        tmp_path,
        "c/r/auto",
        f"""tags: {{engines: [codex, gemini]}}
runtime: {{mode: auto}}
engine_script: {{turns: [{{steps: [{{say: a}}]}}]}}
by: {{state: "{AUTO}", argv: reference}}
steps:
  - start: null
    expect:
      state: succeeded
      argv: [{{attempt: 1, engines: [gemini], contains: [--yolo], by: "{GEMINI}"}}]
""",
    )
    return tmp_path


def test_the_scope_file_is_valid_and_names_every_must_and_should_sentence_once() -> None:
    document = yaml.safe_load(SCOPE_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(json.loads(SCOPE_SCHEMA_PATH.read_text(encoding="utf-8"))).validate(
        document
    )
    counts = Counter(entry["id"] for entry in document)
    wanted = {sid for sid, sentence in sentences().items() if sentence.level in ("MUST", "SHOULD")}
    assert set(counts) == wanted  # none missing, none unknown (nor a MAY sentence)
    assert set(counts.values()) == {1}
    scope = load_scope()  # and the rules the schema cannot say
    for sid, entry in scope.items():
        assert entry.observable == (sentences()[sid].observable is None), sid
        assert entry.combinations() or not entry.observable, sid


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda doc: doc + doc[:1], "listed twice"),
        (lambda doc: doc[1:], "no entry for 1 sentence"),
        (lambda doc: [{**doc[0], "id": "a/b#c"}, *doc[1:]], "not a MUST or SHOULD sentence"),
        (
            lambda doc: [{**doc[0], "actions": ["start", "reply"]}, *doc[1:]],
            "without its action advance_clock",
        ),
        (lambda doc: [{**doc[0], "modes": ["batch"]}, *doc[1:]], "0.modes.0: 'batch'"),
    ],
)
def test_a_bad_scope_file_is_refused_with_the_entry_named(tmp_path: Path, edit: object, words: str) -> None:
    document = yaml.safe_load(SCOPE_PATH.read_text(encoding="utf-8"))
    path = tmp_path / "scope.yaml"
    path.write_text(yaml.safe_dump(edit(document)), encoding="utf-8")  # type: ignore[operator]
    with pytest.raises(ScopeError, match=words.replace("[", r"\[").replace("]", r"\]")):
        load_scope(path)


def test_positions_follow_the_steps_before_and_each_reading(tiny: Path) -> None:
    catalog = {scenario.id: scenario for scenario in load_catalog(tiny)}
    assert step_positions(catalog["c/r/resumable"]) == (
        "first-turn",
        "after-reply",
        "after-reply",  # 1199 s into the second wait: no deadline yet
        "after-timeout",  # 1200 s: the deadline of the wait the reply began
        "after-restart",
    )
    assert step_positions(catalog["c/r/sticky"]) == ("first-turn", "after-reply")
    assert step_positions(catalog["c/r/sticky"], "fails") == ("first-turn", "first-turn")


def _scope(sid: str, **dims: tuple[str, ...]) -> Scope:
    return Scope(sid, "why", **dims)  # type: ignore[arg-type]


def test_the_matrix_of_a_tiny_catalog_is_exact(tiny: Path) -> None:
    interactive = {"modes": ("interactive",), "profiles": ("resumable", "sticky_process")}
    scope = {
        WAITS: _scope(
            WAITS,
            **interactive,
            engines=("codex", "iflow"),
            positions=("first-turn", "after-reply"),
            actions=("start", "reply"),
        ),
        PENDING: _scope(
            PENDING,
            modes=("interactive",),
            profiles=("resumable",),
            engines=("codex",),
            positions=("first-turn", "after-restart"),
            actions=("start", "restart"),
        ),
        STRICT: _scope(
            STRICT,
            modes=("interactive",),
            profiles=(ANY,),
            engines=("gemini",),
            positions=("after-timeout",),
            actions=("advance_clock",),
        ),
        MAX: _scope(MAX, **interactive, engines=("iflow",), positions=("after-reply",), actions=("reply",)),
        AUTO: _scope(
            AUTO,
            modes=("auto", "interactive"),
            profiles=("sticky_process",),
            engines=("codex",),
            positions=("first-turn", "after-reply"),
            actions=("start", "reply"),
        ),
        GEMINI: _scope(
            GEMINI,
            modes=("auto",),
            profiles=(ANY,),
            engines=("gemini",),
            positions=("first-turn",),
            actions=("start",),
        ),
        NEVER: _scope(
            NEVER, **interactive, engines=("codex",), positions=("first-turn",), actions=("start",)
        ),
    }
    known = {sid: sentence for sid, sentence in sentences().items() if sid in scope}
    matrix = compute(load_catalog(tiny), scope, known)
    rows = {row.sentence: row for row in matrix.rows}
    assert list(rows) == [sid for sid in sentences() if sid in scope]  # sentences.yaml's order

    def combos(*cells: tuple[str, str, str, str, str]) -> tuple[Combo, ...]:
        return tuple(sorted(Combo(*cell) for cell in cells))

    assert rows[WAITS].met == combos(
        ("interactive", "resumable", "codex", "first-turn", "start"),
        ("interactive", "resumable", "gemini", "first-turn", "start"),
        ("interactive", "resumable", "codex", "after-reply", "reply"),
        ("interactive", "resumable", "gemini", "after-reply", "reply"),
        ("interactive", "sticky_process", "iflow", "first-turn", "start"),  # both readings
        ("interactive", "sticky_process", "iflow", "after-reply", "reply"),  # reading waits
        ("interactive", "sticky_process", "iflow", "first-turn", "reply"),  # reading fails: no turn
    )
    assert rows[WAITS].holes == combos(
        ("interactive", "resumable", "iflow", "first-turn", "start"),
        ("interactive", "resumable", "iflow", "after-reply", "reply"),
        ("interactive", "sticky_process", "codex", "first-turn", "start"),
        ("interactive", "sticky_process", "codex", "after-reply", "reply"),
    )
    assert rows[WAITS].status == "holes"
    # the pending is checked only at the restart: the first wait's is a hole
    assert rows[PENDING].met == combos(
        ("interactive", "resumable", "codex", "after-restart", "restart"),
        ("interactive", "resumable", "gemini", "after-restart", "restart"),  # met, though out of scope
    )
    assert rows[PENDING].holes == combos(("interactive", "resumable", "codex", "first-turn", "start"))
    assert rows[STRICT].met == combos(
        ("interactive", "resumable", "codex", "after-timeout", "advance_clock"),
        ("interactive", "resumable", "gemini", "after-timeout", "advance_clock"),
    )
    assert rows[STRICT].holes == ()  # profile `any`: resumable meets it
    # error_code is checked only under reading `fails`, at a reply that ran no turn: not after-reply
    assert rows[MAX].met == combos(("interactive", "sticky_process", "iflow", "first-turn", "reply"))
    assert rows[MAX].holes == combos(
        ("interactive", "resumable", "iflow", "after-reply", "reply"),
        ("interactive", "sticky_process", "iflow", "after-reply", "reply"),
    )
    # auto: no profile and no later position; the interactive half of its scope is never met
    assert rows[AUTO].holes == combos(
        ("interactive", "sticky_process", "codex", "first-turn", "start"),
        ("interactive", "sticky_process", "codex", "after-reply", "reply"),
    )
    assert rows[GEMINI].met == combos(("auto", "resumable", "gemini", "first-turn", "start"))
    assert rows[GEMINI].status == "covered"
    assert rows[NEVER].status == "never"
    assert len(rows[NEVER].holes) == 2
    summary = matrix.summary
    assert (summary.sentences, summary.covered, summary.with_holes, summary.never) == (7, 2, 4, 1)
    assert summary.holes == 4 + 1 + 2 + 2 + 2


def test_an_unobservable_sentence_is_never_a_hole() -> None:
    unseen = next(sid for sid, s in sentences().items() if s.level != "MAY" and s.observable is not None)
    matrix = compute((), {unseen: Scope(unseen, "why", observable=False)}, {unseen: sentences()[unseen]})
    assert matrix.rows[0].status == "unobservable"
    assert matrix.rows[0].holes == ()
    assert matrix.summary.unobservable == 1
    assert matrix.summary.holes == 0


def test_the_markdown_keeps_its_hand_written_block() -> None:
    matrix = compute((), {}, {})
    first = render_markdown(matrix)
    edited = first.replace("(Figures written by hand", "Before: 1 2 3\n\n(Figures written by hand")
    assert "Before: 1 2 3" in render_markdown(matrix, edited)


def test_the_json_output_parses(tiny: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["coverage", "--json", "--catalog", str(tiny), "--no-shipped"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["scenarios"] == 3
    assert {"sentences", "covered", "with_holes", "never", "holes"} <= set(document["summary"])
    row = next(row for row in document["sentences"] if row["id"] == STRICT)
    assert row["met"]
    assert row["scenarios"] == ["c/r/resumable"]


def test_the_table_and_the_markdown_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "coverage.md"
    assert main(["coverage", "--markdown", str(out)]) == 0
    assert "MUST/SHOULD sentences" in capsys.readouterr().out
    assert "| sentence | level | status |" in out.read_text(encoding="utf-8")
