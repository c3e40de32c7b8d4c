"""The argv the reference orchestrator builds (spec 003 "Adapter CLI 命令构造 MUST 与执行模式一致").

Every argv is also parsed by the fake engine's argv parser, which reads a
command line the way the real CLI does: a line the real engine would refuse, or
read differently (a prompt taken for an option), fails here.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from turngate.engines.fake.argv import claude, codebuddy, codex, gemini, iflow, kilo, opencode, qwen
from turngate.engines.fake.invocation import Invocation
from turngate.implementations.reference.commands import (
    ENGINES,
    MODES,
    CommandOptions,
    build_command,
    stdin_message,
)

PARSERS: dict[str, Any] = {
    "codex": codex,
    "gemini": gemini,
    "iflow": iflow,
    "opencode": opencode,
    "kilo": kilo,
    "claude": claude,
    "qwen": qwen,
    "codebuddy": codebuddy,
}
PROMPT = "Run the skill greet (instructions: skills/greet/SKILL.md).\nInputs:\n- case: tg-case-x"
REPLY = "Formal, please."
UUID = "c0ffee00-0000-4000-8000-000000000000"
SESSION = {
    "codex": "0199a213-81c0",
    "gemini": "3f2a-91",
    "iflow": "session-3f2a",
    "opencode": "ses_X1",
    "kilo": "ses_K1",
    "claude": UUID,  # claude resumes only a UUID (or a session title)
    "qwen": UUID,
    "codebuddy": UUID,
}


def parsed(argv: tuple[str, ...], *, resumable: bool = True) -> Invocation:
    """The line as the engine reads it (program name excluded, stdin not a terminal)."""
    invocation: Invocation = PARSERS[argv[0]].parse(list(argv[1:]), resumable=resumable, stdin_is_tty=False)
    assert invocation.action == "run"
    return invocation


# The table of ENGINE_FORMATS.md, word for word -------------------------------------------

EXACT = [
    pytest.param(
        "codex",
        None,
        CommandOptions(),
        ("codex", "exec", "--skip-git-repo-check", "--json", "--full-auto", PROMPT),
        id="codex-first",
    ),
    pytest.param(
        "codex",
        None,
        CommandOptions(codex_profile="skills"),
        ("codex", "exec", "--skip-git-repo-check", "--json", "--full-auto", "-p", "skills", PROMPT),
        id="codex-first-profile",
    ),
    pytest.param(
        "codex",
        "T1",
        CommandOptions(),
        ("codex", "exec", "resume", "--skip-git-repo-check", "--json", "--full-auto", "T1", PROMPT),
        id="codex-resume",
    ),
    pytest.param(
        "codex",
        "T1",
        CommandOptions(codex_auto_flag="--yolo", codex_profile="skills", model="gpt-5"),
        (
            "codex",
            "exec",
            "-p",
            "skills",
            "resume",
            "--skip-git-repo-check",
            "--json",
            "--yolo",
            "-m",
            "gpt-5",
            "T1",
            PROMPT,
        ),
        id="codex-resume-yolo-profile-model",
    ),
    pytest.param("gemini", None, CommandOptions(), ("gemini", "--yolo", PROMPT), id="gemini-first"),
    pytest.param(
        "gemini",
        None,
        CommandOptions(gemini_output_format="stream-json"),
        ("gemini", "--yolo", "--output-format", "stream-json", PROMPT),
        id="gemini-first-stream-json",
    ),
    pytest.param(
        "gemini", "S1", CommandOptions(), ("gemini", "--resume", "S1", "--yolo", PROMPT), id="gemini-resume"
    ),
    pytest.param(
        "iflow", None, CommandOptions(), ("iflow", "--yolo", "--thinking", "-p", PROMPT), id="iflow-first"
    ),
    pytest.param(
        "iflow",
        "session-1",
        CommandOptions(),
        ("iflow", "--resume", "session-1", "--yolo", "--thinking", "-p", PROMPT),
        id="iflow-resume",
    ),
    pytest.param(
        "opencode",
        None,
        CommandOptions(),
        ("opencode", "run", "--format", "json", PROMPT),
        id="opencode-first",
    ),
    pytest.param(
        "opencode",
        "ses_1",
        CommandOptions(model="anthropic/claude-sonnet-4"),
        (
            "opencode",
            "run",
            "--session=ses_1",
            "--format",
            "json",
            "--model",
            "anthropic/claude-sonnet-4",
            PROMPT,
        ),
        id="opencode-resume-model",
    ),
    # kilo: no spec text names its flags; Skill-Runner v0.7.9's (command_builder.py), without --dir
    pytest.param(
        "kilo",
        None,
        CommandOptions(),
        ("kilo", "run", "--format", "json", "--auto", "--thinking", PROMPT),
        id="kilo-first",
    ),
    pytest.param(
        "kilo",
        "ses_1",
        CommandOptions(model="kilo/kilo-auto/free"),
        (
            "kilo",
            "run",
            "--format",
            "json",
            "--auto",
            "--thinking",
            "--session",
            "ses_1",
            "--model",
            "kilo/kilo-auto/free",
            PROMPT,
        ),
        id="kilo-resume-model",
    ),
    # Skill-Runner v0.7.9's command lines (003 names no flag for these engines)
    pytest.param(
        "claude",
        None,
        CommandOptions(),
        ("claude", "-p", "--output-format", "stream-json", "--verbose", PROMPT),
        id="claude-first",
    ),
    pytest.param(
        "claude",
        UUID,
        CommandOptions(model="sonnet"),
        (
            "claude",
            "--resume",
            UUID,
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "sonnet",
            PROMPT,
        ),
        id="claude-resume-model",
    ),
    pytest.param(
        "qwen",
        None,
        CommandOptions(),
        ("qwen", "--output-format", "stream-json", "--approval-mode", "yolo", "-p", PROMPT),
        id="qwen-first",
    ),
    pytest.param(
        "qwen",
        UUID,
        CommandOptions(),
        ("qwen", "--output-format", "stream-json", "--approval-mode", "yolo", "--resume", UUID, "-p", PROMPT),
        id="qwen-resume",
    ),
    pytest.param(
        "codebuddy",
        None,
        CommandOptions(),
        (
            "codebuddy",
            "-p",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
            PROMPT,
        ),
        id="codebuddy-first",
    ),
    pytest.param(
        "codebuddy",
        UUID,
        CommandOptions(model="glm-5.0"),
        (
            "codebuddy",
            "-p",
            "--output-format",
            "stream-json",
            "--permission-mode",
            "bypassPermissions",
            "-r",
            UUID,
            "--model",
            "glm-5.0",
            PROMPT,
        ),
        id="codebuddy-resume-model",
    ),
]


@pytest.mark.parametrize(("engine", "resume_id", "options", "argv"), EXACT)
@pytest.mark.parametrize("mode", MODES)
def test_argv_matches_engine_formats_table(
    engine: str, resume_id: str | None, options: CommandOptions, argv: tuple[str, ...], mode: str
) -> None:
    assert build_command(engine, mode, prompt=PROMPT, resume_id=resume_id, options=options) == argv


# Spec 003 scenarios ------------------------------------------------------------------------


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/gemini-auto")
def test_gemini_auto_command_has_yolo() -> None:
    argv = build_command("gemini", "auto", prompt=PROMPT)
    assert "--yolo" in argv
    assert parsed(argv).auto_flags == ("--yolo",)


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/gemini-interactive")
def test_gemini_interactive_command_has_yolo() -> None:
    argv = build_command("gemini", "interactive", prompt=PROMPT)
    assert "--yolo" in argv
    assert parsed(argv).auto_flags == ("--yolo",)


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/iflow-auto")
def test_iflow_auto_command_has_yolo_and_thinking() -> None:
    argv = build_command("iflow", "auto", prompt=PROMPT)
    assert {"--yolo", "--thinking"} <= set(argv)
    invocation = parsed(argv)
    assert invocation.auto_flags == ("--yolo",)
    assert invocation.thinking


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/iflow-interactive")
def test_iflow_interactive_command_has_yolo_and_thinking() -> None:
    argv = build_command("iflow", "interactive", prompt=PROMPT)
    assert {"--yolo", "--thinking"} <= set(argv)
    invocation = parsed(argv)
    assert invocation.auto_flags == ("--yolo",)
    assert invocation.thinking


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/codex-auto")
@pytest.mark.parametrize("flag", ["--full-auto", "--yolo"])
def test_codex_auto_command_has_auto_flag(flag: Any) -> None:
    argv = build_command("codex", "auto", prompt=PROMPT, options=CommandOptions(codex_auto_flag=flag))
    assert flag in argv
    assert parsed(argv).auto_flags == (flag,)


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/codex-interactive")
@pytest.mark.parametrize("flag", ["--full-auto", "--yolo"])
def test_codex_interactive_command_has_auto_flag(flag: Any) -> None:
    argv = build_command("codex", "interactive", prompt=PROMPT, options=CommandOptions(codex_auto_flag=flag))
    assert flag in argv
    assert parsed(argv).auto_flags == (flag,)


@pytest.mark.spec("interactive-engine-turn-protocol/adapter-cli-command/interactive-resume")
@pytest.mark.parametrize("flag", ["--full-auto", "--yolo"])
def test_interactive_resume_turns_keep_auto_flags(flag: Any) -> None:
    options = CommandOptions(codex_auto_flag=flag)
    gemini_argv = build_command("gemini", "interactive", prompt=REPLY, resume_id="S1", options=options)
    iflow_argv = build_command("iflow", "interactive", prompt=REPLY, resume_id="S1", options=options)
    codex_argv = build_command("codex", "interactive", prompt=REPLY, resume_id="T1", options=options)
    assert parsed(gemini_argv).auto_flags == ("--yolo",)
    assert parsed(iflow_argv).auto_flags == ("--yolo",)
    assert parsed(iflow_argv).thinking
    assert parsed(codex_argv).auto_flags == (flag,)
    for argv, session in ((gemini_argv, "S1"), (iflow_argv, "S1"), (codex_argv, "T1")):
        assert parsed(argv).resume_id == session
        assert parsed(argv).prompt == REPLY


# Every line the engines accept, as the orchestrator meant it -------------------------------

OPTION_SETS = [
    CommandOptions(),
    CommandOptions(codex_auto_flag="--yolo", codex_profile="skills"),
    CommandOptions(gemini_output_format="json", model="vendor/model-1"),
    CommandOptions(gemini_output_format="stream-json", model="vendor/model-1"),
]


@pytest.mark.parametrize("options", OPTION_SETS)
@pytest.mark.parametrize("resume", [False, True], ids=["first", "resume"])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_every_argv_parses_as_meant(engine: str, mode: str, resume: bool, options: CommandOptions) -> None:
    resume_id = SESSION[engine] if resume else None
    argv = build_command(engine, mode, prompt=PROMPT, resume_id=resume_id, options=options)
    assert argv[0] == engine
    invocation = parsed(argv)
    assert invocation.prompt == PROMPT
    assert not invocation.prompt_from_stdin
    assert invocation.resume_id == resume_id
    assert not invocation.resume_latest
    assert invocation.model == options.model
    assert invocation.skip_git_repo_check
    expected_format = {
        "codex": "json",
        "gemini": options.gemini_output_format or "",  # "": .gemini/settings.json decides
        "iflow": "text",
        "opencode": "json",
        "kilo": "json",
        "claude": "stream-json",
        "qwen": "stream-json",
        "codebuddy": "stream-json",
    }
    assert invocation.output_format == expected_format[engine]
    if engine == "codex":
        assert invocation.auto_flags == (options.codex_auto_flag,)
        assert invocation.profile == options.codex_profile
    if engine == "kilo":
        assert (invocation.auto_flags, invocation.reasoning) == (("--auto",), "shown")


@pytest.mark.parametrize("engine", ENGINES)
def test_first_turn_parses_on_an_engine_without_resume(engine: str) -> None:
    # A sticky (resident) process is started with the first-turn argv, on engines that
    # look non-resumable: that line must use nothing a non-resumable build lacks.
    argv = build_command(engine, "interactive", prompt=PROMPT)
    assert parsed(argv, resumable=False).prompt == PROMPT


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("resume", [False, True], ids=["first", "resume"])
def test_mode_does_not_change_the_argv(engine: str, resume: bool) -> None:
    resume_id = SESSION[engine] if resume else None
    auto = build_command(engine, "auto", prompt=PROMPT, resume_id=resume_id)
    interactive = build_command(engine, "interactive", prompt=PROMPT, resume_id=resume_id)
    assert auto == interactive


# Replies are free text (004): whatever the user types must reach the engine as the prompt.
@pytest.mark.spec("interactive-decision-policy/free-text-reply/any-kind-free-text")
@given(
    engine=st.sampled_from(ENGINES),
    reply=st.one_of(
        st.text(min_size=1).filter(lambda text: text.strip() != ""),
        st.sampled_from(["help", "resume", "review", "mcp", "extensions", "run", "true", "false", "--"]),
        st.from_regex(r"-?(0x[0-9a-f]{1,3}|[0-9]{0,3}\.?[0-9]{1,3}(e[-+]?[0-9])?)", fullmatch=True),
    ),
    resume=st.booleans(),
)
def test_any_free_text_reaches_the_engine_as_the_prompt(engine: str, reply: str, resume: bool) -> None:
    resume_id = SESSION[engine] if resume else None
    argv = build_command(engine, "interactive", prompt=reply, resume_id=resume_id)
    invocation = parsed(argv)
    sent = argv[-1]
    assert sent in (reply, " " + reply)  # at most a leading space added
    assert invocation.prompt == sent  # as written, not read as an option, a flag value or a number
    assert invocation.resume_id == resume_id
    assert not invocation.resume_latest


@pytest.mark.parametrize("reply", ["--help", "-v", "--version", "-", "--", "-p x", "--yolo=false", "-5"])
@pytest.mark.parametrize("engine", ENGINES)
def test_replies_that_look_like_options_stay_text(engine: str, reply: str) -> None:
    argv = build_command(engine, "interactive", prompt=reply, resume_id=SESSION[engine])
    assert argv[-1] == " " + reply
    invocation = parsed(argv)  # "run", not help or version
    assert invocation.prompt == " " + reply
    assert invocation.resume_id == SESSION[engine]


@pytest.mark.parametrize("reply", ["true", "false", "2", "1.50", "0x1f", "1e3", ".5"])
@pytest.mark.parametrize("resume", [False, True], ids=["first", "resume"])
def test_gemini_replies_yargs_would_misread_stay_text(reply: str, resume: bool) -> None:
    # `gemini --yolo false` turns YOLO off and has no prompt; `gemini 1.50` asks "1.5".
    argv = build_command("gemini", "interactive", prompt=reply, resume_id="S1" if resume else None)
    assert argv[-1] == " " + reply
    invocation = parsed(argv)
    assert invocation.prompt == " " + reply
    assert invocation.auto_flags == ("--yolo",)


@pytest.mark.parametrize("reply", ["resume", "review", "help"])
def test_codex_replies_that_name_a_subcommand_stay_text(reply: str) -> None:
    # `codex exec --json ... help` prints exec's help; `... resume` resumes without a thread id.
    argv = build_command("codex", "interactive", prompt=reply)
    assert argv[-1] == " " + reply
    assert parsed(argv).prompt == " " + reply


@pytest.mark.parametrize("reply", ["mcp", "extensions", "extension"])
def test_gemini_replies_that_name_a_command_stay_text(reply: str) -> None:
    argv = build_command("gemini", "interactive", prompt=reply)
    assert argv[-1] == " " + reply
    assert parsed(argv).prompt == " " + reply


@pytest.mark.parametrize("reply", ["true", "false"])
def test_kilo_replies_its_thinking_flag_would_take_stay_text(reply: str) -> None:
    # `kilo run --format json --auto --thinking true` turns thinking on and sends no message.
    argv = build_command("kilo", "interactive", prompt=reply)
    assert argv[-2:] == ("--thinking", " " + reply)
    assert parsed(argv).prompt == " " + reply


@pytest.mark.parametrize(
    ("engine", "reply"), [("claude", "doctor"), ("claude", "mcp"), ("codebuddy", "config")]
)
def test_commander_replies_that_name_a_subcommand_stay_text(engine: str, reply: str) -> None:
    argv = build_command(engine, "interactive", prompt=reply)
    assert argv[-1] == " " + reply
    assert parsed(argv).prompt == " " + reply


@pytest.mark.parametrize("engine", ["claude", "qwen", "codebuddy"])
@pytest.mark.parametrize("resume", [False, True], ids=["first", "resume"])
def test_a_resident_process_reads_its_messages_as_stream_json_on_stdin(engine: str, resume: bool) -> None:
    resume_id = SESSION[engine] if resume else None
    argv = build_command(engine, "interactive", prompt=PROMPT, resume_id=resume_id, resident=True)
    assert PROMPT not in argv
    invocation = parsed(argv, resumable=resume)
    assert (invocation.input_format, invocation.output_format) == ("stream-json", "stream-json")
    assert invocation.prompt_from_stdin and invocation.resume_id == resume_id
    assert (
        stdin_message(engine, "Formal ✓")
        == '{"type": "user", "message": {"role": "user", "content": "Formal ✓"}}'
    )


@pytest.mark.parametrize("engine", ["codex", "gemini", "iflow", "opencode", "kilo"])
def test_other_resident_processes_take_the_first_turns_command_line_and_raw_replies(engine: str) -> None:
    assert build_command(engine, "interactive", prompt=PROMPT, resident=True) == build_command(
        engine, "interactive", prompt=PROMPT
    )
    assert stdin_message(engine, "Formal") == "Formal"


@pytest.mark.parametrize("engine", ["iflow", "opencode", "qwen"])
def test_other_engines_take_such_words_as_written(engine: str) -> None:
    for reply in ("true", "false", "1.50", "help", "resume", "mcp", "run"):
        argv = build_command(engine, "interactive", prompt=reply)
        assert argv[-1] == reply
        assert parsed(argv).prompt == reply


@given(
    engine=st.sampled_from(ENGINES),
    session=st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.:-]{0,40}", fullmatch=True).filter(
        lambda text: text != "latest"  # gemini's word for "the most recent session"
    ),
)
def test_any_session_id_is_resumed_as_given(engine: str, session: str) -> None:
    if engine == "claude":  # claude resumes a UUID and refuses any other id itself (test_claude.py)
        session = UUID
    assert parsed(build_command(engine, "auto", prompt=REPLY, resume_id=session)).resume_id == session


# Refusals ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("engine", "mode", "named"),
    [
        ("aider", "auto", "'aider'"),
        ("codex", "batch", "'batch'"),
        ("", "auto", "''"),
        ("Codex", "auto", "'Codex'"),
    ],
)
def test_unknown_engine_or_mode_is_refused_by_name(engine: str, mode: str, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        build_command(engine, mode, prompt=PROMPT)


@pytest.mark.parametrize("resume_id", ["", "  ", "-x", "--last"])
@pytest.mark.parametrize("engine", ENGINES)
def test_a_resume_id_that_would_not_resume_that_session_is_refused(engine: str, resume_id: str) -> None:
    # gemini reads `--resume -x` as `--resume` alone: the latest session, maybe another run's.
    with pytest.raises(ValueError, match="resume_id"):
        build_command(engine, "interactive", prompt=REPLY, resume_id=resume_id)


def test_opencode_model_must_name_the_provider() -> None:
    with pytest.raises(ValueError, match="provider/model"):
        build_command("opencode", "auto", prompt=PROMPT, options=CommandOptions(model="gpt-5"))


@pytest.mark.parametrize(
    "fields",
    [
        {"codex_auto_flag": "--dangerously-bypass-approvals-and-sandbox"},
        {"gemini_output_format": "text"},
        {"codex_profile": ""},
        {"codex_profile": "-x"},
        {"model": "--yolo"},
    ],
)
def test_command_options_refuse_values_the_engines_would_misread(fields: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=next(iter(fields))):
        CommandOptions(**fields)
