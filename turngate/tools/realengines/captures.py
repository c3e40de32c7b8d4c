"""Real captures for the corpus: fidelity scripts played on the real CLIs, scrubbed, with the spec's decision.

``turngate engines real capture`` plays the fidelity scripts (message, tool
echo, ask-user question, resume, error turn) on each pinned real engine (gemini
in both document formats) and writes one capture folder per turn under
``corpus/<engine>/real-<version>-[<format>-]<name>/`` through the same
scrubbing ``turngate record`` uses (turngate/tools/drift/engine_recording.py). Each capture's
``expect`` is the decision the spec gives for that turn, written here with
the rule it follows, so the corpus test (tests/drift/test_corpus.py) replays
them in CI with no npm.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.engines.modelserver.endpoint import ModelServer
from turngate.engines.real.lock import Pin
from turngate.engines.real.npm_install import write_launchers
from turngate.implementations.reference.commands import CommandOptions, build_command
from turngate.tools.drift.engine_recording import Recording, save
from turngate.tools.realengines.fidelity import FIDELITY_SCRIPTS, MODES, Script, load_script_yaml, play

SUCCEEDED_WHY: Final = (
    "001 'interactive 模式成功判定': marker detected in assistant content"
    " (003 'done marker 检测兼容转义流文本') and output passes the schema -> succeeded."
)
WAITING_WHY: Final = (
    "003 'interactive 模式缺失 done marker 进入等待态': no marker in assistant content (tool echoes are not"
    " evidence), no valid output, process ok -> waiting_user; an ask_user hint only enriches (003 'ask_user"
    " 仅作为可选增强信息')."
)
FAILED_WHY: Final = (
    "000 Decision 1: waiting_user only when the process is not interrupted; the model request failed and the"
    " CLI ended the turn with an error and a non-zero exit -> failed (spec names no code; ENGINE_FAILED is"
    " turngate's, docs/reference-orchestrator.md)."
)


@dataclass(frozen=True, slots=True)
class Wanted:
    name: str
    script: str  # a fidelity script's case
    turn: int  # 1-based
    description: str
    expect: Mapping[str, Any]


WANTED: Final = (
    Wanted(
        "message",
        "fid-message",
        1,
        "one assistant message: the greeting object with the escaped done marker",
        {"state": "succeeded", "error_code": None, "why": SUCCEEDED_WHY},
    ),
    Wanted(
        "tool-echo",
        "fid-tool-echo",
        1,
        "a real shell call whose output echoes the done marker (cat of a file), then a question: the marker"
        " is only in the tool result",
        {"state": "waiting_user", "error_code": None, "why": WAITING_WHY},
    ),
    Wanted(
        "ask-user",
        "fid-resume",
        1,
        "an ask-user question: prose, then an <ASK_USER_YAML> choose_one hint, no marker",
        {"state": "waiting_user", "error_code": None, "why": WAITING_WHY},
    ),
    Wanted(
        "resume",
        "fid-resume",
        2,
        "the resumed turn after the user's reply (attempt 2): the greeting with the escaped done marker",
        {"state": "succeeded", "error_code": None, "why": SUCCEEDED_WHY},
    ),
    Wanted(
        "error",
        "fid-error",
        1,
        "the model answers 400 (quota exhausted): the CLI reports the error and fails the turn",
        {"state": "failed", "error_code": "ENGINE_FAILED", "why": FAILED_WHY},
    ),
)


def capture_all(pins: Iterable[Pin], cache: Path, corpus: Path) -> list[Path]:
    """Play WANTED on each pin and write the capture folders; returns them."""
    written: list[Path] = []
    # A fixed folder, so tool-output paths inside the captures do not depend on a random name.
    root = Path(tempfile.gettempdir()) / "turngate-real-capture"
    scripts_dir = root / "scripts"
    scripts_dir.mkdir(parents=True, exist_ok=True)
    chosen = {}
    for path in sorted(FIDELITY_SCRIPTS.glob("*.yaml")):
        document = load_script_yaml(path)
        chosen[document["case"]] = Script(
            document["case"], "fidelity", document, ("codex", "gemini", "opencode")
        )
        (scripts_dir / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    with ModelServer(scripts_dir, root / "model-requests.jsonl", root / "model-data") as server:
        for pin in pins:
            bin_dir = root / pin.name / "bin"
            write_launchers(bin_dir, [pin], cache, model_url=server.url)
            for mode in MODES[pin.engine]:
                played: dict[str, list[Any]] = {}
                for wanted in WANTED:
                    script = chosen[wanted.script]
                    if wanted.script not in played:
                        where = root / pin.name / mode / wanted.script
                        cwd = where / "run"
                        cwd.mkdir(parents=True, exist_ok=True)
                        (cwd / "SKILL.md").write_text("# Greet\n\nGreet the user.\n", encoding="utf-8")
                        env = {
                            "PATH": "/usr/bin:/bin",
                            "HOME": str(where / "home"),
                            "TURNGATE_STATE": str(where),
                        }
                        played[wanted.script] = play(pin.engine, mode, script, bin_dir, cwd, env)
                    outputs = played[wanted.script]
                    if len(outputs) < wanted.turn:
                        continue
                    output = outputs[wanted.turn - 1]
                    label = f"{mode}-" if pin.engine == "gemini" else ""
                    folder = corpus / pin.engine / f"real-{pin.version}-{label}{wanted.name}"
                    argv = build_command(
                        pin.engine,
                        "interactive",
                        prompt="…",
                        resume_id="<session>" if wanted.turn > 1 else None,
                        options=CommandOptions(
                            codex_auto_flag="--yolo",
                            gemini_output_format=mode if pin.engine == "gemini" else None,  # type: ignore[arg-type]
                        ),
                    )
                    recording = Recording(argv, output.stdout, output.stderr, output.exit_code, None, 0.0)
                    save(recording, folder, engine=pin.engine, mode="interactive")
                    _complete(folder, pin, mode, wanted)
                    written.append(folder)
    return written


def _complete(folder: Path, pin: Pin, mode: str, wanted: Wanted) -> None:
    """capture.yaml as corpus/README.md describes it, on top of what `save` wrote."""
    meta_path = folder / "capture.yaml"
    meta = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
    meta["description"] = f"real {pin.name} ({pin.package}), {wanted.description}"
    meta["provenance"] = (
        f"recorded from the real {pin.name} against turngate's scripted model server"
        f" (`turngate engines real capture`, fidelity script {wanted.script}, turn {wanted.turn});"
        " secrets and home scrubbed"
    )
    meta["attempt_number"] = wanted.turn
    meta["max_attempt"] = None
    meta["output_schema"] = "greeting"
    if pin.engine == "gemini":
        meta["reader_options"] = {"mode": mode}
    meta["expect"] = dict(wanted.expect)
    meta_path.write_text(
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8"
    )
