"""How a fake engine is found, launched and logged when a foreign orchestrator runs it."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from tests.conftest import ENGINES, EngineBench, first_turn_args, resume_args
from turngate.engines.fake.install import install


def test_call_log_records_argv_cwd_env_case_and_turn(bench: EngineBench) -> None:
    bench.case("logged", turns=[{"steps": [{"say": "hi"}]}])
    args = first_turn_args("codex", "Run greet. tg-case-logged")
    bench.run("codex", args, OPENAI_API_KEY="sk-secret", GEMINI_API_KEY="g-secret", CODEX_HOME="/x")
    (call,) = bench.calls()
    assert call["engine"] == "codex"
    assert call["argv"] == args
    assert call["cwd"] == str(bench.workdir)
    assert call["env"]["TURNGATE_SCRIPTS"] == str(bench.scripts)
    assert call["env"]["CODEX_HOME"] == "/x"
    assert call["env"]["GEMINI_API_KEY"] == "<redacted>"
    assert "OPENAI_API_KEY" not in call["env"]
    assert "PATH" not in call["env"]
    assert (call["case"], call["case_source"], call["turns"]) == ("logged", "prompt", [1])
    assert (call["action"], call["outcome"], call["exit_code"]) == ("run", "exited", 0)
    assert call["start"] <= call["end"]
    assert call["stdin"] is None


def test_case_from_input_json_then_environment(bench: EngineBench) -> None:
    bench.case("from-input", turns=[{"steps": [{"say": "input"}]}])
    bench.case("from-env", turns=[{"steps": [{"say": "env"}]}])
    (bench.workdir / "input.json").write_text(json.dumps({"input": {"note": "tg-case-from-input"}}))
    assert "input" in bench.run("opencode", ["run", "--format", "json", "no token here"]).out
    (bench.workdir / "input.json").unlink()
    played = bench.run("opencode", ["run", "--format", "json", "still none"], TURNGATE_CASE="from-env")
    assert '"text":"env"' in played.out
    assert [call["case_source"] for call in bench.calls()] == ["input.json", "env"]


def test_prompt_token_wins_over_input_json(bench: EngineBench) -> None:
    bench.case("a", turns=[{"steps": [{"say": "from a"}]}])
    bench.case("b", turns=[{"steps": [{"say": "from b"}]}])
    (bench.workdir / "input.json").write_text('{"x": "tg-case-b"}')
    assert "from a" in bench.run("iflow", ["-p", "tg-case-a.", "--yolo"]).out


def test_codex_prompt_from_stdin_is_logged(bench: EngineBench) -> None:
    bench.case("stdin", turns=[{"steps": [{"say": "read it"}]}])
    played = bench.run("codex", ["exec", "--json", "--skip-git-repo-check", "-"], stdin=b"tg-case-stdin go")
    assert played.returncode == 0, played.err
    (call,) = bench.calls()
    assert call["stdin"] == ["tg-case-stdin go"]


def test_codex_refuses_an_untrusted_folder_without_skip_flag(bench: EngineBench) -> None:
    bench.case("git", turns=[{"steps": [{"say": "ok"}]}])
    played = bench.run("codex", ["exec", "--json", "--full-auto", "tg-case-git"])
    assert played.returncode == 1
    assert played.err == "Not inside a trusted directory and --skip-git-repo-check was not specified.\n"
    (bench.workdir / ".git").mkdir()
    assert bench.run("codex", ["exec", "--json", "--full-auto", "tg-case-git"]).returncode == 0


@pytest.mark.parametrize("engine", ENGINES)
def test_version_and_help_need_no_scripts(bench: EngineBench, engine: str) -> None:
    env = {key: value for key, value in bench.env().items() if not key.startswith("TURNGATE_")}
    completed = subprocess.run(
        [str(bench.bin / engine), "--version"], capture_output=True, env=env, check=False
    )
    assert completed.returncode == 0
    assert completed.stdout.strip()
    assert completed.stderr == b""


RESUME_PROBES = {
    "codex": (["exec", "resume", "--help"], "--last"),
    "gemini": (["--resume", "X", "--help"], "--resume"),
    "iflow": (["--help"], "--resume"),
    "opencode": (["run", "--help"], "--session"),
    # what Skill-Runner v0.7.9 probes each for (services/engine_management/agent_cli_manager.py)
    "claude": (["--help"], "--resume"),
    "qwen": (["--help"], "--resume"),
    "codebuddy": (["--help"], "resume"),
    "kilo": (["run", "--help"], "--session"),  # on stderr, as 7.7.7 prints its help
}


@pytest.mark.parametrize("engine", ENGINES)
def test_non_resumable_knob_hides_resume_from_help_probes(bench: EngineBench, engine: str) -> None:
    probe, resume_word = RESUME_PROBES[engine]
    shown = bench.run(engine, probe)
    assert resume_word in shown.out + shown.err
    hidden = bench.run(engine, probe, TURNGATE_NON_RESUMABLE=engine)
    assert resume_word not in hidden.out + hidden.err
    bench.case("nr", turns=[{"steps": [{"say": "a"}]}, {"steps": [{"say": "b"}]}])
    refused = bench.run(engine, resume_args(engine, "whatever", "hi"), TURNGATE_NON_RESUMABLE="all")
    assert refused.returncode in (1, 2)
    assert refused.stdout == b""


def test_install_bakes_defaults_and_never_touches_path(tmp_path: os.PathLike[str]) -> None:
    from pathlib import Path

    root = Path(tmp_path)
    scripts = root / "scripts"
    scripts.mkdir()
    (scripts / "baked.yaml").write_text("case: baked\nturns:\n  - steps:\n      - say: baked in\n")
    written = install(root / "bin", scripts=scripts, call_log=root / "log.jsonl", non_resumable=("gemini",))
    assert sorted(path.name for path in written) == sorted(ENGINES)
    env = {"PATH": os.environ["PATH"], "HOME": str(root)}  # no TURNGATE_* at all
    completed = subprocess.run(
        [str(root / "bin" / "opencode"), "run", "--format", "json", "tg-case-baked"],
        capture_output=True,
        env=env,
        cwd=root,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert b"baked in" in completed.stdout
    assert json.loads((root / "log.jsonl").read_text())["case"] == "baked"
    assert (
        (root / "bin" / "codex").read_text().splitlines()[1].startswith("# turngate fake engine: codex. NOT")
    )
