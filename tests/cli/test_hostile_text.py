"""Text is data, never a crash: lone surrogates (a Node CLI's string cut inside an emoji, ``\\ud83d``;
undecodable bytes kept by ``surrogateescape``), NUL and bidi controls through every writer, the fake
engines, and a whole ``turngate run``."""

from __future__ import annotations

import io
import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli.conftest import Turngate
from turngate.base.hostile_text import json_safe, shown_safe, xml_safe
from turngate.base.terminal import visible
from turngate.engines.fake.calllog import CallLog
from turngate.engines.fake.formats import text_line
from turngate.engines.fake.jsonline import dumps
from turngate.judge.case_result import CaseResult
from turngate.judge.case_steps import _calls
from turngate.judge.catalog import ENGINES
from turngate.judge.html_report import from_results, render
from turngate.judge.report import JsonlReport, read_report, run_properties, write_junit

CATALOG_DIR = Path(__file__).resolve().parents[2] / "scenarios"
ASKS = "interactive-decision-policy/question-payload/core-fields"
HOSTILE_ID = "my-team/hostile/cut-emoji-prompt"
CUT = "Which greeting style do you want? \U0001f44b\u202e \\ud83d"  # as written in YAML: an escape

HOSTILE = (
    st.text()
    | st.sampled_from(["\ud83d", "\udc80", "\x00", "\u202e", "\u2066", "\ufffe", "\x1b[31m", "\\ud83d"])
    | st.lists(st.sampled_from(["a", "\ud83d", "\ude00", "\udcff", "\x00", "\u202e", "\n", "é"])).map("".join)
)
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | HOSTILE,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
    max_leaves=8,
)


def paired(value: Any) -> Any:
    """``value`` as any JSON reader gives it back: a high surrogate directly followed by a low one
    (two code points in a Python string) is read as the one character they pair to."""
    if isinstance(value, str):
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    if isinstance(value, list | tuple):
        return [paired(item) for item in value]
    if isinstance(value, dict):
        return {paired(key): paired(item) for key, item in value.items()}
    return value


def result_with(text: str, value: Any) -> CaseResult:
    return CaseResult(
        scenario_id=f"hostile/{'x'}/case",
        engine="codex",
        reading=None,
        level="MUST",
        capability="hostile",
        outcome="failed",
        message=f"[failed] step 0 (start): pending.prompt: expected {text}\nsecond line {text}",
        duration_sec=0.1,
        record={"prompt": text, "value": value},
        differences=({"key": "pending.prompt", "expected": text, "actual": value, "note": text},),
        checks=None,
        observed=({"output": text, "events": [value]},),
        conventions=None,
        reading_chosen=False,
        readings={text: "failed"},
    )


@settings(max_examples=150, deadline=None)
@given(text=HOSTILE, value=VALUES)
def test_every_writer_carries_any_text(tmp_path_factory: Any, text: str, value: Any) -> None:
    folder = tmp_path_factory.mktemp("writers")
    result = result_with(text, value)
    # JSON Lines: written through a UTF-8 file, as `--report-json F` is, and read back the same
    path = folder / "report.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        report = JsonlReport(stream, target=text, engines=["codex"], planned=1)
        report.case(result)
        report.finish()
    header, cases, footer = read_report(path)
    assert header["target"] == paired(text)
    assert footer["counts"]["failed"] == 1
    (case,) = cases
    assert case["message"] == paired(result.message)
    assert case["differences"] == paired(list(result.differences))
    assert case["observed"] == paired(list(result.observed))
    assert case["record"] == paired(dict(result.record or {}))
    assert case["readings"] == paired(dict(result.readings))
    # JUnit: a document every XML reader accepts, NUL and surrogates shown as their escapes
    junit = io.StringIO()
    properties = run_properties(target=text, engines=["codex"], reading=None, jobs=1)
    write_junit(junit, [result], properties=properties, started_at=0.0)
    parsed = ElementTree.fromstring(junit.getvalue().encode("utf-8"))
    failure = parsed.find(".//failure")
    assert failure is not None
    # (an XML reader reads a carriage return as a newline: XML's own line-end rule, not a loss of ours)
    assert failure.text == xml_safe(result.message).replace("\r\n", "\n").replace("\r", "\n")
    # HTML: a page that encodes, with the same text shown visibly
    page = render([from_results([result], {"target": text}, interrupted=False)])
    page.encode("utf-8")
    assert "\x00" not in page
    assert not any("\ud800" <= char <= "\udfff" for char in page)
    # the terminal and the fake engines' JSON: encodable too
    visible(result.message).encode("utf-8")
    assert paired(json.loads(dumps(value))) == paired(value)
    dumps({"text": text}).encode("utf-8")


def test_escapes_are_the_ones_a_reader_recognises() -> None:
    assert json_safe('"a\ud83db"') == '"a\\ud83db"'
    assert json.loads(json_safe(json.dumps("a\udc80b", ensure_ascii=False))) == "a\udc80b"
    assert json_safe('"ordinary é \u202e"') == '"ordinary é \u202e"'  # only what cannot be encoded
    assert xml_safe("a\x00b\ud83d\tc\n") == "a\\x00b\\ud83d\tc\n"
    assert shown_safe("a\u202eb\x9bc\ud83d") == "a\\u202eb\\x9bc\\ud83d"
    assert visible("\u202egnp.exe\ud83d\x1b[0m\n") == "\\u202egnp.exe\\ud83d\\x1b[0m\n"


def test_fake_engines_print_what_a_real_cli_prints() -> None:
    # JSON lines: the escape, as Node's JSON.stringify writes a lone surrogate
    assert dumps({"text": "cut \ud83d"}) == '{"text":"cut \\ud83d"}'
    assert dumps({"\udc80": ["\ud83d"]}, indent=2) == '{\n  "\\udc80": [\n    "\\ud83d"\n  ]\n}'
    # plain text: an undecodable byte is that byte again, any other lone surrogate U+FFFD (as Node)
    assert text_line("a\udcffb \ud83d") == (1, b"a\xffb \xef\xbf\xbd\n")
    assert text_line("plain é", 2) == (2, "plain é\n".encode())


def test_the_call_log_keeps_a_lone_surrogate(tmp_path: Path) -> None:
    path = tmp_path / "calls.jsonl"
    for case in ("one", "two"):
        log = CallLog(str(path), "codex", ["exec", "cut \ud83d", "\x00\u202e\u2028\x85"], os.environ)
        log.note(case=case)
        log.add_stdin("byte \udc80")
        log.write("completed", 0)
    # read as the harness reads it: whole lines, though U+2028 and U+0085 stand raw in them
    (record,) = _calls(path, "two", 0)
    assert record["argv"] == ["exec", "cut \ud83d", "\x00\u202e\u2028\x85"]
    assert record["stdin"] == ["byte \udc80"]


def test_a_run_with_a_cut_emoji_in_a_prompt_reaches_its_verdict(turngate: Turngate, tmp_path: Path) -> None:
    """The user's scenario: an ask-user prompt holding a lone surrogate. Every engine plays it, the
    run judges it, and every report is whole (it used to end with a traceback after the header)."""
    text = (CATALOG_DIR / f"{ASKS}.yaml").read_text(encoding="utf-8")
    question = "Which greeting style do you want?"
    assert text.count(question) == 2  # the engine says it, the step expects it as the prompt
    mine = tmp_path / "mine"
    copy = mine / f"{HOSTILE_ID}.yaml"
    copy.parent.mkdir(parents=True)
    copy.write_text(
        text.replace(f"id: {ASKS}", f"id: {HOSTILE_ID}")
        .replace(f"say: {question}", f'say: "{CUT}"')
        .replace(f'prompt: "{question}"', f'prompt: "{CUT}"'),
        encoding="utf-8",
    )
    done = turngate(
        "run",
        *("--catalog", str(mine), "--no-shipped", "--jobs", "2"),
        *("--report-json", "r.jsonl", "--junit", "r.xml", "--html", "r.html"),
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    _header, cases, footer = read_report(tmp_path / "r.jsonl")
    assert sum(footer["counts"].values()) == len(cases) == len(ENGINES)  # the scenario runs on every engine
    expected = "Which greeting style do you want? \U0001f44b\u202e \ud83d"
    for case in cases:
        # judged, not broken: the engine played its turn and the run reached waiting_user
        assert case["outcome"] in ("passed", "failed"), case["message"]
        steps = case["record"]["steps"]
        assert steps[0]["observation"]["state"] == "waiting_user", case["message"]
        # the scenario's own text, surrogate and all, read back from the report as it was written
        prompts = [d["expected"] for d in case["differences"] if d["key"] == "pending.prompt"]
        assert prompts in ([], [expected])
    junit = ElementTree.parse(tmp_path / "r.xml").getroot()
    assert junit.get("tests") == str(len(ENGINES))
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert HOSTILE_ID in page
