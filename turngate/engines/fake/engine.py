"""A fake engine process: parse the command line, pick the case and turn, play it, log it.

The flow is one way: argv → Invocation → (case, session, turn) → operations →
played bytes → one call-log line. Everything here runs on every engine start,
so it imports only what the interpreter already has loaded or builds in; the
slow work (YAML, JSON Schema) happens once per script, in `compiler`.
"""

from __future__ import annotations

import os
import sys
import time

from turngate.engines.fake import problems, script
from turngate.engines.fake.calllog import CallLog
from turngate.engines.fake.formats import Clock, TurnContext
from turngate.engines.fake.invocation import ENGINES, UsageError
from turngate.engines.fake.plan import Crash, Hang, Stop, render_turn
from turngate.engines.fake.player import play
from turngate.engines.fake.problems import ScriptProblem
from turngate.engines.fake.repair import is_repair_prompt
from turngate.engines.fake.sessions import Sessions

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
else:
    import _signal  # the C half of `signal`, without its enum import
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from turngate.engines.fake.invocation import Invocation

TOKEN_PREFIX = "tg-case-"
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
DEFAULT_MODELS = {
    "codex": "gpt-5-codex",
    "gemini": "gemini-2.5-pro",
    "iflow": "qwen3-coder-plus",
    "opencode": "anthropic/claude-sonnet-4-5",
    "claude": "claude-haiku-4-5",  # Skill-Runner v0.7.9's claude default: ANTHROPIC_MODEL=haiku
    "qwen": "qwen3-coder-plus",  # Skill-Runner v0.7.9's qwen default (config/default.json)
    "codebuddy": "default-model",  # the first model codebuddy 2.118.2's --help lists
    "kilo": "kilo/kilo-auto/free",  # Skill-Runner v0.7.9's engines/kilo/config/default.json
}
_SIGNALS = {"SIGKILL": 9, "SIGSEGV": 11, "SIGTERM": 15, "SIGABRT": 6}


def find_case_token(text: str) -> str | None:
    """The `<id>` of the first `tg-case-<id>` in `text`."""
    at = text.find(TOKEN_PREFIX)
    while at != -1:
        start = end = at + len(TOKEN_PREFIX)
        while end < len(text) and text[end] in _TOKEN_CHARS:
            end += 1
        if end > start:
            return text[start:end]
        at = text.find(TOKEN_PREFIX, end)
    return None


# The engines whose resident mode is their own stdin protocol (docs/fake-engines.md, "Sticky resident mode").
STDIN_PROTOCOL_ENGINES = frozenset({"claude", "qwen", "codebuddy"})
NON_RESUMABLE_FILE = ".non-resumable"  # in the scripts folder: engines that look non-resumable


def _names_in(path: str) -> set[str]:
    try:
        with open(path, encoding="utf-8") as handle:
            return {name.strip() for name in handle.read().replace("\n", ",").split(",") if name.strip()}
    except OSError:
        return set()


def _absolute(path: str | None) -> str | None:
    return os.path.abspath(path) if path else None


class Settings:
    """Where the engine finds its scripts, state and call log (environment, or baked-in defaults)."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        # Absolute now: `opencode run --dir` moves the process before it reads a script.
        self.scripts = _absolute(environ.get("TURNGATE_SCRIPTS"))
        default_state = os.path.join(self.scripts, ".turngate-state") if self.scripts else None
        self.state = _absolute(environ.get("TURNGATE_STATE")) or default_state
        default_log = os.path.join(self.state, "calls.jsonl") if self.state else None
        self.call_log = _absolute(environ.get("TURNGATE_CALL_LOG")) or default_log
        self.case = environ.get("TURNGATE_CASE") or None
        self.non_resumable = {
            name.strip() for name in environ.get("TURNGATE_NON_RESUMABLE", "").split(",") if name.strip()
        }
        # A file in the scripts folder does the same for engines a server runs (turngate writes it for
        # a sticky case), so a server that probes each run chooses sticky_process by its own probe.
        self.non_resumable |= (
            _names_in(os.path.join(self.scripts, NON_RESUMABLE_FILE)) if self.scripts else set()
        )
        # The bytes each invocation wrote, in its call-log line, so `turngate replay` can read them back.
        self.log_output = environ.get("TURNGATE_CALL_LOG_OUTPUT", "").lower() in ("1", "true", "yes")
        # The config a server hands kilo (turngate.engines.fake.kilo_config): the call log describes it.
        self.kilo_config = environ.get("KILO_CONFIG") or None
        epoch = environ.get("TURNGATE_FAKE_EPOCH_MS", "")
        self.fixed_epoch_ms = int(epoch) if epoch.isdigit() else None
        # Real builds to emulate, `codex@0.169.0` (comma list): their version lines and flags.
        self.emulate = dict(
            word.strip().partition("@")[::2]
            for word in environ.get("TURNGATE_EMULATE", "").split(",")
            if "@" in word
        )

    def resumable(self, engine: str) -> bool:
        return not ({engine, "all", "1", "true"} & self.non_resumable)


def main(engine: str, argv: list[str], environ: Mapping[str, str] | None = None) -> int:
    """Run one invocation of `engine`; returns the exit code (some endings never return)."""
    environ = os.environ if environ is None else environ
    settings = Settings(environ)
    log = CallLog(settings.call_log, engine, argv, environ)
    _install_signal_logging(log)
    try:
        return _run(engine, argv, settings, log)
    except ScriptProblem as problem:
        _stderr(problem.line(engine) + "\n")
        log.note(error=problem.as_record())
        log.write("script_error", problems.EXIT_SCRIPT_ERROR)
        return problems.EXIT_SCRIPT_ERROR
    except BrokenPipeError:
        log.write("broken_pipe", 1)
        return 1


def _run(engine: str, argv: list[str], settings: Settings, log: CallLog) -> int:
    parser = _parser(engine)
    emulated = {"emulate": settings.emulate[engine]} if engine in settings.emulate else {}
    known = getattr(parser, "EMULATED_VERSIONS", {})
    if emulated and emulated["emulate"] not in known:
        _stderr(
            f"turngate-fake-{engine}: TURNGATE_EMULATE: {engine}@{emulated['emulate']}:"
            f" known: {', '.join(f'{engine}@{version}' for version in known) or 'none'}\n"
        )
        log.write("usage_error", problems.EXIT_SCRIPT_ERROR)
        return problems.EXIT_SCRIPT_ERROR
    try:
        invocation = parser.parse(
            argv, resumable=settings.resumable(engine), stdin_is_tty=_stdin_is_tty(), **emulated
        )
    except UsageError as usage:
        _stderr(usage.text)
        log.write("usage_error", usage.exit_code)
        return usage.exit_code
    log.note(action=invocation.action, **dict(invocation.log_fields))
    if invocation.json_schema is not None:
        log.note(json_schema=_schema_of(invocation.json_schema))
    if invocation.directory is not None and not _enter(invocation.directory, engine, log):
        return 1
    if invocation.action == "run":
        log.note_skills(os.getcwd())
        if engine == "kilo" and settings.kilo_config is not None:
            from turngate.engines.fake import kilo_config  # only then: it reads a file and imports json

            log.note(kilo_config=kilo_config.describe(settings.kilo_config))
    for warning in invocation.warnings:
        _stderr(warning)
    if invocation.action != "run":
        os.write(invocation.text_fd, invocation.text.encode("utf-8"))
        log.write("exited", 0)
        return 0
    if settings.scripts is None:
        raise ScriptProblem(
            problems.ENVIRONMENT_INVALID,
            "(environment)",
            "TURNGATE_SCRIPTS",
            None,
            "the script folder is not set (export TURNGATE_SCRIPTS, or `turngate engines install --scripts`)",
        )
    prompt = invocation.prompt or ""
    if invocation.prompt_from_stdin and invocation.input_format == "stream-json":
        first = sys.stdin.buffer.readline()  # the first user message; the rest are the next turns'
        if not first:
            log.write("exited", 0)  # input closed before any message: nothing to answer
            return 0
        prompt = stdin_message(first)
        log.add_stdin(prompt)
    elif invocation.prompt_from_stdin:
        prompt = sys.stdin.buffer.read().decode("utf-8", "replace")
        log.add_stdin(prompt)
    refusal = _refusal(invocation)
    if refusal is not None:
        _stderr(refusal)
        log.write("engine_error", 1)
        return 1
    return _play_session(engine, invocation, prompt, settings, log)


def _enter(directory: str, engine: str, log: CallLog) -> bool:
    """Move into the directory the command line names (opencode and kilo `run --dir`), as the real
    CLI does before it plays; the parser has refused one it cannot enter, so failing here is a race."""
    try:
        os.chdir(directory)
    except OSError as error:
        _stderr(f"turngate fake {engine}: cannot enter {directory}: {error.strerror}\n")
        log.write("usage_error", 1)
        return False
    log.note(workdir=os.getcwd())
    return True


def _play_session(engine: str, invocation: Invocation, prompt: str, settings: Settings, log: CallLog) -> int:
    assert settings.scripts is not None and settings.state is not None
    sessions = Sessions(settings.state, engine)
    resumed = invocation.resume_id is not None or invocation.resume_latest
    repair_round = 0
    if resumed:
        session_id = invocation.resume_id or sessions.latest() or ""
        found = _resume(sessions, session_id, prompt)
        if found is None:
            out, err, code = _unknown_session(engine, session_id, invocation, settings)
            os.write(1, out)
            _stderr(err)
            log.note(session_id=session_id or None, resumed=True)
            log.write("engine_error", code)
            return code
        case_id, turn_index, repair_round = found
        log.note(case=case_id, case_source="session")
        log.started()
    else:
        case_id, source = _choose_case(prompt, settings)
        log.note(case=case_id, case_source=source)
        log.started()
        turn_index = 0
    compiled = script.load(script.find(settings.scripts, case_id), script.cache_dir_of(settings.state))
    if not resumed:
        session_id = sessions.start(case_id)
    log.note(session_id=session_id, resumed=resumed)
    clock = Clock(settings.fixed_epoch_ms)
    # claude, qwen and codebuddy live on between turns exactly when the real ones do, whatever the
    # script says: with --input-format stream-json (each turn's user message a line of stdin, until
    # it ends); with a prompt on the command line (-p) they answer it and exit.
    resident = (
        invocation.input_format == "stream-json" if engine in STDIN_PROTOCOL_ENGINES else compiled["resident"]
    )
    structured = invocation.json_schema is not None and isinstance(_schema_of(invocation.json_schema), dict)
    process_turn = 0
    while True:
        process_turn += 1
        if repair_round:
            # A repair call plays an answer of the turn it repairs, not a turn: `action` and `repair`
            # say so, and `turns` stays empty, so turn and call counts are the user's turns.
            log.note(action="repair", repair={"turn": turn_index + 1, "round": repair_round})
            turn = _repair_answer(compiled, turn_index, repair_round)
        else:
            turn = _turn(compiled, turn_index)
            log.record["turns"].append(turn_index + 1)
        context = TurnContext(
            engine=engine,
            case_id=case_id,
            session_id=session_id,
            turn_number=turn_index + 1,
            resumed=resumed,
            prompt=prompt,
            model=invocation.model or DEFAULT_MODELS[engine],
            cwd=os.getcwd(),
            output_format=_output_format(engine, invocation),
            variant=compiled["variants"][engine],
            clock=clock,
            repair_round=repair_round,
            reasoning=invocation.reasoning,
            structured=structured,
            process_turn=process_turn,
            command_fields=invocation.log_fields,
            build=settings.emulate.get(engine, ""),
        )
        if engine == "gemini":  # chosen by flag or settings.json: the log shows which the server chose
            log.note(output_format=context.output_format)
        operations = render_turn(turn, _formats(engine).make(context))
        if settings.log_output:
            _note_output(log, operations)  # before playing: a crash or hang still leaves it in the log
        ending = play(operations)
        if ending is not None:
            return _end_abnormally(ending, log)
        if not resident or turn["end"] == "failed":
            if turn.get("linger") is not None and not resident:
                _linger(turn["linger"], log)
            log.write("exited", turn["exit_code"])
            return int(turn["exit_code"])
        reply = sys.stdin.buffer.readline()
        if not reply:
            log.write("exited", 0)
            return 0
        if invocation.input_format == "stream-json":
            prompt = stdin_message(reply)
        else:
            prompt = reply.decode("utf-8", "replace").rstrip("\r\n")
        log.add_stdin(prompt)
        advanced = sessions.advance(session_id)
        turn_index = advanced[1] if advanced is not None else turn_index + 1
        resumed = True


def _resume(sessions: Sessions, session_id: str, prompt: str) -> tuple[str, int, int] | None:
    """(case, 0-based turn index, repair round) of a resume: Skill-Runner's output-repair prompt
    gets an answer of the turn last played (round 1, 2, …), anything else the next turn (round 0)."""
    if is_repair_prompt(prompt):
        return sessions.repair(session_id)
    found = sessions.advance(session_id)
    return None if found is None else (found[0], found[1], 0)


def _note_output(log: CallLog, operations: list[Any]) -> None:
    import base64

    from turngate.engines.fake.plan import Write

    output = log.record.get("output") or {"stdout_b64": "", "stderr_b64": ""}
    for name, fd in (("stdout_b64", 1), ("stderr_b64", 2)):
        written = b"".join(op.data for op in operations if isinstance(op, Write) and op.fd == fd)
        output[name] = base64.b64encode(base64.b64decode(output[name]) + written).decode("ascii")
    log.note(output=output)


def _turn(compiled: dict[str, Any], turn_index: int) -> dict[str, Any]:
    turns = compiled["turns"]
    if turn_index >= len(turns):
        raise ScriptProblem(
            problems.TURN_OUT_OF_RANGE,
            compiled["file"],
            f"turns[{turn_index}]",
            turn_index + 1,
            f"the case has {len(turns)} turn(s); turn {turn_index + 1} was asked for",
        )
    turn: dict[str, Any] = turns[turn_index]
    return turn


def _repair_answer(compiled: dict[str, Any], turn_index: int, repair_round: int) -> dict[str, Any]:
    """The turn's answer to its `repair_round`-th repair resume, never the next turn (that is the
    user's). A turn without a `repair` list answers every round with itself: a scenario written
    before repair rounds existed (Skill-Runner v0.6.0) describes the engine's answer to that turn, and
    the engine keeping it keeps the scenario's premise; exiting with an error instead would fail the
    run for the script's sake, not the server's. A listed round the list does not have is
    REPAIR_OUT_OF_RANGE: the script counted the rounds."""
    if turn_index >= len(compiled["turns"]):
        return _turn(compiled, turn_index)  # TURN_OUT_OF_RANGE, named as for any turn
    turn = compiled["turns"][turn_index]
    answers = turn["repair"]
    if answers is None:
        return {key: value for key, value in turn.items() if key != "repair"}
    if repair_round > len(answers):
        raise ScriptProblem(
            problems.REPAIR_OUT_OF_RANGE,
            compiled["file"],
            f"turns[{turn_index}].repair",
            repair_round,
            f"turn {turn_index + 1} scripts {len(answers)} repair answer(s);"
            f" repair resume {repair_round} of it was asked for",
        )
    answer: dict[str, Any] = answers[repair_round - 1]
    return answer


def _choose_case(prompt: str, settings: Settings) -> tuple[str, str]:
    token = find_case_token(prompt)
    if token is not None:
        return token, "prompt"
    try:
        with open("input.json", encoding="utf-8", errors="replace") as request:
            token = find_case_token(request.read())
    except OSError:
        token = None
    if token is not None:
        return token, "input.json"
    if settings.case is not None:
        return settings.case, "env"
    raise ScriptProblem(
        problems.CASE_UNKNOWN,
        "(prompt)",
        "case",
        prompt[:80],
        f"no case token ({TOKEN_PREFIX}<id>) in the prompt or ./input.json, and TURNGATE_CASE is not set",
    )


def _output_format(engine: str, invocation: Invocation) -> str:
    if engine != "gemini" or invocation.output_format:
        return invocation.output_format
    return _gemini_settings_format()


def _gemini_settings_format() -> str:
    """`output.format` from .gemini/settings.json (workspace, then user), as gemini reads it."""
    import json  # only on this path: gemini without --output-format

    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    for folder in (os.getcwd(), home):
        try:
            with open(os.path.join(folder, ".gemini", "settings.json"), encoding="utf-8") as file:
                settings = json.load(file)
        except (OSError, ValueError):
            continue
        output = settings.get("output") if isinstance(settings, dict) else None
        fmt = output.get("format") if isinstance(output, dict) else None
        if fmt in ("text", "json", "stream-json"):
            return str(fmt)
    return "text"


def _refusal(invocation: Invocation) -> str | None:
    """What the real engine prints when it refuses to start in this folder."""
    if invocation.engine == "codex" and not invocation.skip_git_repo_check and not _inside_git_repo():
        return "Not inside a trusted directory and --skip-git-repo-check was not specified.\n"
    return None


def _inside_git_repo() -> bool:
    folder = os.getcwd()
    while True:
        if os.path.exists(os.path.join(folder, ".git")):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent


def _unknown_session(
    engine: str, session_id: str, invocation: Invocation, settings: Settings
) -> tuple[bytes, str, int]:
    """What the engine writes (stdout bytes, stderr text) and its exit code for a session it never
    issued: its format's own refusal where it has one (claude, codebuddy), else a stderr line, exit 1."""
    refusal = getattr(_formats(engine), "unknown_session", None)
    if refusal is not None:
        found: tuple[bytes, str, int] = refusal(session_id, invocation.output_format, settings.fixed_epoch_ms)
        return found
    return b"", _unknown_session_text(engine, session_id), 1


def _schema_of(text: str) -> Any:
    """The --json-schema value as JSON (the call log keeps it parsed), or the text when it is not JSON."""
    import json  # only with --json-schema: json costs start-up time

    try:
        return json.loads(text)
    except ValueError:
        return text


def stdin_message(line: bytes) -> str:
    """The text of one stream-json user message line (`{"type":"user","message":{"role":"user",
    "content":…}}`, content a string or text blocks), as claude, qwen and codebuddy read their
    stdin with --input-format stream-json; a line that is not one is taken as it is."""
    import json  # only in the stream-json input protocol

    raw = line.decode("utf-8", "replace").rstrip("\r\n")
    try:
        document = json.loads(raw)
    except ValueError:
        return raw
    message = document.get("message") if isinstance(document, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [block.get("text") for block in content if isinstance(block, dict)]
        return "".join(text for text in texts if isinstance(text, str))
    return raw


def _unknown_session_text(engine: str, session_id: str) -> str:
    # Plausible renderings of each CLI's refusal; the exit code (1) is what orchestrators act on.
    if engine == "kilo":  # 7.7.7, for an unknown id and for --continue without a session alike
        return "\x1b[91m\x1b[1mError: \x1b[0mSession not found\n"
    if not session_id:
        return f"Error: no previous session found to resume ({engine})\n"
    if engine == "codex":
        return f"Error: no rollout found for thread id {session_id}\n"
    if engine == "gemini":
        return (
            f'Error resuming session: Invalid session identifier "{session_id}".\n'
            "  Use --list-sessions to see available sessions.\n"
        )
    return f"Error: Session not found: {session_id}\n"


# Signals no process can catch or reset: sending one is enough to die by it.
_UNCATCHABLE = frozenset({_signal.SIGKILL, _signal.SIGSTOP})


def _end_abnormally(ending: Hang | Crash | Stop, log: CallLog) -> int:
    match ending:
        case Stop(exit_code=exit_code, outcome=outcome):
            log.write(outcome, exit_code)
            return exit_code
        case Crash(signal=str(name)):
            number = _SIGNALS[name]
            log.write("signal", -number)
            if number not in _UNCATCHABLE:  # resetting SIGKILL's handler raises OSError (EINVAL)
                _signal.signal(number, _signal.SIG_DFL)
            os.kill(os.getpid(), number)
            raise SystemExit(128 + number)  # only if the signal was somehow ignored
        case Crash(exit_code=exit_code):
            code = 1 if exit_code is None else exit_code
            log.write("crashed", code)
            os._exit(code)
    # Hang: the line is written now, since the process will only ever be killed.
    log.write("hang", None, ended=False)
    _die_on_signals()
    while True:
        time.sleep(3600)


def _die_on_signals() -> None:
    """The default action for the signals the call log catches, once its line is written (the
    handler would only die after it). A Python handler runs between bytecodes: a signal that lands
    after the last check and before a long sleep's system call was caught and then left waiting
    for the sleep to end, an hour; seen as a kill the engine outlived under load."""
    for number in _LOGGED_SIGNALS:
        _signal.signal(number, _signal.SIG_DFL)


def _linger(linger: dict[str, Any], log: CallLog) -> None:
    """Live on after the turn is over, as some engines do: with the output pipes closed first when
    asked (the reader sees end of file long before the exit), for a time or until killed."""
    forever = linger["seconds"] is None
    if forever:  # logged before the pipes close: a reader that sees them closed finds the line
        log.write("hang", None, ended=False)
        _die_on_signals()
    if linger["close_pipes"]:
        os.close(1)
        os.close(2)
    while forever:  # until killed
        time.sleep(3600)
    time.sleep(linger["seconds"])


_LOGGED_SIGNALS = (_signal.SIGTERM, _signal.SIGINT, _signal.SIGHUP)


def _install_signal_logging(log: CallLog) -> None:
    def on_signal(number: int, _frame: object) -> None:
        log.write("killed", 128 + number)
        _signal.signal(number, _signal.SIG_DFL)
        os.kill(os.getpid(), number)

    for number in _LOGGED_SIGNALS:
        _signal.signal(number, on_signal)


def _stdin_is_tty() -> bool:
    try:
        return os.isatty(0)
    except OSError:
        return False


def _stderr(text: str) -> None:
    os.write(2, text.encode("utf-8", "replace"))


def _parser(engine: str) -> Any:
    return __import__(f"turngate.engines.fake.argv.{engine}", fromlist=["parse"])


def _formats(engine: str) -> Any:
    return __import__(f"turngate.engines.fake.formats.{engine}", fromlist=["make"])


def entry() -> None:
    """`python -m turngate.engines.fake ENGINE ARGS…` and the installed launchers."""
    if len(sys.argv) < 2 or sys.argv[1] not in ENGINES:
        _stderr(f"usage: python -m turngate.engines.fake {{{','.join(ENGINES)}}} [ARGS...]\n")
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1], sys.argv[2:]))
