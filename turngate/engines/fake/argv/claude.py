"""The `claude` command line (Claude Code 2.1.331), read as its commander setup reads it.

Skill-Runner v0.7.9 runs (`server/engines/claude/adapter/command_builder.py`,
`adapter_profile.json`)::

    claude -p --output-format stream-json --verbose [--effort E] [--json-schema '<json>'] PROMPT
    claude --resume ID -p --output-format stream-json --verbose [--effort E] [--json-schema …] PROMPT

and probes `claude --help` for `--resume`. The options are the ones the real
2.1.331's `--help` shows (`help/claude-2.1.331.txt`, captured; `commander.Program`
reads them from it). What the real CLI answered, and the fake answers the same
(captures in `tests/data/real-captures/claude/`), all on stderr, exit 1:

- an unknown option: `error: unknown option '--bogus'`;
- `--output-format stream-json` with `-p` but without `--verbose`:
  `Error: When using --print, --output-format=stream-json requires --verbose`;
- `--resume` with a value that is not a UUID (no session titles here):
  `Error: --resume requires a valid session ID or session title when used with --print. …`
  (the probe `claude --resume probe-session -p ping` Skill-Runner runs);
- as root, `--dangerously-skip-permissions` or `--permission-mode bypassPermissions`
  without `IS_SANDBOX=1`: `--dangerously-skip-permissions cannot be used with
  root/sudo privileges for security reasons`.

A resume id that is a UUID but no session is the engine's to refuse (the `result`
line and the stderr line of `formats/claude.py`). Without `-p` claude starts its
terminal UI, which the fake does not simulate. Assumed, not captured: more than one
prompt word is commander's excess-argument error (commander 13's default), and
`--resume` without a value in print mode is the invalid-id error without a value.
"""

from __future__ import annotations

import os

from turngate.engines.fake.argv.commander import Program, help_text, print_command, without_entries
from turngate.engines.fake.invocation import Invocation, UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from turngate.engines.fake.argv.commander import Parsed

ENGINE = "claude"
VERSION = "2.1.331"
VERSION_LINE = f"{VERSION} (Claude Code)\n"
# Builds the fake can play (`TURNGATE_EMULATE=claude@2.1.326`): their version lines and help (the
# options are the same, only three descriptions differ: help/claude-2.1.326.txt, captured), and in the
# stream (formats/claude.py) 2.1.326's init line, which lacks `served_by_anthropic` and
# `sandbox_enabled` (corpus/claude/real-2.1.326-*/stdout).
EMULATED_VERSIONS = {"2.1.331": "2.1.331", "2.1.326": "2.1.326"}
# What a build without resume lacks: every help entry about resuming a conversation.
_RESUME_WORDS = ("--resume", "--continue")
_ROOT_REFUSAL = (
    "--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n"
)
_HEX = frozenset("0123456789abcdefABCDEF")


def help_for(resumable: bool, version: str = VERSION) -> str:
    text = help_text(f"claude-{version}")
    return text if resumable else without_entries(text, _RESUME_WORDS)


def parse(argv: list[str], *, resumable: bool, stdin_is_tty: bool, emulate: str = VERSION) -> Invocation:
    """Parse claude's argv (program name excluded), or raise `UsageError` as the real CLI fails.
    ``emulate``: the build to parse as (a key of EMULATED_VERSIONS)."""
    program = Program(
        help_for(resumable, emulate), version_flags=("-v", "--version"), help_flags=("-h", "--help")
    )
    checked = print_command(ENGINE, program, argv, f"{emulate} (Claude Code)\n")
    if isinstance(checked, Invocation):  # help or version
        return checked
    return _invocation(checked, stdin_is_tty)


def _invocation(parsed: Parsed, stdin_is_tty: bool) -> Invocation:
    output_format = parsed.text("output-format") or "text"
    if output_format == "stream-json" and not parsed.flag("verbose"):
        raise UsageError("Error: When using --print, --output-format=stream-json requires --verbose\n", 1)
    resume = parsed.last("resume")
    if resume is not None and not (isinstance(resume, str) and is_uuid(resume)):
        raise UsageError(_invalid_resume(resume), 1)
    permission_mode = parsed.text("permission-mode")
    skips = parsed.flag("dangerously-skip-permissions") or permission_mode == "bypassPermissions"
    if skips and _is_root() and os.environ.get("IS_SANDBOX") != "1":
        raise UsageError(_ROOT_REFUSAL, 1)
    input_format = parsed.text("input-format") or "text"
    prompt = parsed.operands[0] if parsed.operands else ""
    if not prompt and stdin_is_tty and input_format == "text":
        raise UsageError(
            "Error: Input must be provided either through stdin or as a prompt argument when using --print\n",
            1,
        )
    log = {
        "output_format": output_format,
        "input_format": input_format,
        "permission_mode": permission_mode or None,
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
        resume_latest=parsed.flag("continue"),
        model=parsed.text("model") or None,
        output_format=output_format,
        auto_flags=("--dangerously-skip-permissions",) if parsed.flag("dangerously-skip-permissions") else (),
        input_format=input_format,
        json_schema=parsed.text("json-schema") or None,
        log_fields=tuple((key, value) for key, value in log.items() if value is not None),
    )


def _invalid_resume(value: object) -> str:
    usage = (
        "Error: --resume requires a valid session ID or session title when used with --print."
        " Usage: claude -p --resume <session-id|title>."
    )
    if not isinstance(value, str):
        return usage + "\n"
    return f'{usage} Provided value "{value}" is not a UUID and does not match any session title.\n'


def is_uuid(text: str) -> bool:
    """8-4-4-4-12 hexadecimal digits: what claude takes for a session id."""
    parts = text.split("-")
    return [len(part) for part in parts] == [8, 4, 4, 4, 12] and all(set(part) <= _HEX for part in parts)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0
