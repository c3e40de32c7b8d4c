"""`turngate engines selfcheck`: every bundled example played by every engine, read back.

Each example script runs turn by turn through the installed launchers as real
processes (resuming with the session id the reader found, as an orchestrator
would), and the stream is read by the reference readers, which know only the
documented formats. Per turn, three things must hold: the reply text the
script said is recovered exactly, the end-of-turn signal is what the script
asked for, and the exit code is the turn's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from turngate.engines import readers
from turngate.engines.fake.compiler import compile_script
from turngate.engines.fake.install import install
from turngate.engines.fake.script import precompile

EXAMPLES = Path(__file__).resolve().parent / "fake" / "examples"


@dataclass(frozen=True)
class Profile:
    """One engine with one output format, and how an orchestrator invokes it."""

    name: str
    engine: str
    output_format: str

    def first_turn(self, prompt: str) -> list[str]:
        match self.engine:
            case "codex":
                return ["exec", "--skip-git-repo-check", "--json", "--full-auto", prompt]
            case "gemini":
                return ["--yolo", "--output-format", self.output_format, prompt]
            case "iflow":
                return ["--yolo", "--thinking", "-p", prompt]
            case "claude":  # Skill-Runner v0.7.9's command lines for the three
                return ["-p", "--output-format", "stream-json", "--verbose", prompt]
            case "qwen":
                return ["--output-format", "stream-json", "--approval-mode", "yolo", "-p", prompt]
            case "codebuddy":
                return [
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--permission-mode",
                    "bypassPermissions",
                    prompt,
                ]
            case "kilo":
                return ["run", "--format", "json", "--auto", "--thinking", prompt]
        return ["run", "--format", "json", prompt]

    def resume(self, session_id: str, reply: str) -> list[str]:
        match self.engine:
            case "codex":
                return ["exec", "resume", "--skip-git-repo-check", "--json", "--full-auto", session_id, reply]
            case "gemini":
                return ["--resume", session_id, "--yolo", "--output-format", self.output_format, reply]
            case "iflow":
                return ["--resume", session_id, "--yolo", "--thinking", "-p", reply]
            case "claude":
                return ["--resume", session_id, "-p", "--output-format", "stream-json", "--verbose", reply]
            case "qwen":
                return [
                    "--output-format",
                    "stream-json",
                    "--approval-mode",
                    "yolo",
                    "--resume",
                    session_id,
                    "-p",
                    reply,
                ]
            case "codebuddy":
                return ["-p", "--output-format", "stream-json", "-r", session_id, reply]
            case "kilo":
                return ["run", "--format", "json", "--auto", "--thinking", "--session", session_id, reply]
        return ["run", f"--session={session_id}", "--format", "json", reply]


PROFILES = (
    Profile("codex", "codex", "json"),
    Profile("gemini/stream-json", "gemini", "stream-json"),
    Profile("gemini/json", "gemini", "json"),
    Profile("iflow", "iflow", "text"),
    Profile("opencode", "opencode", "json"),
    Profile("claude", "claude", "stream-json"),
    Profile("qwen", "qwen", "stream-json"),
    Profile("codebuddy", "codebuddy", "stream-json"),
    Profile("kilo", "kilo", "json"),
)

ABNORMAL_ENDINGS = ("crash", "hang", "truncate")


def said_texts(turn: dict[str, Any], engine: str = "") -> list[str]:
    """The reply texts a turn says before anything ends it abnormally (kilo: before its first error,
    after which a text is what a failed request left, not a reply)."""
    texts = []
    for step in turn["steps"]:
        if any(kind in step for kind in ABNORMAL_ENDINGS) or (engine == "kilo" and "error" in step):
            break
        if "say" in step:
            texts.append("".join(step["say"]))
    return texts


def ends_abnormally(turn: dict[str, Any]) -> bool:
    return any(kind in step for step in turn["steps"] for kind in ABNORMAL_ENDINGS)


def expected_reply(profile: Profile, turn: dict[str, Any]) -> str:
    """The turn's reply as the documented format carries it (docs/fake-engines.md)."""
    texts = said_texts(turn, profile.engine)
    if profile.engine == "iflow":
        return "".join(text if text.endswith("\n") else text + "\n" for text in texts)
    if profile.output_format == "json" and profile.engine == "gemini":
        # one document at the end of a completed turn, or none at all
        return "".join(texts) if turn["end"] == "completed" and not ends_abnormally(turn) else ""
    if profile.engine == "codebuddy":
        return _codebuddy_reply(turn)
    return "".join(texts)


def _codebuddy_reply(turn: dict[str, Any]) -> str:
    """codebuddy prints a text only when no text of the turn was printed before it and no thinking
    came before it in its answer (a tool call ends an answer); `result.result` then carries the last
    text, a reply when it is not the text last printed (docs/fake-engines.md, "codebuddy")."""
    printed: list[str] = []
    texts: list[str] = []
    thought = False
    for step in turn["steps"]:
        if any(kind in step for kind in ABNORMAL_ENDINGS):
            return "".join(printed)  # no result: nothing more
        if "tool" in step or "file_change" in step:
            thought = False
        elif "think" in step:
            thought = True
        elif "say" in step:
            text = "".join(step["say"])
            texts.append(text)
            if not printed and not thought:
                printed.append(text)
    if turn["end"] == "completed" and texts and texts[-1] and (not printed or texts[-1] != printed[-1]):
        printed.append(texts[-1])
    return "".join(printed)


def expected_turn_end(profile: Profile, turn: dict[str, Any]) -> bool | None:
    """True for a proper end, False for a failure signal, None for no end-of-turn signal."""
    if turn["end"] == "completed" and not ends_abnormally(turn):
        return True
    failed_end = turn["end"] == "failed" and not ends_abnormally(turn)
    if profile.engine == "kilo" and (_error_before_abnormal_end(turn) or failed_end):
        return False  # an error fails kilo's turn (and a failed end writes one if no step did)
    if profile.engine == "kilo" and turn["end"] == "none" and not ends_abnormally(turn) and _ran_a_tool(turn):
        return False  # the tool's step ended (step_finish "tool-calls"), and no stop came
    if profile.engine in ("opencode", "kilo") and _opencode_step_after_tool(turn):
        return False  # the tool's step ended with step_finish reason tool-calls, and no stop came
    if ends_abnormally(turn) or turn["end"] == "none":
        return None
    # iflow and opencode have no failure event that ends a turn: the block / step_finish is absent
    return None if profile.engine in ("iflow", "opencode") else False


def _error_before_abnormal_end(turn: dict[str, Any]) -> bool:
    """An error step written whole before the turn ends abnormally (a truncate cuts the line written
    last: an error there is not read)."""
    written: list[str] = []
    for step in turn["steps"]:
        if "truncate" in step:
            return "error" in written[:-1] if written and written[-1] == "error" else "error" in written
        if any(kind in step for kind in ABNORMAL_ENDINGS):
            break
        written.append(next(iter(step)))
    return "error" in written


def _ran_a_tool(turn: dict[str, Any]) -> bool:
    """A finished tool call (a running one is never printed) or a file change in the turn."""
    return any(
        ("tool" in step and not step["tool"].get("running")) or "file_change" in step
        for step in turn["steps"]
    )


def _opencode_step_after_tool(turn: dict[str, Any]) -> bool:
    """A tool step followed by an answer step (say, think, tool) before the turn stops: a new step began."""
    seen_tool = False
    for step in turn["steps"]:
        kind = next(iter(step))
        if kind in ("hang", "crash", "truncate"):
            return False
        if seen_tool and kind in ("say", "think", "tool"):
            return True
        seen_tool = seen_tool or kind == "tool"
    return False


@dataclass(frozen=True)
class TurnCheck:
    example: str
    profile: str
    turn: int
    problems: tuple[str, ...]


def check_example(
    path: Path, profile: Profile, bin_dir: Path, env: dict[str, str], workdir: Path
) -> list[TurnCheck]:
    compiled = compile_script(path)
    case_id = compiled["case"]
    checks = []
    session_id: str | None = None
    for number, turn in enumerate(compiled["turns"], start=1):
        if number == 1:
            args = profile.first_turn(f"Run the example. tg-case-{case_id}")
        elif session_id is None:
            checks.append(TurnCheck(case_id, profile.name, number, ("no session id to resume with",)))
            break
        else:
            args = profile.resume(session_id, f"reply {number}")
        completed = subprocess.run(
            [str(bin_dir / profile.engine), *args],
            env=env,
            cwd=workdir,
            capture_output=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
            check=False,
        )
        options = {"mode": profile.output_format} if profile.engine == "gemini" else {}
        transcript = readers.read(profile.engine, completed.stdout, completed.stderr, **options)
        problems = []
        reply = "".join(transcript.assistant_messages())
        if reply != expected_reply(profile, turn):
            problems.append(f"reply {reply!r} != said {expected_reply(profile, turn)!r}")
        said = tuple(said_texts(turn, profile.engine))
        if profile.engine in ("codex", "opencode", "kilo") and transcript.assistant_messages() != said:
            problems.append(f"messages {transcript.assistant_messages()!r} != {said!r}")
        end = transcript.turn_end()
        observed_end = None if end is None else end.ok
        if observed_end != expected_turn_end(profile, turn):
            problems.append(f"end of turn {observed_end} != expected {expected_turn_end(profile, turn)}")
        expected_code = _expected_exit_code(turn)
        if completed.returncode != expected_code:
            problems.append(
                f"exit code {completed.returncode} != {expected_code}: {completed.stderr[-300:]!r}"
            )
        session_id = transcript.session_id() or session_id
        checks.append(TurnCheck(case_id, profile.name, number, tuple(problems)))
    return checks


def _expected_exit_code(turn: dict[str, Any]) -> int:
    for step in turn["steps"]:
        if "crash" in step:
            crash = step["crash"]
            return -_signal_number(crash["signal"]) if crash["signal"] else int(crash["exit_code"])
        if "truncate" in step:
            return int(step["truncate"]["exit_code"])
    return int(turn["exit_code"])


def _signal_number(name: str) -> int:
    import signal

    return int(getattr(signal, name))


def run_selfcheck(examples: Sequence[Path] = (), profiles: Sequence[Profile] = PROFILES) -> list[TurnCheck]:
    paths = list(examples) or sorted(EXAMPLES.glob("*.yaml"))
    with tempfile.TemporaryDirectory(prefix="turngate-selfcheck-") as folder:
        root = Path(folder)
        scripts = root / "scripts"
        scripts.mkdir()
        for path in paths:
            shutil.copy(path, scripts / path.name)
            precompile(str(scripts / path.name), str(root / "state"))  # no engine start imports PyYAML
        install(root / "bin")
        workdir = root / "run"
        workdir.mkdir()
        env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(root),
            "TURNGATE_SCRIPTS": str(scripts),
            "TURNGATE_STATE": str(root / "state"),
        }
        results = []
        for path in paths:
            for profile in profiles:
                results.extend(check_example(scripts / path.name, profile, root / "bin", env, workdir))
        return results


def report(results: list[TurnCheck]) -> str:
    examples = sorted({check.example for check in results})
    profiles = [profile.name for profile in PROFILES]
    width = max(len(name) for name in examples) if examples else 10
    lines = ["example".ljust(width) + "  " + "  ".join(name.ljust(18) for name in profiles)]
    for example in examples:
        cells = []
        for name in profiles:
            turns = [check for check in results if check.example == example and check.profile == name]
            failed = [check for check in turns if check.problems]
            cells.append(
                (f"FAIL ({len(failed)}/{len(turns)})" if failed else f"ok ({len(turns)} turns)").ljust(18)
            )
        lines.append(example.ljust(width) + "  " + "  ".join(cells))
    failures = [check for check in results if check.problems]
    for check in failures:
        lines.append(
            f"FAIL {check.example} [{check.profile}] turn {check.turn}: " + "; ".join(check.problems)
        )
    passed = len(results) - len(failures)
    lines.append(f"{passed} passed, {len(failures)} failed")
    return "\n".join(lines)
