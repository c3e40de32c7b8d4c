"""Real captures for the corpus: scripts played on the real CLIs, scrubbed, with the spec's decision.

``turngate engines real capture`` plays each wanted turn on each pinned real engine (gemini in both
document formats) and writes one capture folder per turn under
``corpus/<engine>/real-<version>-[<format>-]<name>/`` through the same scrubbing ``turngate record``
uses (turngate/tools/drift/engine_recording.py), with how it was recorded (``recorded``: the argv as
played, the pin's version, the duration, and whether the kill timeout had to end it). Three sets:

- ``fidelity``: the fidelity scripts (message, thinking, tool echo, a failed tool, a non-shell tool,
  an ask-user question and its resumed turn, a model error), the turns the fakes are held to;
- ``hazard``: the model failing as providers do (429, 500, a stream cut after a complete answer that
  holds the marker, with no retry and with two) and a file written by the CLI's own file tool, as
  each CLI really reports them;
- ``exploration`` (codex): its ``request_user_input`` tool and a call of an MCP tool.

Each capture's ``expect`` is the decision the spec gives for that turn, written here with the rule it
follows, so the corpus test (tests/drift/test_corpus.py) replays the captures of engines turngate has
readers for in CI with no npm.
"""

from __future__ import annotations

import fnmatch
import sys
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

import yaml

from turngate.base.data_yaml import load_data
from turngate.engines.modelserver.endpoint import CutStyle, ModelServer
from turngate.engines.real.lock import Pin
from turngate.engines.real.npm_install import write_launchers
from turngate.tools.drift.engine_recording import Recording, save
from turngate.tools.realengines import mcp_greeting
from turngate.tools.realengines.fidelity import (
    FIDELITY_SCRIPTS,
    TURN_TIMEOUT_SEC,
    Script,
    TurnOutput,
    load_script_yaml,
    modes_of,
    play,
)

CAPTURE_SCRIPTS: Final = Path(__file__).with_name("capture_scripts")
HAZARD_TIMEOUT_SEC: Final = 120.0  # a hazard turn that outlives this is killed, and recorded so
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
GAVE_UP_WHY: Final = (
    "000 Decision 1: waiting_user only when the process is not interrupted; every model request failed and"
    " the CLI gave up with an error (or was killed still retrying) -> failed (spec names no code;"
    " ENGINE_FAILED is turngate's, docs/reference-orchestrator.md)."
)
CUT_WHY: Final = (
    "The spec is silent on a turn that printed the done marker and a valid answer and then failed (scenario"
    " engine-fault/failed-after-marker/stream-cut, ambiguous): no reading leaves it waiting; the reference's"
    " reading process-failure-fails (docs/reference-orchestrator.md, 'Process failure comes first') fails it,"
    " as a killed process is failed too."
)
MCP_OPTIONS: Final = (
    *("-c", f'mcp_servers.turngate.command="{sys.executable}"'),
    *("-c", f'mcp_servers.turngate.args=["-S", "{Path(mcp_greeting.__file__).resolve()}"]'),
)

Kind = Literal["fidelity", "hazard", "exploration"]


@dataclass(frozen=True, slots=True)
class Wanted:
    name: str
    script: str  # the case of a fidelity or capture script
    turn: int  # 1-based
    description: str
    expect: Mapping[str, Any]
    kind: Kind = "fidelity"
    engines: frozenset[str] | None = None  # None: every pinned engine
    options: tuple[str, ...] = ()  # CLI options right after its name (codex -c for the MCP server)
    named_tools: frozenset[str] = frozenset()  # tools the model calls by name (the model server's)
    timeout_sec: float = TURN_TIMEOUT_SEC
    cut_style: CutStyle = "ended"  # how the model server cuts a stream (endpoint.ModelServer)
    # Where an engine makes other bytes of the same script, the spec's decision for its turn.
    expect_by_engine: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # A shorter kill timeout where an engine is known never to end the turn (the capture stays small).
    timeout_by_engine: Mapping[str, float] = field(default_factory=dict)

    def for_engine(self, engine: str) -> bool:
        return self.engines is None or engine in self.engines

    def expect_for(self, engine: str) -> Mapping[str, Any]:
        return self.expect_by_engine.get(engine, self.expect)

    def timeout_for(self, engine: str) -> float:
        return self.timeout_by_engine.get(engine, self.timeout_sec)


def _succeeded(why: str = SUCCEEDED_WHY) -> Mapping[str, Any]:
    return {"state": "succeeded", "error_code": None, "why": why}


def _waiting(why: str = WAITING_WHY) -> Mapping[str, Any]:
    return {"state": "waiting_user", "error_code": None, "why": why}


def _failed(why: str, silent: bool = False) -> Mapping[str, Any]:
    expect = {"state": "failed", "error_code": "ENGINE_FAILED", "why": why}
    return {**expect, "spec": "silent"} if silent else expect


CODEX: Final = frozenset({"codex"})
# kilo and codebuddy take an answer whose stream ended without finish_reason for a finished one: kilo a
# step_finish with reason "other", codebuddy a `result` success holding the answer, both exit 0
# (corpus/kilo/real-7.7.7-hazard-cut/stdout, corpus/codebuddy/real-2.118.2-hazard-cut/stdout): nothing
# failed on their side.
TOOK_THE_CUT: Final = {
    "kilo": _succeeded(
        SUCCEEDED_WHY + " kilo ended the cut answer as a finished step (step_finish reason other) and"
        " exited 0: no failure to weigh against the marker."
    ),
    "codebuddy": _succeeded(
        SUCCEEDED_WHY + " codebuddy ended the cut answer with a result success holding it and exited 0: no"
        " failure to weigh against the marker."
    ),
}
# opencode 1.18.33 answers a stream that ended without finish_reason with step_finish "unknown" and asks
# again, about ten times a second, for ever (the fake engines model it so: docs/fake-engines.md, "Model
# errors"): killed after 10 s, its capture holds a hundred answers, not the 1,300 of 120 s.
NEVER_ENDS_THE_CUT: Final = {"opencode": 10.0}
WANTED: Final = (
    Wanted(
        "message",
        "fid-message",
        1,
        "one assistant message: the greeting object with the escaped done marker",
        _succeeded(),
    ),
    Wanted(
        "think-message",
        "fid-think-message",
        1,
        "reasoning, then the greeting object with the escaped done marker",
        _succeeded(),
    ),
    Wanted(
        "tool-echo",
        "fid-tool-echo",
        1,
        "a real shell call whose output echoes the done marker (cat of a file), then a question: the marker"
        " is only in the tool result",
        _waiting(),
    ),
    Wanted(
        "tool-failed",
        "fid-tool-failed",
        1,
        "a real shell call that fails (exit 1), then the greeting object with the escaped done marker",
        _succeeded(),
    ),
    Wanted(
        "mcp-tool",
        "fid-mcp-tool",
        1,
        "a non-shell tool of the script, played as a shell call (cat of a file), then the greeting object"
        " with the escaped done marker",
        _succeeded(),
    ),
    Wanted(
        "ask-user",
        "fid-resume",
        1,
        "an ask-user question: prose, then an <ASK_USER_YAML> choose_one hint, no marker",
        _waiting(),
    ),
    Wanted(
        "resume",
        "fid-resume",
        2,
        "the resumed turn after the user's reply (attempt 2): the greeting with the escaped done marker",
        _succeeded(),
    ),
    Wanted(
        "error",
        "fid-error",
        1,
        "the model answers 400 (quota exhausted): the CLI reports the error and fails the turn",
        _failed(FAILED_WHY),
    ),
    Wanted(
        "hazard-429",
        "hazard-429",
        1,
        "every model request answered 429 (retry-after: 1); the CLI's retry limit set to 2: how it retries"
        " and how it gives up",
        _failed(GAVE_UP_WHY),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
    ),
    Wanted(
        "hazard-500",
        "hazard-500",
        1,
        "every model request answered 500; the CLI's retry limit set to 2: how it retries and how it gives"
        " up",
        _failed(GAVE_UP_WHY),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
    ),
    Wanted(
        "hazard-cut",
        "hazard-cut",
        1,
        "the model streams a complete answer holding the done marker, then its response body ends without"
        " the event that ends an answer; no retry: marker, then failure",
        _failed(CUT_WHY, silent=True),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
        expect_by_engine=TOOK_THE_CUT,
        timeout_by_engine=NEVER_ENDS_THE_CUT,
    ),
    Wanted(
        "hazard-cut-retried",
        "hazard-cut-retried",
        1,
        "the same cut on every attempt, the CLI's retry limit set to 2: the marker answer printed again on"
        " each retry, then failure",
        _failed(CUT_WHY, silent=True),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
        expect_by_engine=TOOK_THE_CUT,
        timeout_by_engine=NEVER_ENDS_THE_CUT,
    ),
    Wanted(
        "hazard-drop",
        "hazard-cut",
        1,
        "the model streams a complete answer holding the done marker, then the connection is dropped in the"
        " middle of the response body; no retry",
        _failed(CUT_WHY, silent=True),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
        cut_style="dropped",
    ),
    Wanted(
        "hazard-drop-retried",
        "hazard-cut-retried",
        1,
        "the same dropped connection on every attempt, the CLI's retry limit set to 2",
        _failed(CUT_WHY, silent=True),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
        cut_style="dropped",
    ),
    Wanted(
        "file-change",
        "file-change",
        1,
        "the CLI's own file tool writes a file holding the done marker (codex apply_patch, a file_change"
        " item), then a question: the marker is only in the tool's input",
        _waiting(),
        "hazard",
        timeout_sec=HAZARD_TIMEOUT_SEC,
    ),
    Wanted(
        "request-user-input",
        "explore-request-user-input",
        1,
        "exploration: the model calls request_user_input, which codex declares to the model; in exec it is"
        " refused (stderr), nothing of it reaches stdout, and the model's question follows",
        _waiting(),
        "exploration",
        CODEX,
        named_tools=frozenset({"request_user_input"}),
        timeout_sec=HAZARD_TIMEOUT_SEC,
    ),
    Wanted(
        "mcp-call",
        "explore-mcp-tool",
        1,
        "exploration: a real MCP tool call (a stdio MCP server configured with -c mcp_servers...; found"
        " through codex's tool_search), its result, then the greeting with the escaped done marker",
        _succeeded(),
        "exploration",
        CODEX,
        options=MCP_OPTIONS,
        named_tools=frozenset({"lookup_greeting"}),
        timeout_sec=HAZARD_TIMEOUT_SEC,
    ),
)


def all_scripts() -> dict[str, Script]:
    """Every script a wanted capture plays, by case: the fidelity scripts and the capture scripts."""
    found = {}
    for folder in (FIDELITY_SCRIPTS, CAPTURE_SCRIPTS):
        for path in sorted(folder.glob("*.yaml")):
            document = load_script_yaml(path)
            found[document["case"]] = Script(document["case"], "capture", document, ())
    return found


def chosen(patterns: Iterable[str] | None = None, kinds: Iterable[str] | None = None) -> tuple[Wanted, ...]:
    """The wanted captures whose name matches one of ``patterns`` and whose kind is one of ``kinds``."""
    names, sets = list(patterns or ()), set(kinds or ())
    return tuple(
        wanted
        for wanted in WANTED
        if (not names or any(fnmatch.fnmatchcase(wanted.name, p) for p in names))
        and (not sets or wanted.kind in sets)
    )


def capture_all(
    pins: Iterable[Pin], cache: Path, corpus: Path, wanted: Iterable[Wanted] = WANTED
) -> list[Path]:
    """Play the wanted captures on each pin and write the capture folders; returns them."""
    written: list[Path] = []
    # A fixed folder, so tool-output paths inside the captures do not depend on a random name.
    root = Path(tempfile.gettempdir()) / "turngate-real-capture"
    scripts_dir = root / "scripts"
    scripts_dir.mkdir(parents=True, exist_ok=True)
    scripts = all_scripts()
    for script in scripts.values():
        (scripts_dir / f"{script.case}.yaml").write_text(
            yaml.safe_dump(dict(script.document)), encoding="utf-8"
        )
    chosen_wanted = list(wanted)
    # One model server per setting (the tools it calls by name, how it cuts a stream): a script's tool is
    # a shell call unless its capture names it.
    settings = sorted(
        {(w.named_tools, w.cut_style) for w in chosen_wanted}, key=lambda s: (sorted(s[0]), s[1])
    )
    for named, cut_style in settings:
        label = "-".join([*sorted(named), cut_style])
        log = root / f"model-requests-{label}.jsonl"
        with ModelServer(
            scripts_dir, log, root / "model-data", named_tools=named, cut_style=cut_style
        ) as server:
            for pin in pins:
                bin_dir = root / pin.name / f"bin-{label}"
                write_launchers(bin_dir, [pin], cache, model_url=server.url)
                group = [
                    w
                    for w in chosen_wanted
                    if (w.named_tools, w.cut_style) == (named, cut_style) and w.for_engine(pin.engine)
                ]
                written += _capture_pin(pin, group, scripts, root, bin_dir, corpus)
    return written


def _capture_pin(
    pin: Pin, wanted: list[Wanted], scripts: Mapping[str, Script], root: Path, bin_dir: Path, corpus: Path
) -> list[Path]:
    written: list[Path] = []
    for mode in modes_of(pin.engine):
        played: dict[tuple[str, tuple[str, ...]], list[TurnOutput]] = {}
        for one in wanted:
            key = (one.script, one.options)  # one server setting per call: the script and options suffice
            if key not in played:
                play_name = one.script if one.cut_style == "ended" else f"{one.script}-{one.cut_style}"
                where = root / pin.name / mode / play_name
                cwd = where / "run"
                cwd.mkdir(parents=True, exist_ok=True)
                (cwd / "SKILL.md").write_text("# Greet\n\nGreet the user.\n", encoding="utf-8")
                env = {"PATH": "/usr/bin:/bin", "HOME": str(where / "home"), "TURNGATE_STATE": str(where)}
                script = scripts[one.script]
                played[key] = play(
                    pin.engine,
                    mode,
                    script,
                    bin_dir,
                    cwd,
                    env,
                    timeout=one.timeout_for(pin.engine),
                    options=one.options,
                )
            outputs = played[key]
            if len(outputs) < one.turn:
                print(f"turngate: {pin.name} {one.name}: turn {one.turn} was not played", file=sys.stderr)
                continue
            output = outputs[one.turn - 1]
            label = f"{mode}-" if len(modes_of(pin.engine)) > 1 else ""
            folder = corpus / pin.engine / f"real-{pin.version}-{label}{one.name}"
            killed = (
                None
                if output.exit_code is not None
                else f"by the recorder after its {output.timeout_sec:g} s timeout"
            )
            recording = Recording(
                output.argv,
                output.stdout,
                output.stderr,
                output.exit_code,
                9 if output.exit_code is None else None,  # subprocess kills with SIGKILL
                output.duration_sec or 0.0,
                version=pin.version,
                killed=killed,
            )
            save(recording, folder, engine=pin.engine, mode="interactive")
            _complete(folder, pin, mode, one)
            written.append(folder)
    return written


def _complete(folder: Path, pin: Pin, mode: str, wanted: Wanted) -> None:
    """capture.yaml as corpus/README.md describes it, on top of what `save` wrote."""
    meta_path = folder / "capture.yaml"
    meta = load_data(meta_path.read_text(encoding="utf-8"))
    source = f"{pin.package} {pin.package_version}" if pin.source == "pip" else pin.package
    meta["description"] = f"real {pin.name} ({source}), {wanted.description}"
    meta["provenance"] = (
        f"recorded from the real {pin.name} against turngate's scripted model server"
        f" (`turngate engines real capture`, {wanted.kind} script {wanted.script}, turn {wanted.turn});"
        " secrets and home scrubbed"
    )
    meta["attempt_number"] = wanted.turn
    meta["max_attempt"] = None
    meta["output_schema"] = "greeting"
    if pin.engine == "gemini":
        meta["reader_options"] = {"mode": mode}
    meta["expect"] = dict(wanted.expect_for(pin.engine))
    recorded = meta.pop("recorded")  # last: the capture's facts first, how it was made after
    meta["recorded"] = recorded
    meta_path.write_text(
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8"
    )
