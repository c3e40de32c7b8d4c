"""What an engine command line asks for, once parsed the way the real CLI parses it."""

from __future__ import annotations

from turngate.engines.fake.frozen import value

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ENGINES = ("codex", "gemini", "iflow", "opencode", "claude", "qwen", "kilo", "codebuddy")


@value
class Invocation:
    """One parsed command line of a fake engine.

    Every engine's argv parser (`turngate.engines.fake.argv.<engine>.parse`) returns
    this, or raises `UsageError` with the exact text and exit code the real
    CLI gives for that command line.
    """

    engine: str
    # "run" plays a turn; "version" and "help" only print `text` on stdout.
    action: str
    # The prompt (first turn) or reply (resume turn) from argv; None if absent.
    prompt: str | None = None
    # codex reads the prompt from stdin when it is "-" or absent and stdin is not a TTY.
    prompt_from_stdin: bool = False
    # The session id named for a resume; None for a first turn.
    resume_id: str | None = None
    # Resume the most recent session (codex `--last`, gemini `--resume latest`,
    # iflow `--continue`, opencode `--continue`).
    resume_latest: bool = False
    model: str | None = None
    # codex: "json" with --json, else "text". gemini: "text" | "json" |
    # "stream-json" from --output-format, "" when not given (settings.json
    # decides). iflow: "text". opencode: "json" | "default".
    output_format: str = ""
    # Auto-execution flags exactly as given, in order (e.g. "--full-auto", "--yolo",
    # "-y", "--approval-mode=yolo", "--dangerously-bypass-approvals-and-sandbox").
    auto_flags: tuple[str, ...] = ()
    # iflow --thinking, opencode run --thinking.
    thinking: bool = False
    # codex --skip-git-repo-check (True for the engines that have no such check).
    skip_git_repo_check: bool = True
    # codex -p/--profile, opencode --agent, and other values the call log keeps.
    profile: str | None = None
    # For "help" and "version": the text printed, newline included, on `text_fd`.
    text: str = ""
    # Where `text` goes: 1 stdout; 2 stderr (kilo prints its help there).
    text_fd: int = 1
    # Lines the CLI writes on stderr before the turn or the text (codex 0.146.1: --full-auto is
    # deprecated; kilo: a log line before its help).
    warnings: tuple[str, ...] = ()
    # opencode and kilo run --dir: the folder the engine moves into before the turn (relative to where it
    # was started); None: it plays where it was started.
    directory: str | None = None
    # Whether reasoning is printed: "" as the engine's format always does (opencode --format json
    # prints it), "shown" or "hidden" as the emulated build decides (opencode 1.2.1, kilo: --thinking).
    reasoning: str = ""
    # claude, qwen, codebuddy --input-format: "stream-json" reads every user message (the first
    # prompt included) as a JSON line on stdin, and the process lives on until stdin ends.
    input_format: str = "text"
    # claude and codebuddy --json-schema: the schema text as given (the model must then answer
    # through the StructuredOutput tool); None when not given.
    json_schema: str | None = None
    # Call-log fields this command line adds ((name, value) pairs: output_format, permission_mode, …).
    log_fields: tuple[tuple[str, Any], ...] = ()


class UsageError(Exception):
    """A command line the real CLI rejects: `text` goes to stderr as is."""

    def __init__(self, text: str, exit_code: int) -> None:
        super().__init__(text)
        self.text = text
        self.exit_code = exit_code
