"""The `codebuddy` command line (CodeBuddy Code 2.118.2), read as its commander setup reads it.

Skill-Runner v0.7.9 runs (`server/engines/codebuddy/adapter/command_builder.py`,
`adapter_profile.json`)::

    codebuddy -p --output-format stream-json --permission-mode bypassPermissions
        --settings RUN/.codebuddy/settings.json --setting-sources project
        --mcp-config RUN/.codebuddy/mcp.json --strict-mcp-config [--json-schema '<json>'] [--model M] PROMPT

and for a resume the same with `-r ID` after `--permission-mode bypassPermissions`; it probes
`codebuddy --help` for `resume`. The options are those of the real 2.118.2's help
(`help/codebuddy-2.118.2.txt`: the `codebuddy-headless` binary of the pip wheel
`codebuddy-agent-sdk==0.3.205` Skill-Runner pins; the npm package answered 404). Unlike
claude, `stream-json` needs no `--verbose`, and `--output-format` has no choices (any other
value prints text). An unknown option is `error: unknown option '--bogus'`, exit 1 (captured).
A resume id nobody issued is the engine's to refuse, on stdout and with exit 0
(`formats/codebuddy.py`). `-r` without an id picks a conversation in the terminal UI: here
it resumes the latest session, as `-c` does (assumed; not captured).
"""

from __future__ import annotations

from turngate.engines.fake.argv.commander import Program, help_text, print_command, without_entries
from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.argv.commander import Parsed

ENGINE = "codebuddy"
VERSION = "2.118.2"
_RESUME_WORDS = ("--resume", "--continue")


def help_for(resumable: bool) -> str:
    text = help_text(f"codebuddy-{VERSION}")
    return text if resumable else without_entries(text, _RESUME_WORDS)


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool) -> Invocation:
    """Parse codebuddy's argv (program name excluded), or raise `UsageError` as the real CLI fails."""
    program = Program(
        help_for(resumable), version_flags=("-v", "-V", "--version"), help_flags=("-h", "--help")
    )
    checked = print_command(ENGINE, program, argv, VERSION + "\n")
    if isinstance(checked, Invocation):  # help or version
        return checked
    return _invocation(checked, stdin_is_tty)


def _invocation(parsed: Parsed, stdin_is_tty: bool) -> Invocation:
    output_format = parsed.text("output-format") or "text"
    input_format = parsed.text("input-format") or "text"
    prompt = parsed.operands[0] if parsed.operands else ""
    if not prompt and stdin_is_tty and input_format == "text":
        raise UsageError("turngate fake codebuddy: no prompt and stdin is a terminal; pass a prompt\n", 1)
    resume = parsed.last("resume")
    skips = parsed.flag("dangerously-skip-permissions")
    log = {
        "output_format": output_format,
        "input_format": input_format,
        "permission_mode": parsed.text("permission-mode") or None,
        "effort": parsed.text("effort") or None,
        "settings": parsed.text("settings") or None,
        "setting_sources": parsed.text("setting-sources") or None,
        "mcp_config": [value for value in parsed.values.get("mcp-config", []) if isinstance(value, str)]
        or None,
    }
    return Invocation(
        engine=ENGINE,
        action="run",
        prompt=prompt or None,
        prompt_from_stdin=not prompt,
        resume_id=resume if isinstance(resume, str) else None,
        resume_latest=resume is True or parsed.flag("continue"),
        model=parsed.text("model") or None,
        output_format=output_format,
        auto_flags=("--dangerously-skip-permissions",) if skips else (),
        input_format=input_format,
        json_schema=parsed.text("json-schema") or None,
        log_fields=tuple((key, value) for key, value in log.items() if value is not None),
    )
