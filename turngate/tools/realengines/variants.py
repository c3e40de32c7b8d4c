"""Fidelity's named variants: each a known, accepted difference between a real CLI and its fake, exactly.

A variant excuses a difference only when all of these hold:

- the engine is one of its ``engines`` and the document format one of its ``modes`` (gemini);
- the script's turn is of the kind it names (``when``: an error turn, a turn with text, a turn
  with a tool of another name than the shell's...), read off the script, not off the output;
- the difference's whole text is one of its ``excuses``: an exact text, or, only for stderr
  lines whose paths, times or provider bodies vary, a full-match pattern (never a prefix: a key,
  event or line more than the excuse names stays unexplained);
- what the real output must show for the excuse to be true (``holds``, said in words in
  ``requires``) is there, and, for a ``together`` variant, every one of its excuses is found in
  that turn (a document missing from stdout is excused only where it is found on stderr).

Each excuse quotes the real CLI (``source``: the capture in ``corpus/`` or the CLI's own file and
line); docs/real-engines.md tables them per engine. tests/realengines/test_variants_cannot_hide.py
proves none of them explains a deliberate format change applied to the real captures.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from turngate.base.json_lines import json_objects
from turngate.engines.modelserver.rounds import rounds_of
from turngate.engines.real.shapes import events

# The script kinds a variant may be limited to (``Variant.when``); a turn has every kind that fits it.
TURN_KINDS: Final[Mapping[str, str]] = {
    "any": "every turn",
    "error-turn": "a turn whose model request fails (an `error` step, or `end: failed`)",
    "first-answer-error": "a turn whose first model request fails (no answer before the error; a"
    " `model_error` status or dropped connection on it too)",
    "text-turn": "a turn with at least one model answer carrying text (`say`, `ask_user`)",
    "think-turn": "a turn with a `think` step",
    "tool-turn": "a turn with a `tool` step",
    "other-tool-turn": "a turn with a `tool` step not named `bash` or `shell` (MCP in the fake codex)",
    "failed-tool-turn": "a turn with a `tool` step whose command fails (`status: error`)",
    "uncoded-error-turn": "a turn whose model request fails (an `error` step, or `end: failed`) and no"
    " `error` step gives a `code`",
    "status-fault-turn": "a turn whose model request is refused with a status the CLI retries (a"
    " `model_error` with `status`)",
    "drop-turn": "a turn whose model answer's connection is dropped mid-body (a `model_error` cut `dropped`)",
    "empty-answer-turn": "a turn whose last model answer, after a tool call, is empty (no text, no"
    " thinking, no call)",
}
# The tool names the fake codex prints as `command_execution` (turngate/engines/fake/formats/codex.py).
SHELL_TOOL_NAMES: Final = frozenset({"bash", "shell"})
# The arguments of the real CLIs' shell-tool calls as the model server fills them for every scripted
# tool (turngate/engines/modelserver/toolargs.py, from the schema each CLI declares): gemini's
# run_shell_command takes a description, opencode's bash call carries the command alone
# (corpus/gemini/real-0.61.0-stream-json-tool-echo/stdout, corpus/opencode/real-1.18.33-tool-echo/stdout).
SHELL_TOOL_ARGUMENTS: Final[Mapping[str, frozenset[str]]] = {
    "gemini": frozenset({"command", "description"}),
    "opencode": frozenset({"command"}),
    # claude's and codebuddy's Bash, qwen's run_shell_command and kilo's bash declare a description
    # the model server fills (corpus/<engine>/real-*-tool-echo/stdout, the tool call's input).
    "claude": frozenset({"command", "description"}),
    "qwen": frozenset({"command", "description"}),
    "codebuddy": frozenset({"command", "description"}),
    "kilo": frozenset({"command", "description"}),
}
LINE_ONLY_IN_REAL: Final = "stderr: line only in real: "
LINE_ONLY_IN_FAKE: Final = "stderr: line only in fake: "
# codex's refusal of request_user_input, its time aside (corpus/codex/real-*-request-user-input/stderr).
REQUEST_USER_INPUT_LINE: Final = (
    r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z ERROR codex_core::tools::router:"
    r" error=request_user_input is unavailable in Default mode"
)
# A frame of a Node stack trace in gemini-cli's bundle or Node's own modules, as util.inspect prints
# an error (four spaces; six for the error's `cause`), the frame that opens the error's properties
# ending in " {".
GEMINI_FRAME: Final = (
    r"(?: {4}| {6})at (?:async )?(?:[\w.$<>]+ \()?(?:file://\S*/@google/gemini-cli/bundle/[\w-]+\.js"
    r"|node:(?:internal/[\w/]+|events|net)):\d+:\d+\)?(?: \{)?"
)
_GEMINI_API_ERROR: Final = (
    r'_ApiError: \{"error":\{"code":\d{3},"message":"(?:[^"\\]|\\.)*","status":"[A-Z_]+"\}\}'
)
_GEMINI_REPORT: Final = (
    r"Error when talking to Gemini API Full report available at: \S+/gemini-client-error-Turn\.run-"
    r"sendMessageStream-[\w-]+\.json "
)


@dataclass(frozen=True, slots=True)
class TurnFacts:
    """What one scripted turn holds, as the variants read it."""

    kinds: frozenset[str]
    tool_inputs: tuple[frozenset[str], ...] = ()  # each scripted tool's input keys, in order
    text_answers: int = 0  # model answers (rounds) of the turn that carry text
    failed_tool_inputs: tuple[frozenset[str], ...] = ()  # the input keys of each tool that fails
    other_tools: int = 0  # scripted tools not named bash or shell (each played as a shell call)
    calls: int = 0  # tool calls and file changes the model makes (one per round that has one)
    think_steps: int = 0  # `think` steps (the Anthropic API sends one thinking block each)
    think_answers: int = 0  # model answers with thinking (Chat Completions: one reasoning text each)
    last_answer_text: bool = False  # the turn's last model answer carries text
    last_answer_thinking: bool = False  # ... and thinking


def turn_facts(compiled: Mapping[str, Any], number: int) -> TurnFacts:
    """The facts of turn ``number`` (1-based) of a compiled script (turngate/engines/fake/compiler.py)."""
    turns = compiled["turns"]
    if not 1 <= number <= len(turns):
        return TurnFacts(frozenset({"any"}))
    turn = turns[number - 1]
    rounds = rounds_of(turn)
    kinds = {"any"}
    tools = [step["tool"] for step in turn["steps"] if "tool" in step]
    if any(r.error for r in rounds):
        kinds.add("error-turn")
    first = rounds[0]
    if first.error and not first.text and first.tool is None:
        kinds.add("first-answer-error")
    elif first.fault is not None and (first.fault.status is not None or first.fault.dropped):
        kinds.add("first-answer-error")  # refused, or its connection dropped: no answer came whole
    last = rounds[-1]
    empty = not (last.text or last.thinking or last.tool or last.change or last.error or last.fault)
    if len(rounds) > 1 and empty:
        kinds.add("empty-answer-turn")
    faults = [r.fault for r in rounds if r.fault is not None]
    if any(fault.status is not None for fault in faults):
        kinds.add("status-fault-turn")
    if any(fault.dropped for fault in faults):
        kinds.add("drop-turn")
    if any(r.text for r in rounds):
        kinds.add("text-turn")
    if any(r.thinking for r in rounds):
        kinds.add("think-turn")
    if tools:
        kinds.add("tool-turn")
    if any(tool["name"] not in SHELL_TOOL_NAMES for tool in tools):
        kinds.add("other-tool-turn")
    if any(tool.get("exit_code", 0) != 0 for tool in tools):
        kinds.add("failed-tool-turn")
    errors = [step["error"] for step in turn["steps"] if "error" in step]
    if "error-turn" in kinds and not any(isinstance(error.get("code"), int) for error in errors):
        kinds.add("uncoded-error-turn")
    return TurnFacts(
        frozenset(kinds),
        tuple(frozenset(tool["input"]) for tool in tools),
        sum(1 for r in rounds if r.text),
        tuple(frozenset(tool["input"]) for tool in tools if tool.get("exit_code", 0) != 0),
        sum(1 for tool in tools if tool["name"] not in SHELL_TOOL_NAMES),
        sum(1 for r in rounds if r.tool is not None or r.change is not None),
        sum(len(r.thinking) for r in rounds),
        sum(1 for r in rounds if r.thinking),
        bool(rounds[-1].text),
        bool(rounds[-1].thinking),
    )


@dataclass(frozen=True, slots=True)
class TurnContext:
    """One turn as a variant sees it: the engine, its document format, the script's turn, the real output."""

    engine: str
    mode: str
    facts: TurnFacts
    real_stdout: bytes = b""
    real_stderr: bytes = b""


@dataclass(frozen=True, slots=True)
class Excuse:
    """One difference text a variant excuses: exactly ``text``; or, where ``pattern`` is given (stderr
    lines with paths, times or a provider's body in them), any text the pattern matches whole.
    ``text`` is then a real example of it."""

    text: str
    pattern: str | None = None

    def matches(self, difference: str) -> bool:
        if self.pattern is None:
            return difference == self.text
        return re.fullmatch(self.pattern, difference) is not None


@dataclass(frozen=True, slots=True)
class Shape:
    """An event of the real output a variant lets stand where the fake has another (or none on that
    stream), so compare() never holds its keys against the fake's: its exact key paths instead."""

    stream: str  # stdout or stderr
    label: str  # shapes.line_label, "document" for a JSON document
    keys: tuple[str, ...]  # exactly these flattened key paths (shapes.flatten)

    def holds(self, context: TurnContext) -> bool:
        if self.stream == "stdout":
            found = events(context.real_stdout)
        else:
            found = events(stderr_parts(context.real_stderr)[1])
        mine = [set(shape) for label, shape in found if label == self.label]
        return bool(mine) and all(keys == set(self.keys) for keys in mine)


@dataclass(frozen=True, slots=True)
class Variant:
    """A known, accepted difference between a real CLI and the fake, and exactly what it excuses."""

    name: str
    engines: tuple[str, ...]
    when: str  # a TURN_KINDS key
    excuses: tuple[Excuse, ...]
    reason: str
    source: str  # where the real behaviour is quoted from
    modes: tuple[str, ...] = ()  # the document formats (gemini); () every
    derived: Callable[[TurnContext], tuple[str, ...]] | None = None  # exact texts read off the script
    derived_text: str = ""  # what ``derived`` gives, in words (docs)
    holds: Callable[[TurnContext], bool] | None = None
    requires: str = ""  # what ``holds`` checks in the real output, in words (docs)
    together: bool = False  # every excuse must be found in the turn
    shapes: tuple[Shape, ...] = ()  # the real events it lets stand, with their exact keys

    def __post_init__(self) -> None:
        if self.when not in TURN_KINDS:
            raise ValueError(f"variant {self.name}: when: {self.when!r}: one of {', '.join(TURN_KINDS)}")

    def applies(self, context: TurnContext) -> bool:
        return (
            context.engine in self.engines
            and (not self.modes or context.mode in self.modes)
            and self.when in context.facts.kinds
            and (self.holds is None or self.holds(context))
            and all(shape.holds(context) for shape in self.shapes)
        )

    def excused(self, text: str, context: TurnContext) -> bool:
        if any(excuse.matches(text) for excuse in self.excuses):
            return True
        return self.derived is not None and text in self.derived(context)

    def complete(self, texts: Sequence[str], context: TurnContext) -> bool:
        """For a ``together`` variant: every excuse is among the turn's differences."""
        return all(any(excuse.matches(text) for text in texts) for excuse in self.excuses)


def explain(
    texts: Sequence[str], context: TurnContext | None, variants: Iterable[Variant]
) -> list[str | None]:
    """The variant explaining each of one turn's difference texts, or None (unexplained)."""
    if context is None:  # differences of the whole run (turns played): never a variant's
        return [None] * len(texts)
    usable = [
        variant
        for variant in variants
        if variant.applies(context) and (not variant.together or variant.complete(texts, context))
    ]
    return [next((v.name for v in usable if v.excused(text, context)), None) for text in texts]


# What the real output shows ----------------------------------------------------------------------------


def _labels(data: bytes) -> list[str]:
    return [label for label, _ in events(data)]


def stderr_parts(data: bytes) -> tuple[list[str], bytes]:
    """A stream's text lines (right-stripped, in order), and its JSON lines or document (as events())."""
    lines = data.decode("utf-8", "replace").splitlines()
    texts: list[str] = []
    structured: list[str] = []
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        try:
            json.loads(stripped)
        except ValueError:
            if stripped.startswith("{"):
                try:
                    json.loads("\n".join(lines[index:]))
                except ValueError:
                    pass
                else:
                    structured.extend(lines[index:])
                    break
            texts.append(line.rstrip())
            continue
        structured.append(line)
    return texts, "".join(f"{line}\n" for line in structured).encode()


def _no_document_on_stdout(context: TurnContext) -> bool:
    return "document" not in _labels(context.real_stdout)


def _result_status_error(context: TurnContext) -> bool:
    return any(
        label == "result" and shape.get("status") == '"error"' for label, shape in events(context.real_stdout)
    )


def _ends_turn_failed(context: TurnContext) -> bool:
    return "turn.failed" in _labels(context.real_stdout)


def _error_alone(context: TurnContext) -> bool:
    labels = _labels(context.real_stdout)
    return "error" in labels and not any(label.startswith("step_start") for label in labels)


def _one_text_part_per_answer(context: TurnContext) -> bool:
    answers = context.facts.text_answers
    return answers >= 1 and _labels(context.real_stdout).count("text:text") == answers


def _assistant_blocks(data: bytes) -> Counter[str]:
    """How many content blocks of each type the `assistant` events of a JSON-lines stream hold
    (claude, qwen, codebuddy: each event holds one model answer's blocks, or one of them)."""
    found: Counter[str] = Counter()
    for line in data.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if not isinstance(event, dict) or event.get("type") != "assistant":
            continue
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and isinstance(block.get("type"), str):
                found[block["type"]] += 1
    return found


def _answer_blocks(context: TurnContext, thinking: int) -> Counter[str]:
    """The content blocks the model server's answers of the turn hold: one text block per answer with
    text (its say steps joined), one tool_use per call, ``thinking`` thinking blocks."""
    facts = context.facts
    blocks = Counter({"text": facts.text_answers, "tool_use": facts.calls, "thinking": thinking})
    return +blocks  # zero counts dropped


def _one_block_per_answer(thinking: Callable[[TurnFacts], int]) -> Callable[[TurnContext], bool]:
    """The real `assistant` events hold exactly the blocks of the model's answers: nothing missing,
    nothing more (so the excuse of a missing `assistant` event is only ever a say step's)."""

    def holds(context: TurnContext) -> bool:
        return _assistant_blocks(context.real_stdout) == _answer_blocks(context, thinking(context.facts))

    return holds


def _json_lines(data: bytes) -> list[dict[str, Any]]:
    return json_objects(data.splitlines())


def _results(context: TurnContext) -> list[dict[str, Any]]:
    return [event for event in _json_lines(context.real_stdout) if event.get("type") == "result"]


def _reply_only_in_result(context: TurnContext) -> bool:
    """codebuddy: the last answer's text is not among the `assistant` events, every other block is,
    and the one `result` is a success whose `result` holds a text."""
    facts = context.facts
    expected = _answer_blocks(context, facts.think_answers)
    expected["text"] -= 1
    results = _results(context)
    return (
        facts.last_answer_text
        and _assistant_blocks(context.real_stdout) == +expected
        and len(results) == 1
        and results[0].get("subtype") == "success"
        and isinstance(results[0].get("result"), str)
        and bool(results[0]["result"])
    )


def _reply_printed_after_thinking(context: TurnContext) -> bool:
    """codebuddy: the last answer has thinking and text, every block of the answers is among the
    `assistant` events, nothing more, and the one `result` is a success whose `result` holds a text."""
    facts = context.facts
    results = _results(context)
    return (
        facts.last_answer_text
        and facts.last_answer_thinking
        and _assistant_blocks(context.real_stdout) == _answer_blocks(context, facts.think_answers)
        and len(results) == 1
        and results[0].get("subtype") == "success"
        and isinstance(results[0].get("result"), str)
        and bool(results[0]["result"])
    )


def _qwen_retried(context: TurnContext) -> bool:
    """Every system event of the real stdout but the init is a provider retry (no schedule)."""
    systems = [event for event in _json_lines(context.real_stdout) if event.get("type") == "system"]
    retries = [event for event in systems if event.get("subtype") == "retry"]
    plain = {"reason": "retry", "discardedToolCalls": 0, "preserveText": False}
    return bool(retries) and len(systems) == len(retries) + 1 and all(e.get("data") == plain for e in retries)


def _last_result_failed(context: TurnContext) -> bool:
    results = _results(context)
    return bool(results) and results[-1].get("subtype") == "error_during_execution"


def _shell_call_keys(
    label: str, prefix: str, other_tool_texts: tuple[str, ...] = ()
) -> Callable[[TurnContext], tuple[str, ...]]:
    """For each scripted tool: the shell tool's arguments the real call has and the script's input
    lacks, and the script's input keys the real call lacks, as compare() words them; when the turn has
    a tool of another name than bash or shell, ``other_tool_texts`` too (the shell result's keys)."""

    def texts(context: TurnContext) -> tuple[str, ...]:
        found: list[str] = list(other_tool_texts) if context.facts.other_tools else []
        shell = SHELL_TOOL_ARGUMENTS[context.engine]
        for keys in context.facts.tool_inputs:
            only_real = sorted(shell - keys)
            only_fake = sorted(keys - shell)
            if only_real:
                found.append(
                    f"stdout: {label}: keys only in real: {', '.join(prefix + k for k in only_real)}"
                )
            if only_fake:
                found.append(
                    f"stdout: {label}: keys only in fake: {', '.join(prefix + k for k in only_fake)}"
                )
        return tuple(found)

    return texts


def _kilo_failed_call_keys(context: TurnContext) -> tuple[str, ...]:
    """kilo: per failed tool, its completed call's keys the fake's errored one lacks, in compare()'s one
    line: the output and title, and the shell arguments the script's input lacks."""
    shell = SHELL_TOOL_ARGUMENTS["kilo"]
    found = []
    for keys in context.facts.failed_tool_inputs:
        only_real = sorted(
            ["part.state.output", "part.state.title", *(f"part.state.input.{k}" for k in shell - keys)]
        )
        found.append(f"stdout: tool_use:tool: keys only in real: {', '.join(only_real)}")
    return tuple(found)


def _stderr_line(line: str, pattern: str | None = None) -> Excuse:
    return Excuse(
        LINE_ONLY_IN_REAL + line, None if pattern is None else re.escape(LINE_ONLY_IN_REAL) + pattern
    )


# The variants ------------------------------------------------------------------------------------------

_COMMAND_EXECUTION: Final = (
    "item.aggregated_output",
    "item.command",
    "item.exit_code",
    "item.id",
    "item.status",
    "item.type",
    "type",
)
GEMINI_BUNDLE: Final = "@google/gemini-cli 0.61.0 bundle/chunk-JDPZ4CE3.js"
# A Bash result's keys where the fake prints another tool's result (claude: its output as a string;
# codebuddy: a result without `_meta`), as compare() words them (corpus/<engine>/real-*-mcp-tool).
CLAUDE_SHELL_RESULT: Final = (
    "stdout: user: keys only in real: tool_use_result.interrupted, tool_use_result.isImage,"
    " tool_use_result.noOutputExpected, tool_use_result.stderr, tool_use_result.stdout",
    "stdout: user: keys only in fake: tool_use_result",
)
CODEBUDDY_SHELL_RESULT: Final = (
    "stdout: user: keys only in real: "
    + ", ".join(
        f"message.content[]._meta.{key}"
        for key in (
            "rawResponse.exitCode",
            "rawResponse.interrupted",
            "rawResponse.sandboxDenied",
            "rawResponse.signal",
            "rawResponse.stderrBytesTruncated",
            "rawResponse.stdoutBytesTruncated",
            "rawResponse.tool_error_code",
            "renderer.type",
            "renderer.value",
        )
    ),
)
CODEX_CAPTURE: Final = "corpus/codex/real-0.169.0-message/stderr (and every real codex capture, 0.146.1 too)"

VARIANTS: tuple[Variant, ...] = (
    Variant(
        "codex-stderr-notices",
        ("codex",),
        "any",
        (
            _stderr_line(
                "WARNING: proceeding, even though we could not create PATH aliases: Refusing to create helper"
                ' binaries under temporary dir "/tmp" (codex_home: AbsolutePathBuf("/tmp/turngate-real-'
                'capture/codex@0.169.0/json/fid-message/real/codex-home/.codex"))',
                r"WARNING: proceeding, even though we could not create PATH aliases: Refusing to create"
                r' helper binaries under temporary dir "[^"\n]+"'
                r' \(codex_home: AbsolutePathBuf\("[^"\n]+"\)\)',
            ),
            _stderr_line("Reading additional input from stdin..."),
        ),
        "codex prints two notices on stderr at start: it cannot make its PATH aliases under a temporary"
        " CODEX_HOME (the launcher's isolated home), and it reads stdin for more input (not on `exec"
        " resume`); the fake codex prints neither. Only these two lines: any other line is unexplained",
        CODEX_CAPTURE,
    ),
    Variant(
        "gemini-stderr-notices",
        ("gemini",),
        "any",
        (
            _stderr_line(
                "Warning: 256-color support not detected. Using a terminal with at least 256-color support is"
                " recommended for a better visual experience."
            ),
            _stderr_line("YOLO mode is enabled. All tool calls will be automatically approved."),
            _stderr_line("Ripgrep is not available. Falling back to GrepTool."),
            _stderr_line("[STARTUP] Phase 'cleanup_ops' was started but never ended. Skipping metrics."),
            _stderr_line(
                "[STARTUP] Cannot measure phase 'cleanup_ops': start mark 'startup:cleanup_ops:start'"
                " not found (likely cleared by reset)."
            ),
        ),
        "gemini prints start-up notices on stderr (no 256 colours on a pipe, --yolo, no ripgrep, and,"
        " depending on timing, two start-up metrics warnings); the fake gemini prints none. Only these"
        " five lines: any other line is unexplained",
        "corpus/gemini/real-0.61.0-*/stderr lines 1-4; the two [STARTUP] lines: live fidelity runs"
        f" (e.g. fid-error, turn 1), printed by {GEMINI_BUNDLE}:288127 and :288153; the others by"
        f" :390284, bundle/gemini-3HFX2LNT.js:8394, chunk-JDPZ4CE3.js:380952",
    ),
    Variant(
        "gemini-api-error-report-on-stderr",
        ("gemini",),
        "error-turn",
        (
            _stderr_line(
                "Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-"
                "Turn.run-sendMessageStream-2026-11-23T07-21-17-204Z.json _ApiError:"
                ' {"error":{"code":400,"message":"scripted failure: quota exhausted",'
                '"status":"INVALID_ARGUMENT"}}',
                r"Error when talking to Gemini API Full report available at: \S+/gemini-client-error-"
                r'Turn\.run-sendMessageStream-[\w-]+\.json _ApiError: \{"error":\{"code":400,"message":'
                r'"(?:[^"\\]|\\.)*","status":"INVALID_ARGUMENT"\}\}',
            ),
            _stderr_line(
                "    at throwErrorIfNotOK (file://<home>/.cache/turngate/engines/gemini@0.61.0/node_modules/"
                "@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)",
                r"    at (?:async )?(?:[\w.$<>]+ \()?(?:file://\S*/@google/gemini-cli/bundle/[\w-]+\.js"
                r"|node:internal/[\w/]+):\d+:\d+\)?(?: \{)?",
            ),
            _stderr_line("  status: 400"),
            _stderr_line("}"),
        ),
        "when the model answers 400, gemini prints the API error, the path of its full report, a stack"
        " trace in its own bundle and the status on stderr; the fake gemini prints no trace. Only on a"
        " turn whose model request fails, only frames of gemini-cli's bundle or node:internal",
        "corpus/gemini/real-0.61.0-json-error/stderr and real-0.61.0-stream-json-error/stderr lines"
        f" 5-17; printed by {GEMINI_BUNDLE}:333117 and :307838",
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ("codex",),
        "other-tool-turn",
        (
            Excuse(
                "stdout: line item.started:command_execution in real where fake has"
                " item.started:mcp_tool_call"
            ),
            Excuse(
                "stdout: line item.completed:command_execution in real where fake has"
                " item.completed:mcp_tool_call"
            ),
        ),
        "the model server plays every scripted tool as a call of the CLI's own shell tool; the fake codex"
        " prints a tool of another name than bash or shell as an MCP tool call. MCP servers are not"
        " configured for the real CLIs",
        "live fidelity runs, fid-mcp-tool and engine-format/tool-echo/codex, turn 1 (no capture has an"
        " MCP tool); the command_execution keys: corpus/codex/real-0.169.0-tool-echo/stdout lines 3-4",
        shapes=(
            Shape("stdout", "item.started:command_execution", _COMMAND_EXECUTION),
            Shape("stdout", "item.completed:command_execution", _COMMAND_EXECUTION),
        ),
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ("gemini",),
        "tool-turn",
        (),
        "the model server plays every scripted tool as gemini's run_shell_command with the arguments it"
        " declares (command, description); the fake gemini shows the script's tool input as given",
        "live fidelity runs, fid-mcp-tool and fid-tool-echo (stream-json), turn 1; the call's"
        " parameters: corpus/gemini/real-0.61.0-stream-json-tool-echo/stdout, the tool_use line",
        modes=("stream-json",),
        derived=_shell_call_keys("tool_use", "parameters."),
        derived_text="for each scripted tool: `stdout: tool_use: keys only in real: parameters.K` for"
        " exactly the shell arguments (command, description) its input lacks, `... keys only in fake:"
        " parameters.K` for exactly its input keys that are not shell arguments",
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ("opencode",),
        "tool-turn",
        (),
        "the model server plays every scripted tool as opencode's bash tool, whose call carries the"
        " command alone; the fake opencode shows the script's tool input as given",
        "live fidelity run, fid-mcp-tool, turn 1; the call's input:"
        " corpus/opencode/real-1.18.33-tool-echo/stdout, the tool_use line",
        derived=_shell_call_keys("tool_use:tool", "part.state.input."),
        derived_text="for each scripted tool: `stdout: tool_use:tool: keys only in real:"
        " part.state.input.command` when its input has no `command`, `... keys only in fake:"
        " part.state.input.K` for exactly its input keys other than `command`",
    ),
    Variant(
        "failed-command-is-a-completed-call",
        ("gemini",),
        "failed-tool-turn",
        (Excuse('stdout: tool_result: status: real "success", fake "error"'),),
        "a shell command that exits non-zero is a successful tool call for gemini (the exit code is in"
        " the output); the fake's `status: error` is a tool that itself failed, which a model cannot make"
        " a real CLI do",
        "live fidelity run, fid-tool-failed (stream-json), turn 1",
        modes=("stream-json",),
    ),
    Variant(
        "failed-command-is-a-completed-call",
        ("opencode",),
        "failed-tool-turn",
        (
            Excuse('stdout: tool_use:tool: part.state.status: real "completed", fake "error"'),
            Excuse("stdout: tool_use:tool: keys only in real: part.state.metadata, part.state.output"),
            Excuse("stdout: tool_use:tool: keys only in fake: part.state.error"),
        ),
        "a shell command that exits non-zero is a completed tool call for opencode (its output and"
        " metadata hold the exit code); the fake's `status: error` with `error` is a tool that itself"
        " failed, which a model cannot make a real CLI do",
        "live fidelity run, fid-tool-failed, turn 1",
    ),
    Variant(
        "codex-request-user-input-refused",
        ("codex",),
        "other-tool-turn",
        (
            _stderr_line(
                "2026-11-25T04:06:54.397622Z ERROR codex_core::tools::router:"
                " error=request_user_input is unavailable in Default mode",
                REQUEST_USER_INPUT_LINE,
            ),
            Excuse(
                LINE_ONLY_IN_FAKE + "2026-11-25T07:42:05.710000Z ERROR codex_core::tools::router:"
                " error=request_user_input is unavailable in Default mode",
                re.escape(LINE_ONLY_IN_FAKE) + REQUEST_USER_INPUT_LINE,
            ),
        ),
        'codex declares request_user_input to the model ("only available in Plan mode") and refuses a call'
        " of it in `exec`: one timestamped ERROR line on stderr, nothing on stdout, and the model goes on;"
        " the fake codex prints the same line with its own time. Only that line, its time aside",
        "corpus/codex/real-0.169.0-request-user-input/stderr (and real-0.146.1-request-user-input)",
    ),
    Variant(
        "codex-api-error-event",
        ("codex",),
        "error-turn",
        (Excuse("stdout: line error in real where fake has item.completed:error"),),
        "codex reports a model API error (a 4xx) as a top-level `error` event carrying the provider's"
        " body, then `turn.failed`; the fake's non-transient `error` step is an `error` item, the kind"
        " codex uses for its own errors (unknown model metadata). Both end in turn.failed, exit 1",
        "corpus/codex/real-0.169.0-error/stdout line 3 (and real-0.146.1-error)",
        holds=_ends_turn_failed,
        requires="the real turn ends with `turn.failed`",
        shapes=(Shape("stdout", "error", ("message", "type")),),
    ),
    Variant(
        "gemini-api-error-in-result",
        ("gemini",),
        "error-turn",
        (
            Excuse("stdout: only in fake: error"),
            Excuse('stdout: result: error.type: real "unknown", fake "Error"'),
        ),
        "gemini ends a stream-json turn whose model request failed with `result` status error, error.type"
        ' "unknown", and no `error` event; the fake writes an `error` event first and error.type "Error"',
        "corpus/gemini/real-0.61.0-stream-json-error/stdout, the `result` line",
        modes=("stream-json",),
        holds=_result_status_error,
        requires='the real stdout has a `result` with status "error"',
    ),
    Variant(
        "gemini-exit-is-http-status",
        ("gemini",),
        "error-turn",
        (Excuse("exit code: real 144, fake 1"),),
        "gemini exits with the API error's HTTP status modulo 256 (the model server's 400 → 144) and names"
        " it as the document's code; the fake exits 1 with code 1 unless the script's error step gives"
        " a code",
        "corpus/gemini/real-0.61.0-*-error/capture.yaml: exit_code: 144",
    ),
    Variant(
        "gemini-json-error-on-stderr",
        ("gemini",),
        "error-turn",
        (Excuse("stdout: only in fake: document"), Excuse("stderr: only in real: document")),
        "in json mode gemini writes its error document on stderr (after the stack trace) and nothing on"
        " stdout; the fake writes it where `document_stream` says (stdout by default; `document_stream:"
        " stderr` is the real placement, which the corpus capture json-document-on-stderr covers)",
        "corpus/gemini/real-0.61.0-json-error/stderr lines 18-25 (its stdout is empty)",
        modes=("json",),
        holds=_no_document_on_stdout,
        requires="the real stdout has no document",
        together=True,
        shapes=(Shape("stderr", "document", ("error.code", "error.message", "error.type", "session_id")),),
    ),
    Variant(
        "opencode-error-before-any-step",
        ("opencode",),
        "first-answer-error",
        (Excuse("stdout: only in fake: step_start:step-start"),),
        "when the first model request fails, opencode prints the `error` alone, with no step_start; the"
        " fake starts every turn with step_start",
        "corpus/opencode/real-1.18.33-error/stdout (one line, the `error`)",
        holds=_error_alone,
        requires="the real stdout has an `error` and no step_start",
    ),
    Variant(
        "opencode-api-error-http-details",
        ("opencode",),
        "error-turn",
        (
            Excuse(
                "stdout: error: keys only in real: error.data.metadata, error.data.responseBody,"
                " error.data.responseHeaders.content-length, error.data.responseHeaders.content-type,"
                " error.data.responseHeaders.date, error.data.responseHeaders.server, error.data.statusCode"
            ),
        ),
        "opencode's APIError carries the HTTP response (statusCode, responseHeaders, responseBody,"
        " metadata) of a provider the fake does not have: all four are optional in opencode's APIError"
        " schema, and the fake's APIError is one without an HTTP response; exactly the headers"
        " turngate's model server sends",
        "corpus/opencode/real-1.18.33-error/stdout, error.data; the schema in the opencode-ai 1.18.33"
        " binary: APIError {message, statusCode?, isRetryable, responseHeaders?, responseBody?, metadata?}",
    ),
    Variant(
        "opencode-reasoning-needs-thinking",
        ("opencode",),
        "think-turn",
        (Excuse("stdout: only in fake: reasoning:reasoning"),),
        "opencode 1.18.33 prints reasoning parts only with --thinking, which the documented command line"
        " does not pass; the fake always prints them, so reasoning echoes of the marker stay testable",
        "live fidelity run, fid-think-message, turn 1 (no reasoning part on stdout)",
    ),
    Variant(
        "opencode-one-text-part-per-answer",
        ("opencode",),
        "text-turn",
        (Excuse("stdout: only in fake: text:text"),),
        "opencode makes one text part of one model answer; the fake writes one text event per say step"
        " (the reply, their concatenation, is the same)",
        "corpus/opencode/real-1.18.33-ask-user/stdout: one text part for the say and the ask_user hint",
        holds=_one_text_part_per_answer,
        requires="the real stdout has exactly one text part per model answer with text in the script's turn",
    ),
)


# The hazards of codex, gemini and opencode (fidelity --saved --set hazard), from their captures of
# 2026-11-25.
VARIANTS += (
    Variant(
        "gemini-retry-report-on-stderr",
        ("gemini",),
        "status-fault-turn",
        (
            _stderr_line(
                "Attempt 1 failed with status 429. Retrying with backoff... _ApiError:"
                ' {"error":{"code":429,"message":"Too Many Requests","status":"RESOURCE_EXHAUSTED"}}',
                r"Attempt \d+ failed with status \d{3}\. Retrying with backoff\.\.\. " + _GEMINI_API_ERROR,
            ),
            _stderr_line(
                "Attempt 3 failed: Too Many Requests. Max attempts reached",
                r"Attempt \d+ failed: (?:[A-Z][\w ]*|"
                + _GEMINI_API_ERROR.removeprefix("_ApiError: ")
                + r")\. Max attempts reached",
            ),
            _stderr_line(
                "Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-"
                "Turn.run-"
                "sendMessageStream-2026-11-25T04-01-39-253Z.json RetryableQuotaError: Too Many Requests",
                _GEMINI_REPORT + r"(?:RetryableQuotaError: [A-Z][\w ]*|" + _GEMINI_API_ERROR + ")",
            ),
            _stderr_line(
                "    at throwErrorIfNotOK (file://<home>/.cache/turngate/engines/gemini@0.61.0/node_modules/"
                "@google/gemini-cli/bundle/chunk-JDPZ4CE3.js:267833:24)",
                GEMINI_FRAME,
            ),
            _stderr_line("  status: 429", r"  status: (?:429|5\d\d)"),
            _stderr_line(
                "  cause: { code: 429, message: 'Too Many Requests', details: [] },",
                r"  cause: \{ code: \d{3}, message: '[^'\n]*', details: \[\] \},",
            ),
            _stderr_line("  retryDelayMs: undefined,"),
            _stderr_line("}"),
        ),
        "gemini retries a refused request with a report on stderr for each attempt (the API error, a stack"
        " trace in its bundle, the status), then the report of the last one and the path of its full"
        " report; the fake gemini retries silently. Only these lines, each whole: a line of another form"
        " is unexplained",
        "corpus/gemini/real-0.61.0-*-hazard-429/stderr and *-hazard-500/stderr; printed by"
        f" {GEMINI_BUNDLE}:308039 (retryWithBackoff) and :333117",
    ),
    Variant(
        "gemini-drop-report-on-stderr",
        ("gemini",),
        "drop-turn",
        (
            _stderr_line(
                "Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-"
                "Turn.run-"
                "sendMessageStream-2026-11-25T04-16-50-394Z.json TypeError: terminated",
                _GEMINI_REPORT + "TypeError: terminated",
            ),
            _stderr_line("    at Fetch.onAborted (node:internal/deps/undici/undici:11350:53)", GEMINI_FRAME),
            _stderr_line("  [cause]: SocketError: other side closed"),
            _stderr_line("    code: 'UND_ERR_SOCKET',"),
            _stderr_line("    socket: {"),
            _stderr_line("      localAddress: '127.0.0.1',"),
            _stderr_line("      localPort: 59254,", r"      localPort: \d+,"),
            _stderr_line("      remoteAddress: '127.0.0.1',"),
            _stderr_line("      remotePort: 33791,", r"      remotePort: \d+,"),
            _stderr_line("      remoteFamily: 'IPv4',"),
            _stderr_line("      timeout: undefined,"),
            _stderr_line("      bytesWritten: 47027,", r"      bytesWritten: \d+,"),
            _stderr_line("      bytesRead: 394", r"      bytesRead: \d+"),
            _stderr_line("    }"),
            _stderr_line("  }"),
            _stderr_line("}"),
        ),
        "when the connection drops mid-answer gemini prints undici's `TypeError: terminated` on stderr:"
        " the path of its full report, a stack trace, and the socket error that caused it (its ports and"
        " byte counts); the fake gemini prints no trace. Only these lines, each whole",
        "corpus/gemini/real-0.61.0-*-hazard-drop/stderr and *-hazard-drop-retried/stderr",
    ),
    Variant(
        "opencode-fault-http-details",
        ("opencode",),
        "status-fault-turn",
        (
            Excuse(
                "stdout: error: keys only in real: error.data.metadata, error.data.responseBody,"
                " error.data.responseHeaders.content-length, error.data.responseHeaders.content-type,"
                " error.data.responseHeaders.date, error.data.responseHeaders.retry-after,"
                " error.data.responseHeaders.server"
            ),
            Excuse(
                "stdout: error: keys only in real: error.data.metadata, error.data.responseBody,"
                " error.data.responseHeaders.content-length, error.data.responseHeaders.content-type,"
                " error.data.responseHeaders.date, error.data.responseHeaders.server"
            ),
        ),
        "opencode's APIError for a refused request carries the HTTP response (its headers, the 429's"
        " retry-after among them, its body and metadata) as for a 4xx (opencode-api-error-http-details);"
        " the fake's APIError for a model_error status carries the status alone",
        "corpus/opencode/real-1.18.33-hazard-429/stdout and real-1.18.33-hazard-500/stdout, error.data",
    ),
)

# The four engines Skill-Runner added (claude, qwen, codebuddy, kilo), from their captures of 2026-11-25.
VARIANTS += (
    Variant(
        "every-tool-is-a-shell-call",
        ("claude",),
        "tool-turn",
        (),
        "the model server plays every scripted tool as claude's Bash with the arguments it declares"
        " (command, description), so its result is a Bash result; the fake claude shows the script's"
        " tool input as given, and a tool of another name than bash or shell with its output as the"
        " result",
        "corpus/claude/real-2.1.331-tool-echo/stdout and real-2.1.331-mcp-tool/stdout (and 2.1.326's),"
        " the tool_use and user lines",
        derived=_shell_call_keys("assistant", "message.content[].input.", CLAUDE_SHELL_RESULT),
        derived_text="for each scripted tool: `stdout: assistant: keys only in real:"
        " message.content[].input.K` for exactly the shell arguments (command, description) its input"
        " lacks, `... keys only in fake: message.content[].input.K` for exactly its input keys that are"
        " not shell arguments; with a tool not named bash or shell, also `"
        + "`, `".join(CLAUDE_SHELL_RESULT)
        + "`",
    ),
    Variant(
        "claude-one-text-block-per-answer",
        ("claude",),
        "text-turn",
        (Excuse("stdout: only in fake: assistant"),),
        "claude prints one assistant event per content block of a model answer, and the model server"
        " joins an answer's say steps into one text block; the fake writes one text event per say step"
        " (the reply, their concatenation, is the same)",
        "corpus/claude/real-2.1.331-ask-user/stdout: one text block for the say and the ask_user hint",
        holds=_one_block_per_answer(lambda facts: facts.think_steps),
        requires="the real assistant events hold exactly the model's answers' blocks: one text block per"
        " answer with text, one tool_use per call, one thinking block per think step",
    ),
    Variant(
        "claude-api-error-status-is-http",
        ("claude",),
        "uncoded-error-turn",
        (
            Excuse("stdout: assistant: api_error_status: real num, fake null"),
            Excuse("stdout: result: api_error_status: real num, fake null"),
        ),
        "a failed model request is an HTTP error (the model server answers an error step with a 400),"
        " whose status claude names in api_error_status; the fake names the status the script's error"
        " step gives as its code, and null without one",
        "corpus/claude/real-2.1.331-error/stdout, the synthetic assistant line and the result (and"
        " 2.1.326's): api_error_status 400",
        holds=lambda context: bool(_results(context)) and _results(context)[-1].get("is_error") is True,
        requires="the real `result` has `is_error: true`",
    ),
    Variant(
        "qwen-retries-an-empty-answer",
        ("qwen",),
        "empty-answer-turn",
        (
            Excuse("stdout: only in real: system"),
            _stderr_line("Retrying provider attempt (0 buffered tool call(s) discarded)."),
        ),
        "a model answer with nothing in it makes qwen ask again (eight times, each a system/retry line and"
        " a stderr line) before it ends the turn; a real model does not answer empty, and the fake ends"
        " the turn there",
        "live fidelity run of 2026-11-25, design/decision-5/backend-pending-baseline (qwen), turn 3",
        holds=_qwen_retried,
        requires="every system event of the real stdout but the init is a retry without a schedule",
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ("qwen",),
        "tool-turn",
        (),
        "the model server plays every scripted tool as qwen's run_shell_command with the arguments it"
        " declares (command, description); the fake qwen shows the script's tool input as given",
        "corpus/qwen/real-0.24.4-tool-echo/stdout and real-0.24.4-mcp-tool/stdout, the tool_use line",
        derived=_shell_call_keys("assistant", "message.content[].input."),
        derived_text="for each scripted tool: `stdout: assistant: keys only in real:"
        " message.content[].input.K` for exactly the shell arguments (command, description) its input"
        " lacks, `... keys only in fake: message.content[].input.K` for exactly its input keys that are"
        " not shell arguments",
    ),
    Variant(
        "qwen-one-text-block-per-answer",
        ("qwen",),
        "text-turn",
        (Excuse("stdout: only in fake: assistant"),),
        "qwen prints a model answer's text as one text block, and the model server joins an answer's say"
        " steps into one text; the fake writes one assistant event per say step (the reply, their"
        " concatenation, is the same)",
        "corpus/qwen/real-0.24.4-ask-user/stdout: one text block for the say and the ask_user hint",
        holds=_one_block_per_answer(lambda facts: facts.think_answers),
        requires="the real assistant events hold exactly the model's answers' blocks: one text block per"
        " answer with text, one tool_use per call, one thinking block per answer with thinking",
    ),
    Variant(
        "qwen-stderr-notices",
        ("qwen",),
        "any",
        (
            _stderr_line(
                "Ripgrep not available: spawn <home>/.cache/turngate/engines/qwen@0.24.4/node_modules/"
                "@qwen-code/qwen-code/vendor/ripgrep/x64-linux/rg EACCES. Falling back to built-in grep.",
                r"Ripgrep not available: spawn \S+/@qwen-code/qwen-code/vendor/ripgrep/[\w-]+/rg EACCES\."
                r" Falling back to built-in grep\.",
            ),
        ),
        "@qwen-code/qwen-code 0.24.4 ships its ripgrep without the executable bit (npm installs it"
        " mode 644), so every turn of an npm install says it falls back to its built-in grep; the fake"
        " qwen models a working install. Only that line, its path aside",
        "corpus/qwen/real-0.24.4-*/stderr line 1; the file: vendor/ripgrep/x64-linux/rg, mode 644",
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ("codebuddy",),
        "tool-turn",
        (),
        "the model server plays every scripted tool as codebuddy's Bash with the arguments it declares"
        " (command, description), so its result is a Bash result (its `_meta`); the fake codebuddy shows"
        " the script's tool input as given, and a tool of another name than bash or shell without a"
        " Bash result's `_meta`",
        "corpus/codebuddy/real-2.118.2-tool-echo/stdout and real-2.118.2-mcp-tool/stdout, the tool_use"
        " and user lines",
        derived=_shell_call_keys("assistant", "message.content[].input.", CODEBUDDY_SHELL_RESULT),
        derived_text="for each scripted tool: `stdout: assistant: keys only in real:"
        " message.content[].input.K` for exactly the shell arguments (command, description) its input"
        " lacks, `... keys only in fake: message.content[].input.K` for exactly its input keys that are"
        " not shell arguments; with a tool not named bash or shell, also `"
        + "`, `".join(CODEBUDDY_SHELL_RESULT)
        + "`",
    ),
    Variant(
        "codebuddy-reply-only-in-result",
        ("codebuddy",),
        "text-turn",
        (Excuse("stdout: only in fake: assistant"),),
        "codebuddy 2.118.2 sometimes prints the turn's last answer only as result.result, not as an"
        " assistant event: the same script (fid-tool-failed) printed it as an event in one run and not in"
        " another. The fake prints it by a fixed rule (variant text_in_result_only: observed); the reply,"
        " result.result, is the same",
        "corpus/codebuddy/real-2.118.2-tool-failed/stdout (no text event after the tool result) against"
        " tests/data/real-captures/codebuddy/fid-tool-failed.stdout (the same script: a text event)",
        holds=_reply_only_in_result,
        requires="the real assistant events hold every block of the model's answers but the last"
        " answer's text, and the one `result` is a success whose `result` is a non-empty text",
    ),
    Variant(
        "codebuddy-reply-printed-after-thinking",
        ("codebuddy",),
        "think-turn",
        (Excuse("stdout: only in real: assistant"),),
        "the same timing the other way: codebuddy 2.118.2 printed an answer's text after its thinking as"
        " an assistant event in one run of fid-think-message and only as result.result in another; the"
        " fake's fixed rule prints it only in result.result (text after thinking)",
        "live fidelity run of 2026-11-25, fid-think-message, turn 1 (thinking, then a text event)"
        " against corpus/codebuddy/real-2.118.2-think-message/stdout (thinking, no text event)",
        holds=_reply_printed_after_thinking,
        requires="the turn's last answer has thinking and text, the real assistant events hold exactly"
        " the model's answers' blocks, and the one `result` is a success whose `result` is a non-empty"
        " text",
    ),
    Variant(
        "codebuddy-request-id-by-timing",
        ("codebuddy",),
        "any",
        (
            Excuse("stdout: assistant: keys only in real: _requestId"),
            Excuse("stdout: assistant: keys only in fake: _requestId"),
        ),
        "codebuddy 2.118.2 adds the turn's `_requestId` to an assistant event or not from one run to the"
        " next (the same failure text has it in one capture of a 429 and not in another; an answer's"
        " text had it in a live fid-resume run and not in the capture); the fake adds it where the"
        " first captures had it. Only that key: any other key of the event still counts",
        "corpus/codebuddy/real-2.118.2-hazard-429/stdout (no _requestId on the failure text) against"
        " tests/data/real-captures/codebuddy/hazard-429.stdout (_requestId on it); live fidelity runs"
        " of 2026-11-25, fid-error and fid-resume, turn 1",
    ),
    Variant(
        "codebuddy-exit-0-after-api-error",
        ("codebuddy",),
        "error-turn",
        (Excuse("exit code: real 0, fake 1"),),
        "codebuddy 2.118.2 exits 0 after a failed model request it reported (a result"
        " error_during_execution); the fake exits with the turn's exit code (1 for a failed end; a"
        " script writes `exit_code: 0` to play the real one, docs/fake-engines.md)",
        "corpus/codebuddy/real-2.118.2-error/capture.yaml: exit_code: 0, its stdout's last line",
        holds=_last_result_failed,
        requires="the real stdout's last `result` is `error_during_execution`",
    ),
    Variant(
        "every-tool-is-a-shell-call",
        ("kilo",),
        "tool-turn",
        (),
        "the model server plays every scripted tool as kilo's bash tool with the arguments it declares"
        " (command, description); the fake kilo shows the script's tool input as given",
        "corpus/kilo/real-7.7.7-tool-echo/stdout and real-7.7.7-mcp-tool/stdout (and 7.7.2's), the"
        " tool_use line",
        derived=_shell_call_keys("tool_use:tool", "part.state.input."),
        derived_text="for each scripted tool: `stdout: tool_use:tool: keys only in real:"
        " part.state.input.K` for exactly the shell arguments (command, description) its input lacks,"
        " `... keys only in fake: part.state.input.K` for exactly its input keys that are not shell"
        " arguments",
    ),
    Variant(
        "failed-command-is-a-completed-call",
        ("kilo",),
        "failed-tool-turn",
        (
            Excuse('stdout: tool_use:tool: part.state.status: real "completed", fake "error"'),
            Excuse("stdout: tool_use:tool: keys only in fake: part.state.error"),
        ),
        "a shell command that exits non-zero is a completed tool call for kilo (its output and title"
        " hold it); the fake's `status: error` with `error` is a tool that itself failed, which a model"
        " cannot make a real CLI do",
        "corpus/kilo/real-7.7.7-tool-failed/stdout (and 7.7.2's), the tool_use line",
        derived=_kilo_failed_call_keys,
        derived_text="for each failed tool: `stdout: tool_use:tool: keys only in real: ...` naming"
        " exactly part.state.output, part.state.title and the shell arguments (command, description)"
        " its input lacks",
    ),
    Variant(
        "kilo-one-text-part-per-answer",
        ("kilo",),
        "text-turn",
        (Excuse("stdout: only in fake: text:text"),),
        "kilo makes one text part of one model answer, as opencode does; the fake writes one text"
        " event per say step (the reply, their concatenation, is the same)",
        "corpus/kilo/real-7.7.7-ask-user/stdout (and 7.7.2's): one text part for the say and the"
        " ask_user hint",
        holds=_one_text_part_per_answer,
        requires="the real stdout has exactly one text part per model answer with text in the script's turn",
    ),
    Variant(
        "kilo-api-error-http-details",
        ("kilo",),
        "uncoded-error-turn",
        (
            Excuse(
                "stdout: error: keys only in real: error.data.metadata, error.data.responseBody,"
                " error.data.responseHeaders.content-length, error.data.responseHeaders.content-type,"
                " error.data.responseHeaders.date, error.data.responseHeaders.server, error.data.statusCode"
            ),
        ),
        "kilo's APIError carries the HTTP response (statusCode, responseHeaders, responseBody,"
        " metadata), as opencode's; the fake kilo adds them only for an error step with a `code`"
        " (docs/fake-engines.md), and the model server answers every error step with a 400: exactly"
        " the headers it sends",
        "corpus/kilo/real-7.7.7-error/stdout (and 7.7.2's), error.data",
    ),
)


# claude's dropped connections (the hazard captures of 2026-11-25): the fake plays the form in which
# every attempt's connection was lost; in other runs claude took some attempts for an ended cut.
CLAUDE_CUT_GO_ON: Final = (
    "Your response above was cut off mid-stream. Resume directly from where it stops — no apology,"
    " no recap. If none of it survived, answer the request from the start."
)
CLAUDE_CONNECTION_LOST: Final = (
    "API Error: Connection to the API was lost (ECONNRESET). This is usually temporary — try again."
)
_CLAUDE_SYNTHETIC_KEYS: Final = (
    "error, is_api_error_message, message.container, message.diagnostics, message.stop_details,"
    " message.usage.cache_creation.ephemeral_1h_input_tokens,"
    " message.usage.cache_creation.ephemeral_5m_input_tokens, message.usage.fallback_credit,"
    " message.usage.inference_geo, message.usage.iterations, message.usage.output_tokens_details,"
    " message.usage.server_tool_use.web_fetch_requests, message.usage.server_tool_use.web_search_requests,"
    " message.usage.service_tier, message.usage.speed"
)
# The flattened keys (shapes.events) of each line such a turn prints between its init and its result
# (corpus/claude/real-2.1.331-hazard-drop/stdout, real-2.1.326-hazard-drop-retried/stdout).
_CLAUDE_MESSAGE_KEYS: Final = frozenset(
    {"parent_tool_use_id", "session_id", "timestamp", "type", "uuid", "message.content"}
    | {f"message.content[].{key}" for key in ("text", "type")}
)
_CLAUDE_ANSWER_KEYS: Final = _CLAUDE_MESSAGE_KEYS | {
    f"message.{key}"
    for key in (
        "context_management",
        "id",
        "model",
        "role",
        "stop_reason",
        "stop_sequence",
        "type",
        "usage.cache_creation_input_tokens",
        "usage.cache_read_input_tokens",
        "usage.input_tokens",
        "usage.output_tokens",
    )
}
_CLAUDE_LOST_KEYS: Final = _CLAUDE_ANSWER_KEYS | {"api_error", *_CLAUDE_SYNTHETIC_KEYS.split(", ")}
_CLAUDE_GO_ON_KEYS: Final = _CLAUDE_MESSAGE_KEYS | {"isSynthetic", "message.role"}
_CLAUDE_RETRY_KEYS: Final = frozenset(
    {
        "attempt",
        "error",
        "error_status",
        "max_retries",
        "retry_delay_ms",
        "session_id",
        "subtype",
        "type",
        "uuid",
    }
)


def _claude_drop_taken_for_a_cut(context: TurnContext) -> bool:
    """The real stdout is claude's dropped-connection turn with some attempts taken for an ended cut:
    between its init and its `result` only dropped-connection retries (`api_retry`, no status, error
    `unknown`), answers each followed by claude's go-on message (every answer the same blocks, text
    only, the script's last answer carrying text), at least one go-on message, and last the synthetic
    ECONNRESET failure; every line with exactly the keys those lines were seen with."""
    lines = _json_lines(context.real_stdout)
    shapes = events(context.real_stdout)
    if len(lines) != len(shapes) or len(lines) < 4 or not context.facts.last_answer_text:
        return False
    first, lost, result = lines[0], lines[-2], lines[-1]
    if (first.get("type"), first.get("subtype"), result.get("type")) != ("system", "init", "result"):
        return False
    lost_message = lost.get("message")
    if not (
        set(shapes[-2][1]) == _CLAUDE_LOST_KEYS
        and lost.get("type") == "assistant"
        and lost.get("is_api_error_message") is True
        and lost.get("api_error") == "connection_failed"
        and isinstance(lost_message, dict)
        and lost_message.get("content") == [{"type": "text", "text": CLAUDE_CONNECTION_LOST}]
    ):
        return False
    answers: list[Any] = []  # the content of each answer, in order
    pending: list[Any] = []  # the blocks of the answer printed since the last go-on message
    go_ons = 0
    for line, (_, shape) in zip(lines[1:-2], shapes[1:-2], strict=True):
        keys = set(shape)
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if line.get("type") == "system" and not pending:
            if keys != _CLAUDE_RETRY_KEYS or line.get("subtype") != "api_retry":
                return False
            if line.get("error_status") is not None or line.get("error") != "unknown":
                return False
        elif line.get("type") == "assistant" and keys == _CLAUDE_ANSWER_KEYS and isinstance(content, list):
            if not content or any(not isinstance(b, dict) or b.get("type") != "text" for b in content):
                return False
            if not all(isinstance(b.get("text"), str) and b["text"] for b in content):
                return False
            pending += content
        elif line.get("type") == "user" and keys == _CLAUDE_GO_ON_KEYS and pending:
            if line.get("isSynthetic") is not True:
                return False
            if content != [{"type": "text", "text": CLAUDE_CUT_GO_ON}]:
                return False
            answers.append(pending)
            pending = []
            go_ons += 1
        else:
            return False
    return go_ons > 0 and not pending and all(answer == answers[0] for answer in answers)


# kilo's hazard captures (2026-11-25): a dropped connection, retried, ends in one of two forms.


def _kilo_drop_error_alone(context: TurnContext) -> bool:
    return _labels(context.real_stdout) == ["error"]


VARIANTS += (
    Variant(
        "claude-drop-taken-for-a-cut",
        ("claude",),
        "drop-turn",
        (
            Excuse("stdout: only in real: assistant"),
            Excuse("stdout: only in real: user"),
            Excuse("stdout: only in real: system"),
            # the first answer lined up with the fake's failure line (the same label): the keys of
            # the synthetic failure an answer lacks, and its two stop fields
            Excuse("stdout: assistant: keys only in fake: api_error, " + _CLAUDE_SYNTHETIC_KEYS),
            Excuse("stdout: assistant: message.stop_reason: real null, fake str"),
            Excuse("stdout: assistant: message.stop_sequence: real null, fake str"),
        ),
        "a connection dropped mid-body is not handled the same way from one run to the next by claude"
        " (2.1.326 and 2.1.331 alike): an attempt may fail with ECONNRESET (retried, or the turn fails)"
        " or be taken for an answer whose body ended (the answer printed, then claude's go-on message and"
        " a new request); the fake plays every attempt lost (retries, then the ECONNRESET failure), the"
        " form of the other runs. Only those answers, go-on messages and retries: the turn's end is the"
        " same ECONNRESET failure",
        "corpus/claude/real-2.1.331-hazard-drop/stdout (two answers taken for cuts, then ECONNRESET) and"
        " real-2.1.326-hazard-drop-retried/stdout (two retries, an answer and a go-on, two retries,"
        " ECONNRESET) against real-2.1.326-hazard-drop and real-2.1.331-hazard-drop-retried (every"
        " attempt lost, as the fake plays them)",
        holds=_claude_drop_taken_for_a_cut,
        requires="between the init and the `result`: only dropped-connection `api_retry` lines,"
        " answers (text blocks, the same each time) each followed by claude's go-on message (at least"
        " one), and last the synthetic ECONNRESET failure, each line with exactly the keys it was seen"
        " with; the script's last answer carries text",
    ),
    Variant(
        "kilo-drop-retried-error-alone",
        ("kilo",),
        "drop-turn",
        (Excuse("stdout: only in fake: step_start:step-start"), Excuse("stdout: only in fake: text:text")),
        "a connection dropped mid-body, retried, ends in one of two forms from one run of the same build"
        " to the next: the answer's step_start, the error, then the answer's text (7.7.2, and 7.7.7 in"
        " two runs; the fake's form), or the error alone, no step and no text (7.7.7 in one run): not"
        " deterministic, not a build change. Only those two lines, and only where the real turn printed"
        " the error and nothing else",
        "corpus/kilo/real-7.7.7-hazard-drop-retried/stdout (the error alone) against"
        " real-7.7.2-hazard-drop-retried/stdout and real-7.7.7-hazard-drop/stdout (step_start, error,"
        " text)",
        holds=_kilo_drop_error_alone,
        requires="the real stdout is exactly one line, the `error` event",
        together=True,
    ),
)


def variant_names(variants: Iterable[Variant] = VARIANTS) -> list[str]:
    return list(dict.fromkeys(variant.name for variant in variants))


def stderr_notice(engine: str, line: str, variants: Iterable[Variant] = VARIANTS) -> tuple[str, str] | None:
    """(variant, the quoted line) when a variant names ``line`` as one of ``engine``'s stderr lines
    (whatever the turn); None for a line no variant names."""
    text = LINE_ONLY_IN_REAL + line
    for variant in variants:
        if engine in variant.engines:
            for excuse in variant.excuses:
                if excuse.text.startswith(LINE_ONLY_IN_REAL) and excuse.matches(text):
                    return variant.name, excuse.text.removeprefix(LINE_ONLY_IN_REAL)
    return None


# The tables of docs/real-engines.md -------------------------------------------------------------------


def _code(text: str) -> str:
    """``text`` as a code span inside a Markdown table cell (pipes escaped, backticks fenced)."""
    text = text.replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    pad = " " if "`" in text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_tables(variants: Iterable[Variant] = VARIANTS) -> str:
    """One table per engine: each variant, the script kind and format it is limited to, exactly what it
    excuses (quoted), what the real output must show, and where that is quoted from."""
    chosen = list(variants)
    engines = sorted({engine for variant in chosen for engine in variant.engines})
    out: list[str] = []
    for engine in engines:
        out += [
            f"#### {engine}",
            "",
            "| variant | script kind | format | excuses exactly (whole difference texts) | only when the real"
            " output shows | quoted from |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for variant in (v for v in chosen if engine in v.engines):
            excuses = []
            for excuse in variant.excuses:
                shown = _code(excuse.text)
                line_pattern = (excuse.pattern or "").removeprefix(re.escape(LINE_ONLY_IN_REAL))
                if excuse.pattern is not None and line_pattern != excuse.pattern:
                    shown += f" (any stderr line matching {_code(line_pattern)} whole)"
                elif excuse.pattern is not None:
                    shown += f" (any text matching {_code(excuse.pattern)} whole)"
                excuses.append(shown)
            if variant.derived is not None:
                excuses.append(variant.derived_text.replace("|", "\\|"))
            requires = [variant.requires] if variant.requires else []
            for shape in variant.shapes:
                keys = ", ".join(_code(key) for key in shape.keys)
                requires.append(f"{shape.stream} {_code(shape.label)} with exactly the keys {keys}")
            if variant.together:
                requires.append("all of its excuses in the same turn")
            out.append(
                f"| `{variant.name}` | {TURN_KINDS[variant.when]} | {', '.join(variant.modes) or 'any'}"
                f" | {'<br>'.join(excuses)} | {'; '.join(requires) or '-'} | {variant.source} |"
            )
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def drift_tables(variants: Iterable[Variant] = VARIANTS) -> str:
    """One table per engine for docs/drift.md: each variant, what it excuses in fidelity (quoted), and
    what drift between two real versions makes of it (drift excuses nothing: a stderr line a variant
    names is only compared as that named line, so its paths and times do not count)."""
    chosen = list(variants)
    engines = sorted({engine for variant in chosen for engine in variant.engines})
    out: list[str] = []
    for engine in engines:
        out += [
            f"#### {engine}",
            "",
            "| variant | excuses in fidelity (quoted) | in `engines real drift` |",
            "| --- | --- | --- |",
        ]
        for variant in (v for v in chosen if engine in v.engines):
            lines = [e for e in variant.excuses if e.text.startswith(LINE_ONLY_IN_REAL)]
            others = [e for e in variant.excuses if not e.text.startswith(LINE_ONLY_IN_REAL)]
            quoted = [_code(e.text.removeprefix(LINE_ONLY_IN_REAL)) for e in lines]
            quoted += [_code(e.text) for e in others]
            if variant.derived is not None:
                quoted.append(variant.derived_text.replace("|", "\\|"))
            if lines:
                role = (
                    "each stderr line it names is compared as that line"
                    + (
                        " (paths, times and bodies in it do not count)"
                        if any(e.pattern for e in lines)
                        else ""
                    )
                    + "; a line it does not name is a change"
                )
            else:
                role = "nothing excused: the same difference between two versions is a change"
            out.append(f"| `{variant.name}` | {'<br>'.join(quoted)} | {role} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    import sys

    print(drift_tables() if sys.argv[1:] == ["--drift"] else markdown_tables(), end="")
