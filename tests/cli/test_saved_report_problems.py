"""`turngate report judge` on a report that is not whole: one line naming the file and the line, and
an interrupted run judged again says so, keeps its mark, and exits as the run did (130)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.turngate_cli import in_process


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("saved")
    report = folder / "run.jsonl"
    code, _out, err = in_process(
        "run", "-k", "design/decision-1/*", "--engine", "codex", "--report-json", str(report)
    )
    assert code == 0, err
    return report


def test_a_report_cut_mid_line_names_the_file_and_its_last_line(saved: Path, tmp_path: Path) -> None:
    text = saved.read_text(encoding="utf-8")
    cut = tmp_path / "cut.jsonl"
    cut.write_text(text[: text.index("\n", len(text) // 2) - 20], encoding="utf-8")
    code, _out, err = in_process("report", "judge", str(cut))
    assert code == 2
    (said,) = err.strip().splitlines()
    number = cut.read_text(encoding="utf-8").count("\n") + 1
    assert f"{cut}:{number}: not a JSON line: " in said
    assert "the file ends inside this line" in said
    assert "Traceback" not in err


def test_a_binary_file_is_not_a_report_in_one_line(tmp_path: Path) -> None:
    binary = tmp_path / "run.jsonl"
    binary.write_bytes(b'{"kind": "header"}\n\xff\xfe\x00garbage')
    code, _out, err = in_process("report", "judge", str(binary))
    assert code == 2
    assert f"{binary}: byte 19: not UTF-8 text" in err
    assert "codec" not in err


def test_an_interrupted_run_judged_again_says_so_and_keeps_its_mark(saved: Path, tmp_path: Path) -> None:
    lines = saved.read_text(encoding="utf-8").splitlines()
    footer = json.loads(lines[-1])
    footer["interrupted"] = True
    stopped = tmp_path / "stopped.jsonl"
    stopped.write_text("\n".join([*lines[:-1], json.dumps(footer)]) + "\n", encoding="utf-8")
    judged = tmp_path / "judged.jsonl"
    code, _out, err = in_process("report", "judge", str(stopped), "-o", str(judged))
    assert code == 130  # every case held, but not every case ran: no pass
    assert "the run was interrupted" in err
    assert json.loads(judged.read_text(encoding="utf-8").splitlines()[-1])["interrupted"] is True
