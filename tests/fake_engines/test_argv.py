"""The fake engines' argv parsers: command lines as the real CLIs read them.

Exact texts (errors, help digests) were captured from the real codex-cli
0.99.0, gemini-cli 0.16.0 and opencode 1.0.61; iflow's are modelled on its
gemini-cli ancestry. No subprocesses: each parser is called directly.
"""

from __future__ import annotations

import hashlib
from typing import Any

import pytest

from turngate.engines.fake.argv import codex, gemini, iflow, opencode
from turngate.engines.fake.invocation import Invocation, UsageError

PARSERS = {"codex": codex, "gemini": gemini, "iflow": iflow, "opencode": opencode}
CLAP_HINT = "For more information, try '--help'.\n"
EXEC_USAGE = "Usage: codex exec [OPTIONS] [PROMPT] [COMMAND]"
RESUME_USAGE = "Usage: codex exec resume [OPTIONS] [SESSION_ID] [PROMPT]"
OPENCODE_ERROR = "\x1b[91m\x1b[1mError: \x1b[0m"
BYPASS = "--dangerously-bypass-approvals-and-sandbox"


def parse(engine: str, argv: list[str], *, resumable: bool = True, tty: bool = False) -> Invocation:
    invocation: Invocation = PARSERS[engine].parse(argv, resumable=resumable, stdin_is_tty=tty)
    return invocation


def refusal(engine: str, argv: list[str], *, resumable: bool = True, tty: bool = False) -> UsageError:
    with pytest.raises(UsageError) as raised:
        parse(engine, argv, resumable=resumable, tty=tty)
    return raised.value


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def run(engine: str, **fields: Any) -> Invocation:
    return Invocation(engine=engine, action="run", **fields)


# The command lines of ENGINE_FORMATS.md ---------------------------------------------------

ORCHESTRATOR_LINES = [
    pytest.param(
        "codex",
        ["exec", "--skip-git-repo-check", "--json", "--full-auto", "-p", "skills", "Run greet."],
        run(
            "codex", prompt="Run greet.", output_format="json", auto_flags=("--full-auto",), profile="skills"
        ),
        id="codex-first",
    ),
    pytest.param(
        "codex",
        ["exec", "--skip-git-repo-check", "--json", "--yolo", "-p", "skills", "Run greet."],
        run("codex", prompt="Run greet.", output_format="json", auto_flags=("--yolo",), profile="skills"),
        id="codex-first-yolo",
    ),
    pytest.param(
        "codex",
        ["exec", "resume", "--skip-git-repo-check", "--json", "--full-auto", "0199a213-81c0", "Formal."],
        run(
            "codex",
            prompt="Formal.",
            resume_id="0199a213-81c0",
            output_format="json",
            auto_flags=("--full-auto",),
        ),
        id="codex-resume",
    ),
    pytest.param(
        "codex",
        ["exec", "-p", "skills", "resume", "--skip-git-repo-check", "--json", "--full-auto", "T1", "Formal."],
        run(
            "codex",
            prompt="Formal.",
            resume_id="T1",
            output_format="json",
            auto_flags=("--full-auto",),
            profile="skills",
        ),
        id="codex-resume-profile-first",
    ),
    pytest.param(
        "gemini", ["--yolo", "Run greet."], run("gemini", prompt="Run greet.", auto_flags=("--yolo",))
    ),
    pytest.param(
        "gemini",
        ["--yolo", "--output-format", "stream-json", "Run greet."],
        run("gemini", prompt="Run greet.", output_format="stream-json", auto_flags=("--yolo",)),
        id="gemini-first-stream-json",
    ),
    pytest.param(
        "gemini",
        ["--resume", "3f2a", "--yolo", "Formal."],
        run("gemini", prompt="Formal.", resume_id="3f2a", auto_flags=("--yolo",)),
        id="gemini-resume",
    ),
    pytest.param(
        "iflow",
        ["--yolo", "--thinking", "-p", "Run greet."],
        run("iflow", prompt="Run greet.", output_format="text", auto_flags=("--yolo",), thinking=True),
        id="iflow-first",
    ),
    pytest.param(
        "iflow",
        ["--resume", "session-3f2a", "--yolo", "--thinking", "-p", "Formal."],
        run(
            "iflow",
            prompt="Formal.",
            resume_id="session-3f2a",
            output_format="text",
            auto_flags=("--yolo",),
            thinking=True,
        ),
        id="iflow-resume",
    ),
    pytest.param(
        "opencode",
        ["run", "--format", "json", "--model", "anthropic/claude-sonnet-4", "Run greet."],
        run("opencode", prompt="Run greet.", model="anthropic/claude-sonnet-4", output_format="json"),
        id="opencode-first",
    ),
    pytest.param(
        "opencode",
        ["run", "--session=ses_X", "--format", "json", "Formal."],
        run("opencode", prompt="Formal.", resume_id="ses_X", output_format="json"),
        id="opencode-resume",
    ),
]


@pytest.mark.parametrize(("engine", "argv", "expected"), ORCHESTRATOR_LINES)
def test_orchestrator_lines_parse_into_invocations(
    engine: str, argv: list[str], expected: Invocation
) -> None:
    assert parse(engine, argv) == expected


LATEST_LINES = [
    pytest.param("codex", ["exec", "resume", "--last", "--json", "Formal."], "json", id="codex-last"),
    pytest.param("gemini", ["--resume", "latest", "Formal."], "", id="gemini-latest"),
    pytest.param("gemini", ["--resume", "--yolo", "Formal."], "", id="gemini-resume-without-value"),
    pytest.param("iflow", ["--continue", "-p", "Formal."], "text", id="iflow-continue"),
    pytest.param("opencode", ["run", "--continue", "Formal."], "default", id="opencode-continue"),
]


@pytest.mark.parametrize(("engine", "argv", "output_format"), LATEST_LINES)
def test_resuming_the_latest_session(engine: str, argv: list[str], output_format: str) -> None:
    invocation = parse(engine, argv)
    assert (invocation.prompt, invocation.resume_id, invocation.resume_latest) == ("Formal.", None, True)
    assert invocation.output_format == output_format


def test_codex_last_takes_the_first_word_as_the_prompt_and_a_second_over_it() -> None:
    assert parse("codex", ["exec", "resume", "--last", "one"]).prompt == "one"
    assert parse("codex", ["exec", "resume", "--last", "one", "two"]).prompt == "two"
    # A prompt before `resume` is used when resume has none.
    assert parse("codex", ["exec", "early", "resume", "T1"]).prompt == "early"


def test_codex_collects_flags_from_both_sides_of_resume() -> None:
    invocation = parse("codex", ["exec", "--json", "-m", "o3", "resume", "--yolo", "-m", "o4", "T1", "hi"])
    assert (invocation.output_format, invocation.auto_flags, invocation.model) == ("json", ("--yolo",), "o4")
    assert not invocation.skip_git_repo_check


def test_gemini_auto_flags_and_approval_mode() -> None:
    assert parse("gemini", ["-y", "hi"]).auto_flags == ("-y",)
    assert parse("gemini", ["-yd", "hi"]).auto_flags == ("-y",)
    assert parse("gemini", ["--approval-mode", "yolo", "hi"]).auto_flags == ("--approval-mode=yolo",)
    assert parse("gemini", ["--approval-mode=auto_edit", "hi"]).auto_flags == ()
    assert parse("gemini", ["--no-yolo", "hi"]).auto_flags == ()


def test_gemini_joins_the_positional_words_like_yargs() -> None:
    assert parse("gemini", ["Run", "greet", "now"]).prompt == "Run greet now"
    # yargs loses a lone "-" and reads untyped positionals as numbers.
    assert parse("gemini", ["a", "-", "b"]).prompt == "a b"
    assert parse("gemini", ["1.50", "0x1f", "007"]).prompt == "1.5 31 007"
    assert parse("gemini", ["-p", "1.50"]).prompt == "1.50"


# Prompts from stdin ----------------------------------------------------------------------

STDIN_LINES = [
    pytest.param("codex", ["exec", "--json"], id="codex-none"),
    pytest.param("codex", ["exec", "--json", "-"], id="codex-dash"),
    pytest.param("codex", ["exec", "resume", "T1"], id="codex-resume-without-reply"),
    pytest.param("gemini", ["--yolo"], id="gemini"),
    pytest.param("iflow", ["--yolo"], id="iflow"),
    pytest.param("opencode", ["run", "--format", "json"], id="opencode"),
]


@pytest.mark.parametrize(("engine", "argv"), STDIN_LINES)
def test_without_a_prompt_a_piped_stdin_is_read(engine: str, argv: list[str]) -> None:
    invocation = parse(engine, argv, tty=False)
    assert (invocation.prompt, invocation.prompt_from_stdin) == (None, True)


TTY_REFUSALS = [
    pytest.param(
        "codex",
        ["exec", "--json"],
        "No prompt provided. Either specify one as an argument or pipe the prompt into stdin.\n",
        id="codex",
    ),
    pytest.param(
        "gemini",
        ["--yolo"],
        "turngate fake gemini: interactive mode is not simulated; pass a prompt\n",
        id="gemini",
    ),
    pytest.param(
        "iflow",
        ["--yolo"],
        "turngate fake iflow: interactive mode is not simulated; pass a prompt\n",
        id="iflow",
    ),
    pytest.param(
        "opencode", ["run"], OPENCODE_ERROR + "You must provide a message or a command\n", id="opencode"
    ),
]


@pytest.mark.parametrize(("engine", "argv", "text"), TTY_REFUSALS)
def test_without_a_prompt_a_terminal_stdin_is_refused(engine: str, argv: list[str], text: str) -> None:
    error = refusal(engine, argv, tty=True)
    assert (error.text, error.exit_code) == (text, 1)


def test_codex_dash_reads_stdin_even_from_a_terminal() -> None:
    assert parse("codex", ["exec", "-"], tty=True).prompt_from_stdin


# --version and --help ---------------------------------------------------------------------

VERSIONS = [
    ("codex", ["--version"], "codex-cli 0.99.0\n"),
    ("codex", ["-V"], "codex-cli 0.99.0\n"),
    # clap names a subcommand's version after its parent.
    ("codex", ["exec", "--version"], "codex-cli-exec 0.99.0\n"),
    ("gemini", ["--version"], "0.16.0\n"),
    ("gemini", ["-v", "--unknown"], "0.16.0\n"),
    ("iflow", ["-v"], "0.3.9\n"),
    ("opencode", ["--version"], "1.0.62\n"),
    ("opencode", ["run", "-v"], "1.0.62\n"),
]


@pytest.mark.parametrize(("engine", "argv", "text"), VERSIONS)
@pytest.mark.parametrize("resumable", [True, False])
def test_version(engine: str, argv: list[str], text: str, resumable: bool) -> None:
    assert parse(engine, argv, resumable=resumable) == Invocation(engine=engine, action="version", text=text)


def test_version_constants() -> None:
    assert (codex.VERSION, gemini.VERSION, iflow.VERSION, opencode.VERSION) == (
        "codex-cli 0.99.0",
        "0.16.0",
        "0.3.9",
        "1.0.62",
    )


# sha256 of the help the real CLIs print (stdout, not a terminal).
REAL_HELP_DIGESTS = [
    pytest.param(
        "codex", ["--help"], "64acbe2f48a3a0b7beed28fc4fb220572e0a369ccf2ae7ca6516000d294ad542", id="codex"
    ),
    pytest.param(
        "codex", ["-h"], "3030105d377e4d57f2b1f936d0185311623c718d55bbc0c58c2789c7ded765fc", id="codex-h"
    ),
    pytest.param(
        "codex",
        ["exec", "--help"],
        "3c7181e161a23b106961fbf80fa91b7d2bde8090fe3a1504f12c79d884b2289b",
        id="exec",
    ),
    pytest.param(
        "codex",
        ["exec", "-h"],
        "e901f8247cc2849c3fde7e7ca1042108ef57eb41c2ca8f9cd99d894e355f1422",
        id="exec-h",
    ),
    pytest.param(
        "codex",
        ["exec", "resume", "--help"],
        "390a915dd6755f72deb6307d27b2272f6d823ad9d904cc86707f5d743b5c070a",
        id="resume",
    ),
    pytest.param(
        "codex",
        ["exec", "resume", "-h"],
        "8026073d4bf06ee53226d7fdd5906033f92ae1dd1044a82604cc53e7b56d4fca",
        id="resume-h",
    ),
    pytest.param(
        "gemini", ["--help"], "98af8eb1a094211d688819e39adcff7acaaeac72bd57fe0934449758e27dfc06", id="gemini"
    ),
    pytest.param(
        "opencode",
        ["--help"],
        "f34166c9a113bb6a944353f7720ad87f95ef8cb7fc53a9f7ea6bf18d1567dd50",
        id="opencode",
    ),
    pytest.param(
        "opencode",
        ["run", "--help"],
        "c94519838fba18f8351f208f17a27d81ff831d3993fe4da65af4a4d9ca7e05bf",
        id="run",
    ),
]


@pytest.mark.parametrize(("engine", "argv", "sha256"), REAL_HELP_DIGESTS)
def test_help_is_the_real_clis_help(engine: str, argv: list[str], sha256: str) -> None:
    invocation = parse(engine, argv)
    assert invocation.action == "help"
    assert digest(invocation.text) == sha256


def test_help_spot_checks() -> None:
    exec_help = parse("codex", ["exec", "--help"]).text
    assert exec_help.startswith(
        "Run Codex non-interactively\n\nUsage: codex exec [OPTIONS] [PROMPT] [COMMAND]\n"
    )
    assert "  resume  Resume a previous session by id or pick the most recent with --last\n" in exec_help
    gemini_help = parse("gemini", ["--help"]).text
    assert "  -o, --output-format             The format of the CLI output." in gemini_help
    assert gemini_help.endswith("  -h, --help                      Show help  [boolean]\n")
    iflow_help = parse("iflow", ["--help"]).text
    assert iflow_help.startswith("Usage: iflow [options] [command]\n\niFlow CLI - Launch an interactive CLI")
    assert "  -c, --continue  Continue the most recent session  [boolean] [default: false]\n" in iflow_help


# The probes an orchestrator uses to decide resumable versus sticky_process.
RESUME_PROBES = [
    pytest.param("codex", ["exec", "resume", "--help"], ("[SESSION_ID]", "--last"), id="codex"),
    pytest.param("gemini", ["--resume", "X", "--help"], ("--resume", "--list-sessions"), id="gemini"),
    pytest.param("iflow", ["--resume", "X", "--help"], ("--resume", "--continue"), id="iflow"),
    pytest.param("opencode", ["run", "--help"], ("--session", "--continue"), id="opencode"),
]


@pytest.mark.parametrize(("engine", "probe", "words"), RESUME_PROBES)
def test_resume_probes_show_resume_only_when_resumable(
    engine: str, probe: list[str], words: tuple[str, ...]
) -> None:
    shown = parse(engine, probe, resumable=True)
    hidden = parse(engine, probe, resumable=False)
    assert shown.action == hidden.action == "help"
    for word in words:
        assert word in shown.text
        assert word not in hidden.text


def test_non_resumable_help_only_loses_the_resume_lines() -> None:
    assert parse("codex", ["exec", "resume", "--help"], resumable=False).text == (
        parse("codex", ["exec", "--help"]).text.replace(
            "  resume  Resume a previous session by id or pick the most recent with --last\n", ""
        )
    )
    gemini_help = parse("gemini", ["--help"]).text.splitlines(keepends=True)
    kept = [
        line
        for line in gemini_help
        if not line.startswith(("  -r, --resume", "      --list-s", "      --delete-s"))
    ]
    assert parse("gemini", ["--help"], resumable=False).text == "".join(kept)
    top_resume = "\n  resume      Resume a previous interactive session"
    assert top_resume in parse("codex", ["--help"]).text
    assert top_resume not in parse("codex", ["--help"], resumable=False).text


def test_help_cuts_the_rest_of_the_line_short() -> None:
    assert parse("gemini", ["--unknown", "-o", "xml", "--help"]).action == "help"
    assert parse("opencode", ["run", "--foo", "-h"]).action == "help"
    # clap answers --help when it reaches it: earlier errors win.
    assert parse("codex", ["exec", "--full-auto", "--yolo", "--help"]).action == "help"
    assert refusal("codex", ["exec", "--foo", "--help"]).exit_code == 2
    assert refusal("codex", ["exec", "-p", "--help"]).text.startswith(
        "error: a value is required for '--profile"
    )


def test_clap_help_subcommand() -> None:
    assert parse("codex", ["exec", "help"]) == parse("codex", ["exec", "--help"])
    assert parse("codex", ["help", "exec", "resume"]) == parse("codex", ["exec", "resume", "--help"])
    error = refusal("codex", ["exec", "help", "foo"])
    assert error.text == f"error: unrecognized subcommand 'foo'\n\n{EXEC_USAGE}\n\n{CLAP_HINT}"


# codex errors (clap, exit 2) ---------------------------------------------------------------

CODEX_ERRORS = [
    pytest.param(
        ["exec", "--foo"],
        "error: unexpected argument '--foo' found\n\n  tip: a similar argument exists: '--yolo'\n\n"
        "Usage: codex exec --dangerously-bypass-approvals-and-sandbox [PROMPT]\n\n" + CLAP_HINT,
        id="unknown-long-suggested",
    ),
    pytest.param(
        ["exec", "--bar"],
        f"error: unexpected argument '--bar' found\n\n  tip: to pass '--bar' as a value, use '-- --bar'\n\n"
        f"{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="unknown-long",
    ),
    pytest.param(
        ["exec", "--json", "--jsn"],
        "error: unexpected argument '--jsn' found\n\n  tip: a similar argument exists: '--json'\n\n"
        "Usage: codex exec --json [PROMPT]\n\n" + CLAP_HINT,
        id="unknown-long-after-used",
    ),
    pytest.param(
        ["exec", "-x"],
        f"error: unexpected argument '-x' found\n\n  tip: to pass '-x' as a value, use '-- -x'\n\n"
        f"{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="unknown-short",
    ),
    pytest.param(
        ["exec", "--last", "resume"],
        "error: unexpected argument '--last' found\n\n"
        f"  tip: 'resume --last' exists\n\n{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="subcommand-flag-tip",
    ),
    pytest.param(
        ["exec", "a", "b"],
        f"error: unexpected argument 'b' found\n\n{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="extra-positional",
    ),
    pytest.param(
        ["exec", "hello", "resme"],
        "error: unrecognized subcommand 'resme'\n\n"
        "  tip: some similar subcommands exist: 'review', 'resume'\n\n"
        f"{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="similar-subcommands",
    ),
    pytest.param(
        ["exec", "--", "--json", "resume"],
        "error: unexpected argument 'resume' found\n\n"
        "  tip: subcommand 'resume' exists; to use it, remove the '--' before it\n\n"
        f"{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="subcommand-after-double-dash",
    ),
    pytest.param(
        ["exec", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "p"],
        f"error: the argument '--full-auto' cannot be used with '{BYPASS}'\n\n"
        "Usage: codex exec --full-auto <PROMPT>\n\n" + CLAP_HINT,
        id="conflict",
    ),
    pytest.param(
        ["exec", "--yolo", "--full-auto"],
        f"error: the argument '{BYPASS}' cannot be used with '--full-auto'\n\n"
        "Usage: codex exec --dangerously-bypass-approvals-and-sandbox [PROMPT]\n\n" + CLAP_HINT,
        id="conflict-yolo-first",
    ),
    pytest.param(
        ["exec", "resume", "--full-auto", "--yolo", "T1", "hi"],
        f"error: the argument '--full-auto' cannot be used with '{BYPASS}'\n\n"
        "Usage: codex exec resume --full-auto <SESSION_ID> <PROMPT>\n\n" + CLAP_HINT,
        id="conflict-in-resume",
    ),
    pytest.param(
        ["exec", "-p"],
        "error: a value is required for '--profile <CONFIG_PROFILE>' but none was supplied\n\n" + CLAP_HINT,
        id="missing-value",
    ),
    pytest.param(
        ["exec", "--sandbox=", "x"],
        "error: a value is required for '--sandbox <SANDBOX_MODE>' but none was supplied\n"
        "  [possible values: read-only, workspace-write, danger-full-access]\n\n" + CLAP_HINT,
        id="empty-choice",
    ),
    pytest.param(
        ["exec", "-s", "x"],
        "error: invalid value 'x' for '--sandbox <SANDBOX_MODE>'\n"
        "  [possible values: read-only, workspace-write, danger-full-access]\n\n" + CLAP_HINT,
        id="invalid-choice",
    ),
    pytest.param(
        ["exec", "--sandbox", "read_only"],
        "error: invalid value 'read_only' for '--sandbox <SANDBOX_MODE>'\n"
        "  [possible values: read-only, workspace-write, danger-full-access]\n\n"
        "  tip: a similar value exists: 'read-only'\n\n" + CLAP_HINT,
        id="invalid-choice-similar",
    ),
    pytest.param(
        ["exec", "--json", "--json"],
        f"error: the argument '--json' cannot be used multiple times\n\n{EXEC_USAGE}\n\n{CLAP_HINT}",
        id="used-twice",
    ),
    pytest.param(
        ["exec", "--skip-git-repo-check=true"],
        "error: unexpected value 'true' for '--skip-git-repo-check' found; no more were expected\n\n"
        "Usage: codex exec --skip-git-repo-check [PROMPT]\n\n" + CLAP_HINT,
        id="flag-with-value",
    ),
    pytest.param(
        ["exec", "resume", "-p", "prof", "T1"],
        f"error: unexpected argument '-p' found\n\n  tip: to pass '-p' as a value, use '-- -p'\n\n"
        f"{RESUME_USAGE}\n\n{CLAP_HINT}",
        id="exec-option-after-resume",
    ),
    pytest.param(
        ["exec", "resume", "a", "b", "c"],
        f"error: unexpected argument 'c' found\n\n{RESUME_USAGE}\n\n{CLAP_HINT}",
        id="resume-extra-positional",
    ),
    pytest.param(
        ["exec", "resume", "--json"],
        "error: the following required arguments were not provided:\n  <SESSION_ID|--last>\n\n"
        "Usage: codex exec resume --json <SESSION_ID|--last> [PROMPT]\n\n" + CLAP_HINT,
        id="resume-without-target",
    ),
    pytest.param(
        ["--foo"],
        "error: unexpected argument '--foo' found\n\n  tip: a similar argument exists: '--yolo'\n\n"
        "Usage: codex [OPTIONS] [PROMPT]\n       codex [OPTIONS] <COMMAND> [ARGS]\n\n" + CLAP_HINT,
        id="top-level",
    ),
    pytest.param(
        [],
        "turngate fake codex: the interactive TUI is not simulated; use 'codex exec'\n",
        id="tui",
    ),
    pytest.param(
        ["login"],
        "turngate fake codex: 'codex login' is not simulated; use 'codex exec'\n",
        id="other-command",
    ),
]


@pytest.mark.parametrize(("argv", "text"), CODEX_ERRORS)
def test_codex_errors(argv: list[str], text: str) -> None:
    error = refusal("codex", argv)
    assert (error.text, error.exit_code) == (text, 2)


def test_codex_config_override_errors_exit_1() -> None:
    error = refusal("codex", ["exec", "-c", "model", "hi"])
    assert (error.text, error.exit_code) == (
        "Error parsing -c overrides: Invalid override (missing '='): model\n",
        1,
    )


def test_codex_without_resume_treats_resume_as_the_prompt() -> None:
    argv = ["exec", "resume", "--skip-git-repo-check", "--json", "--full-auto", "T1", "Formal."]
    error = refusal("codex", argv, resumable=False)
    assert error.text == f"error: unexpected argument 'T1' found\n\n{EXEC_USAGE}\n\n{CLAP_HINT}"
    assert parse("codex", ["exec", "resume"], resumable=False).prompt == "resume"
    last = refusal("codex", ["exec", "resume", "--last"], resumable=False)
    assert last.text.startswith(
        "error: unexpected argument '--last' found\n\n  tip: to pass '--last' as a value"
    )


def test_codex_option_spellings() -> None:
    for argv in (
        ["exec", "--profile=p1", "x"],
        ["exec", "-p", "p1", "x"],
        ["exec", "-pp1", "x"],
        ["exec", "-p=p1", "x"],
    ):
        assert parse("codex", argv).profile == "p1"
    assert parse("codex", ["exec", "--experimental-json", "x"]).output_format == "json"
    assert parse("codex", ["e", "--json", "x"]).output_format == "json"
    # `-i` takes every word up to the next option, the prompt included.
    assert parse("codex", ["exec", "-i", "a.png", "prompt"]).prompt_from_stdin
    assert parse("codex", ["exec", "-i", "a.png", "--", "prompt"]).prompt == "prompt"


def test_codex_double_dash_ends_options() -> None:
    assert parse("codex", ["exec", "--json", "--", "--not-an-option"]).prompt == "--not-an-option"
    assert parse("codex", ["exec", "--", "resume"]).prompt == "resume"


# gemini errors (yargs with gemini-cli's .fail(): message, then help; exit 1) ---------------

GEMINI_ERRORS = [
    pytest.param(["--foo", "hi"], "Unknown argument: foo", id="unknown"),
    pytest.param(["--foo", "--bar", "-x", "hi"], "Unknown arguments: foo, bar, x", id="unknowns"),
    pytest.param(["--foo-bar", "hi"], "Unknown arguments: foo-bar, fooBar", id="unknown-dashed"),
    pytest.param(
        ["-o", "xml", "hi"],
        'Invalid values:\n  Argument: output-format, Given: "xml", Choices: "text", "json", "stream-json"',
        id="invalid-choice",
    ),
    pytest.param(["-m"], "Not enough arguments following: m", id="missing-value"),
    pytest.param(
        ["--output-format"], "Not enough arguments following: output-format", id="missing-value-long"
    ),
    pytest.param(
        ["--yolo", "--approval-mode", "yolo", "hi"],
        "Cannot use both --yolo (-y) and --approval-mode together. Use --approval-mode=yolo instead.",
        id="yolo-and-approval-mode",
    ),
    pytest.param(
        ["-p", "a", "b"],
        "Cannot use both a positional prompt and the --prompt (-p) flag together",
        id="positional-and-prompt",
    ),
]


@pytest.mark.parametrize(("argv", "message"), GEMINI_ERRORS)
def test_gemini_errors(argv: list[str], message: str) -> None:
    error = refusal("gemini", argv)
    assert (error.text, error.exit_code) == (f"{message}\n{gemini.help_text(True)}", 1)


def test_gemini_validation_order() -> None:
    # A missing value first, then unknown options, then choices, then gemini's own checks.
    assert refusal("gemini", ["--foo", "-o", "xml", "-m"]).text.startswith(
        "Not enough arguments following: m\n"
    )
    assert refusal("gemini", ["-o", "xml", "--foo"]).text.startswith("Unknown argument: foo\n")
    assert refusal("gemini", ["-y", "--approval-mode", "x"]).text.startswith("Invalid values:\n")


def test_gemini_without_resume_rejects_resume_options() -> None:
    error = refusal("gemini", ["--resume", "3f2a", "--yolo", "Formal."], resumable=False)
    assert error.text == f"Unknown argument: resume\n{gemini.help_text(False)}"
    assert refusal("gemini", ["-r", "3f2a", "x"], resumable=False).text.startswith("Unknown argument: r\n")
    listing = refusal("gemini", ["--list-sessions"], resumable=False)
    assert listing.text.startswith("Unknown arguments: list-sessions, listSessions\n")


def test_gemini_not_simulated() -> None:
    for argv, what in ((["-i", "x"], "--prompt-interactive"), (["--list-sessions"], "--list-sessions")):
        error = refusal("gemini", argv)
        assert (error.text, error.exit_code) == (f"turngate fake gemini: {what} is not simulated\n", 1)
    assert refusal("gemini", ["mcp", "list"]).text == "turngate fake gemini: 'gemini mcp' is not simulated\n"


def test_gemini_option_spellings() -> None:
    expected = run("gemini", prompt="hi", model="m1", output_format="json")
    for argv in (
        ["--model=m1", "--output-format=json", "hi"],
        ["-m", "m1", "-o", "json", "hi"],
        ["-o=json", "--model", "m1", "hi"],
        ["--outputFormat", "json", "-m", "m1", "hi"],
        ["hi", "-m", "m1", "-o", "json", "--", "ignored"],
    ):
        assert parse("gemini", argv) == expected
    # yargs leaves words after "--" out of the prompt.
    assert parse("gemini", ["--yolo", "--", "hi"]).prompt_from_stdin


# iflow errors (plain yargs: help, blank line, message; exit 1) -----------------------------

IFLOW_ERRORS = [
    pytest.param(["--foo", "-p", "x"], "Unknown argument: foo", id="unknown"),
    pytest.param(["-p"], "Not enough arguments following: p", id="missing-value"),
    pytest.param(
        ["-p", "a", "b"], "Cannot use both a positional prompt and the --prompt (-p) flag together", id="both"
    ),
]


@pytest.mark.parametrize(("argv", "message"), IFLOW_ERRORS)
def test_iflow_errors(argv: list[str], message: str) -> None:
    error = refusal("iflow", argv)
    assert (error.text, error.exit_code) == (f"{iflow.help_text(True)}\n{message}\n", 1)


def test_iflow_without_resume_rejects_resume_and_continue() -> None:
    argv = ["--resume", "session-3f2a", "--yolo", "--thinking", "-p", "Formal."]
    assert refusal("iflow", argv, resumable=False).text.endswith("\nUnknown argument: resume\n")
    assert refusal("iflow", ["-c", "-p", "x"], resumable=False).text.endswith("\nUnknown argument: c\n")


def test_iflow_option_spellings() -> None:
    expected = run("iflow", prompt="hi", model="m1", output_format="text", thinking=True)
    for argv in (
        ["--prompt=hi", "--model=m1", "--thinking"],
        ["-p", "hi", "-m", "m1", "--thinking=true"],
        ["hi", "-m=m1", "--thinking"],
    ):
        assert parse("iflow", argv) == expected


# opencode errors --------------------------------------------------------------------------


def test_opencode_unknown_arguments_print_the_commands_help() -> None:
    # opencode's .fail() prints the help with no message and exits 1.
    error = refusal("opencode", ["run", "--foo", "hi"])
    assert (error.text, error.exit_code) == (opencode.run_help_text(True), 1)
    assert refusal("opencode", ["run", "--format", "xml", "hi"]).text == opencode.run_help_text(True)
    assert refusal("opencode", ["--foo"]).text == opencode.top_help_text(True)


def test_opencode_without_resume_rejects_session_and_continue() -> None:
    for argv in (["run", "--session=ses_X", "--format", "json", "Formal."], ["run", "-c", "Formal."]):
        error = refusal("opencode", argv, resumable=False)
        assert (error.text, error.exit_code) == (opencode.run_help_text(False), 1)


def test_opencode_refusals() -> None:
    model = refusal("opencode", ["run", "-m", "gpt", "hi"])
    assert (model.text, model.exit_code) == (
        OPENCODE_ERROR + "invalid model 'gpt': expected provider/model\n",
        1,
    )
    tui = refusal("opencode", [])
    assert (tui.text, tui.exit_code) == (
        "turngate fake opencode: the interactive TUI is not simulated; use 'opencode run'\n",
        1,
    )
    serve = refusal("opencode", ["serve"])
    assert serve.text == "turngate fake opencode: 'opencode serve' is not simulated; use 'opencode run'\n"


def test_opencode_option_spellings() -> None:
    expected = run("opencode", prompt="hi there", resume_id="ses_1", output_format="json", profile="plan")
    for argv in (
        ["run", "--session", "ses_1", "--format", "json", "--agent", "plan", "hi", "there"],
        ["run", "-s", "ses_1", "--format=json", "--agent=plan", "hi", "there"],
        ["--print-logs", "run", "hi", "--session=ses_1", "there", "--format", "json", "--agent", "plan"],
        ["run", "hi", "there", "-s", "ses_1", "--format", "json", "--agent", "plan", "--", "ignored"],
    ):
        assert parse("opencode", argv) == expected
    # `-f` takes every following word, as yargs arrays do.
    assert parse("opencode", ["run", "-f", "a.txt", "hi"]).prompt_from_stdin
    assert parse("opencode", ["run", "--format", "default", "hi"]).output_format == "default"
    assert parse("opencode", ["run", "--command", "init", "now"]).prompt == "/init now"
