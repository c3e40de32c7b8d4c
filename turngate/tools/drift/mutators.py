"""Named drift mutators: small pure functions from a capture to a drifted capture.

Each mutator is what a real engine release has done (or could do) to its
output, and says what the spec makes of it:

- ``irrelevant``: the spec or the engine notes say the decision must not change
  (a documented variant, an echo, an unknown event, noise);
- ``flips``: the spec says the decision must change (the marker is no longer a
  marker, the turn never ended);
- ``unspecified``: the spec is silent (a field renamed to something no reader
  knows); drift reports the change, it does not judge it.

``aspect`` is what the claim is about: the whole ``decision`` (state and error
code) or only whether the done ``marker`` was found (escaping the marker twice
keeps it a marker, though the text around it stops being a JSON object).

A mutator returns None when it does not apply to a capture (no such event, the
wrong engine, nothing to drift).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal

from turngate.engines.readers import _bounded_json as bounded_json
from turngate.tools.drift.capture import Capture

Verdict = Literal["irrelevant", "flips", "unspecified"]
Aspect = Literal["decision", "marker"]

MARKER_PLAIN: Final = '"__SKILL_DONE__": true'
MARKER_JSONISH: Final = ('"__SKILL_DONE__": true', '"__SKILL_DONE__":true')


@dataclass(frozen=True, slots=True)
class Mutator:
    name: str
    summary: str
    verdict: Verdict
    aspect: Aspect
    source: str  # where the spec or the engine notes say so
    apply: Callable[[Capture], Capture | None]
    # Where one engine's format documents the drift: "engine" or "engine:reader-mode" (gemini:json).
    engine_verdicts: Mapping[str, Verdict] = field(default_factory=dict)

    def verdict_for(self, capture: Capture) -> Verdict:
        if capture.engine == "gemini":
            specific = self.engine_verdicts.get(f"gemini:{_gemini_mode(capture)}")
            if specific is not None:
                return specific
        return self.engine_verdicts.get(capture.engine, self.verdict)


# Line helpers ------------------------------------------------------------------------------------


def _with(capture: Capture, stream: str, data: bytes) -> Capture:
    """The capture with one stream's bytes replaced."""
    if stream == "stdout":
        return capture.with_streams(data, capture.stderr)
    return capture.with_streams(capture.stdout, data)


def _lines(data: bytes) -> list[bytes]:
    return data.splitlines(keepends=True)


def _obj(line: bytes) -> dict[str, Any] | None:
    try:  # bounded: a capture nested 10^5 deep is a line that is not an object, not a RecursionError
        value = bounded_json.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and NestingTooDeep included
        return None
    return value if isinstance(value, dict) else None


def _dump(value: Any, like: bytes) -> bytes:
    ending = b"\n" if like.endswith(b"\n") else b""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + ending


def _gemini_mode(capture: Capture) -> str:
    mode = capture.reader_options.get("mode")
    if mode:
        return str(mode)
    first = next((_obj(line) for line in _lines(capture.stdout) if _obj(line) is not None), None)
    return "stream-json" if first is not None and "type" in first else "json"


def _map_lines(data: bytes, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> bytes | None:
    """Apply ``change`` to each JSON line; None when no line changed."""
    changed = False
    out = []
    for line in _lines(data):
        record = _obj(line)
        new = change(json.loads(json.dumps(record))) if record is not None else None
        if new is not None and new != record:
            out.append(_dump(new, line))
            changed = True
        else:
            out.append(line)
    return b"".join(out) if changed else None


def _is_reply(engine: str, record: dict[str, Any]) -> bool:
    """A JSON line that carries the assistant's reply."""
    item = record.get("item")
    match engine:
        case "codex":
            return (
                record.get("type") == "item.completed"
                and isinstance(item, dict)
                and item.get("type") == "agent_message"
            ) or (isinstance(record.get("msg"), dict) and record["msg"].get("type") == "agent_message")
        case "opencode" | "kilo":
            return record.get("type") == "text"
        case "gemini":
            return (
                record.get("type") == "message" and record.get("role") == "assistant"
            ) or "response" in record
        case "claude" | "qwen" | "codebuddy":
            return bool(_text_blocks(record))
    return False


SDK_ENGINES: Final = ("claude", "qwen", "codebuddy")  # SDK messages: assistant, user, result events


def _text_blocks(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The text blocks of an `assistant` event (claude, qwen, codebuddy)."""
    message = record.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if record.get("type") != "assistant" or not isinstance(content, list):
        return []
    return [
        b
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _edit_sdk_reply(record: dict[str, Any], edit: Callable[[str], str]) -> dict[str, Any] | None:
    """Every reply text of an SDK-message line: the assistant's text blocks, and the `result` line's
    `result`, which repeats the last one (codebuddy at times prints a reply only there)."""
    changed = False
    for block in _text_blocks(record):
        new = edit(block["text"])
        changed |= new != block["text"]
        block["text"] = new
    if record.get("type") == "result" and isinstance(record.get("result"), str):
        new = edit(record["result"])
        changed |= new != record["result"]
        record["result"] = new
    return record if changed else None


def _edit_reply_text(capture: Capture, edit: Callable[[str], str]) -> Capture | None:
    """Apply ``edit`` to the assistant reply text, wherever this engine keeps it."""
    if capture.engine == "iflow":
        stdout = capture.stdout.decode("utf-8", "replace")
        head, tag, tail = stdout.partition("<Execution Info>")
        new = edit(head) + tag + tail
        return None if new == stdout else capture.with_streams(new.encode("utf-8"), capture.stderr)

    def change(record: dict[str, Any]) -> dict[str, Any] | None:
        if capture.engine in SDK_ENGINES:
            return _edit_sdk_reply(record, edit)
        if not _is_reply(capture.engine, record):
            return None
        for holder, key in (
            (record.get("item"), "text"),
            (record.get("msg"), "message"),
            (record.get("part"), "text"),
            (record, "text"),
            (record, "content"),
            (record, "response"),
        ):
            if isinstance(holder, dict) and isinstance(holder.get(key), str):
                holder[key] = edit(holder[key])
                return record
        return None

    for stream in ("stdout", "stderr"):
        data = getattr(capture, stream)
        if capture.engine == "gemini" and _gemini_mode(capture) == "json":
            new_data = _edit_gemini_document(data, edit)
        else:
            new_data = _map_lines(data, change)
        if new_data is not None:
            return _with(capture, stream, new_data)
    return None


def _json_objects(text: str) -> Iterator[tuple[int, int, dict[str, Any]]]:
    """Each JSON object in ``text`` (noise around it allowed): (start, end, object)."""
    start = text.find("{")
    while start != -1:
        try:
            document, end = bounded_json.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(document, dict):
            yield start, end, document
        start = text.find("{", end)


def _edit_gemini_document(data: bytes, edit: Callable[[str], str]) -> bytes | None:
    """The json-mode document (one line or pretty-printed after noise): edit ``response``."""
    text = data.decode("utf-8", "replace")
    for start, end, document in _json_objects(text):
        if isinstance(document.get("response"), str):
            if edit(document["response"]) == document["response"]:
                return None
            document["response"] = edit(document["response"])
            pretty = "\n" in text[start:end]
            dumped = json.dumps(document, ensure_ascii=False, indent=2 if pretty else None)
            return (text[:start] + dumped + text[end:]).encode("utf-8")
    return None


# The mutators ------------------------------------------------------------------------------------


def rename_text_to_content(capture: Capture) -> Capture | None:
    def change(record: dict[str, Any]) -> dict[str, Any] | None:
        if not _is_reply(capture.engine, record):
            return None
        blocks = _text_blocks(record)
        for block in blocks:  # claude, qwen, codebuddy: each text block's text
            block["content"] = block.pop("text")
        if blocks:
            return record
        for holder in (record.get("item"), record.get("part"), record):
            if isinstance(holder, dict) and "text" in holder:
                holder["content"] = holder.pop("text")
                return record
        if "response" in record:
            record["text"] = record.pop("response")
            return record
        return None

    if capture.engine == "iflow":
        return None
    stdout = _map_lines(capture.stdout, change)
    return None if stdout is None else capture.with_streams(stdout, capture.stderr)


_END_TYPES: Final = {
    "codex": ("turn.completed",),
    "opencode": ("step_finish",),
    "kilo": ("step_finish",),
    "gemini": ("result",),
    "claude": ("result",),
    "qwen": ("result",),
    "codebuddy": ("result",),
}


def drop_turn_end(capture: Capture) -> Capture | None:
    if capture.engine == "iflow":
        for stream in ("stderr", "stdout"):
            data = getattr(capture, stream)
            if b"</Execution Info>" in data:
                without = b"".join(line for line in _lines(data) if line.strip() != b"</Execution Info>")
                return _with(capture, stream, without)
        return None
    if capture.engine == "gemini" and _gemini_mode(capture) == "json":
        return None  # the document is the end of turn: without it there is nothing to read
    ends = _END_TYPES[capture.engine]
    lines = _lines(capture.stdout)
    kept = [
        line
        for line in lines
        if not ((record := _obj(line)) is not None and (record.get("type") in ends or _legacy_end(record)))
    ]
    return None if len(kept) == len(lines) else capture.with_streams(b"".join(kept), capture.stderr)


def _legacy_end(record: dict[str, Any]) -> bool:
    msg = record.get("msg")
    return isinstance(msg, dict) and msg.get("type") == "task_complete"


_UNKNOWN_EVENTS: Final[dict[str, dict[str, Any]]] = {
    "codex": {"type": "turn.diagnostics", "latency_ms": 812, "retries": 0},
    "opencode": {
        "type": "snapshot",
        "timestamp": 1763812800500,
        "part": {"type": "snapshot", "snapshot": "9f2c"},
    },
    "gemini": {"type": "thought_summary", "summary": "Planning the greeting."},
}
_UNKNOWN_EVENTS["kilo"] = _UNKNOWN_EVENTS["opencode"]  # kilo is opencode's fork: the same event stream
# claude, qwen, codebuddy: a system event of a subtype no reader knows (their SDKs add subtypes often),
# and an event type of its own (claude's rate-limit notice).
_UNKNOWN_EVENTS["claude"] = {"type": "rate_limit_event", "rate_limit_info": {"status": "allowed"}}
_UNKNOWN_EVENTS["qwen"] = {"type": "system", "subtype": "memory_saved", "data": {"files": 0}}
_UNKNOWN_EVENTS["codebuddy"] = {"type": "system", "subtype": "compact_boundary", "status": None}


def add_unknown_event(capture: Capture) -> Capture | None:
    """An event type this reader has never seen, just before the last line."""
    if capture.engine == "iflow" or (capture.engine == "gemini" and _gemini_mode(capture) == "json"):
        return None
    lines = _lines(capture.stdout)
    if not lines:
        return None
    event = dict(_UNKNOWN_EVENTS[capture.engine])
    if capture.engine in ("opencode", "kilo"):
        first = _obj(lines[0]) or {}
        event["sessionID"] = first.get("sessionID", "ses_unknown")
    if capture.engine in SDK_ENGINES:
        session = _sdk_session(lines)
        if session is not None:
            event["session_id"] = session
    lines.insert(len(lines) - 1, _dump(event, b"\n"))
    return capture.with_streams(b"".join(lines), capture.stderr)


def legacy_envelope(capture: Capture) -> Capture | None:
    """codex's older ``{"id","msg"}`` envelope for the same turn (docs/fake-engines.md, legacy_msg)."""
    if capture.engine != "codex":
        return None
    out: list[bytes] = []
    last_message = None
    converted = False
    for line in _lines(capture.stdout):
        record = _obj(line)
        if record is None or "msg" in record:
            out.append(line)
            continue
        msg = _legacy(record)
        if msg is None:
            continue
        converted = True
        if msg.get("type") == "agent_message":
            last_message = msg["message"]
        if msg.get("type") == "task_complete":
            msg["last_agent_message"] = last_message
        out.append(_dump({"id": "0", "msg": msg}, line))
    return capture.with_streams(b"".join(out), capture.stderr) if converted else None


def _legacy(record: dict[str, Any]) -> dict[str, Any] | None:
    item = record.get("item") if isinstance(record.get("item"), dict) else {}
    assert isinstance(item, dict)
    match record.get("type"), item.get("type"):
        case "thread.started", _:
            return {
                "type": "session_configured",
                "session_id": record.get("thread_id"),
                "model": "gpt-5-codex",
            }
        case "turn.started", _:
            return {"type": "task_started"}
        case "item.completed", "agent_message":
            return {"type": "agent_message", "message": item.get("text", "")}
        case "item.completed", "reasoning":
            return {"type": "agent_reasoning", "text": item.get("text", "")}
        case "item.started", "command_execution":
            return {
                "type": "exec_command_begin",
                "call_id": item.get("id"),
                "command": ["bash", "-lc", item.get("command", "")],
                "cwd": ".",
            }
        case "item.completed", "command_execution":
            output = item.get("aggregated_output", "")
            return {
                "type": "exec_command_end",
                "call_id": item.get("id"),
                "stdout": output,
                "stderr": "",
                "aggregated_output": output,
                "exit_code": item.get("exit_code", 0),
            }
        case "turn.completed", _:
            return {"type": "task_complete", "last_agent_message": None}
        case "turn.failed", _:
            error = record.get("error") if isinstance(record.get("error"), dict) else {}
            return {"type": "error", "message": (error or {}).get("message", "turn failed")}
        case "error", _:
            return {"type": "stream_error", "message": record.get("message", "")}
    return None  # events the legacy envelope never had (item.started of a message, todo lists…)


def iflow_block_other_stream(capture: Capture) -> Capture | None:
    """The execution-info block moved from stderr to stdout, or back (ENGINE_FORMATS.md, iflow)."""
    if capture.engine != "iflow":
        return None
    source, target = ("stderr", "stdout") if b"<Execution Info>" in capture.stderr else ("stdout", "stderr")
    data: bytes = getattr(capture, source)
    start = data.find(b"<Execution Info>")
    if start == -1:
        return None
    end = data.find(b"</Execution Info>", start)
    end = len(data) if end == -1 else data.index(b"\n", end) + 1 if b"\n" in data[end:] else len(data)
    block = data[start:end]
    rest = data[:start] + data[end:]
    moved: bytes = getattr(capture, target)
    if moved and not moved.endswith(b"\n"):
        moved += b"\n"
    return _with(_with(capture, source, rest), target, moved + block)


def glue_noise(capture: Capture) -> Capture | None:
    """A noise line with no newline, glued to the next line (gemini does this to its document)."""
    stream = "stdout"
    if capture.engine == "gemini" and _gemini_mode(capture) == "json" and b"{" not in capture.stdout:
        stream = "stderr"
    data = getattr(capture, stream)
    if capture.engine == "iflow" or not data:
        return None
    index = data.find(b"{")
    if index == -1:
        return None
    line_start = data.rfind(b"\n", 0, index) + 1
    noise = b"Loaded cached credentials."
    return _with(capture, stream, data[:line_start] + noise + data[line_start:])


def pretty_print(capture: Capture) -> Capture | None:
    """The reply's JSON document printed over many lines (gemini's json document: the other way round
    when it already is, since captures exist both ways)."""
    if capture.engine == "iflow":
        return None
    if capture.engine == "gemini" and _gemini_mode(capture) == "json":
        for stream in ("stdout", "stderr"):
            reshaped = _reshape_document(getattr(capture, stream))
            if reshaped is not None:
                return _with(capture, stream, reshaped)
        return None
    for stream in ("stdout", "stderr"):
        out = []
        changed = False
        for line in _lines(getattr(capture, stream)):
            record = _obj(line)
            if record is not None and not changed and _is_reply(capture.engine, record):
                out.append(json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8") + b"\n")
                changed = True
            else:
                out.append(line)
        if changed:
            return _with(capture, stream, b"".join(out))
    return None


def _reshape_document(data: bytes) -> bytes | None:
    """A JSON document on one line printed over many, or the other way round."""
    text = data.decode("utf-8", "replace")
    for start, end, document in _json_objects(text):
        pretty = "\n" in text[start:end]
        dumped = json.dumps(document, ensure_ascii=False, indent=None if pretty else 2)
        return (text[:start] + dumped + text[end:]).encode("utf-8")
    return None


def split_line(capture: Capture) -> Capture | None:
    """The reply line written in two writes: the same bytes, a pause in the middle of a line.

    Played by a fake engine the reader sees half a line first; replayed from bytes
    nothing changes, which is the point: a gate must not depend on write boundaries.
    """
    lines = _lines(capture.stdout)
    offset = 0
    for line in lines:
        if len(line) > 2:
            return replace(capture, splits=(*capture.splits, offset + len(line) // 2))
        offset += len(line)
    return None


def _rewrite_marker(capture: Capture, rewrite: Callable[[str], str]) -> Capture | None:
    """Rewrite each marker in the reply text (both spacings of ``"__SKILL_DONE__": true``)."""

    def edit(text: str) -> str:
        for marker in MARKER_JSONISH:
            text = text.replace(marker, rewrite(marker))
        return text

    return _edit_reply_text(capture, edit)


def escape_marker_twice(capture: Capture) -> Capture | None:
    """The reply quotes its JSON: the marker arrives escaped one level deeper."""
    return _rewrite_marker(capture, lambda marker: marker.replace('"', '\\"'))


def marker_true_as_string(capture: Capture) -> Capture | None:
    """``"__SKILL_DONE__": "true"``: a string, not the boolean the marker is."""
    return _rewrite_marker(capture, lambda marker: marker.replace("true", '"true"'))


_ECHO: Final = '{"greeting": "from the docs", "__SKILL_DONE__": true}'


def marker_in_tool_result(capture: Capture) -> Capture | None:
    """The marker appears in a tool's output (a command printing SKILL.md), before the reply."""
    events: list[dict[str, Any]]
    match capture.engine:
        case "codex":
            events = [
                {
                    "type": "item.completed",
                    "item": {
                        "id": "item_echo",
                        "type": "command_execution",
                        "command": "bash -lc 'cat SKILL.md'",
                        "aggregated_output": f"When done print {_ECHO}\n",
                        "exit_code": 0,
                        "status": "completed",
                    },
                }
            ]
        case "opencode" | "kilo":
            events = [
                {
                    "type": "tool_use",
                    "timestamp": 1763812800100,
                    "part": {
                        "id": "prt_echo",
                        "type": "tool",
                        "tool": "bash",
                        "state": {
                            "status": "completed",
                            "input": {"command": "cat SKILL.md"},
                            "output": _ECHO,
                        },
                    },
                }
            ]
        case "gemini" if _gemini_mode(capture) == "stream-json":
            events = [
                {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t_echo", "parameters": {}},
                {"type": "tool_result", "tool_id": "t_echo", "status": "success", "output": _ECHO},
            ]
        case "claude" | "qwen" | "codebuddy":
            # The shell tool's call and its result, as each prints them (corpus/<engine>/real-*-tool-echo).
            shell = {"claude": "Bash", "qwen": "run_shell_command", "codebuddy": "Bash"}[capture.engine]
            output: Any = _ECHO if capture.engine != "codebuddy" else [{"type": "text", "text": _ECHO}]
            call = {
                "type": "tool_use",
                "id": "call_echo",
                "name": shell,
                "input": {"command": "cat SKILL.md"},
            }
            result = {"type": "tool_result", "tool_use_id": "call_echo", "content": output, "is_error": False}
            events = [
                {"type": "assistant", "message": {"role": "assistant", "content": [call]}},
                {"type": "user", "message": {"role": "user", "content": [result]}},
            ]
        case _:
            return None
    return _insert_before_reply(capture, events)


def marker_in_reasoning(capture: Capture) -> Capture | None:
    """The model thinks about the marker before it answers."""
    thought = f"I must not print {_ECHO} until the user has chosen."
    events: list[dict[str, Any]]
    match capture.engine:
        case "codex":
            events = [
                {"type": "item.completed", "item": {"id": "item_think", "type": "reasoning", "text": thought}}
            ]
        case "opencode" | "kilo":
            events = [
                {
                    "type": "reasoning",
                    "timestamp": 1763812800200,
                    "part": {"type": "reasoning", "text": thought},
                }
            ]
        case "claude" | "qwen" | "codebuddy":
            block = {"type": "thinking", "thinking": thought}
            events = [{"type": "assistant", "message": {"role": "assistant", "content": [block]}}]
        case _:
            return None
    return _insert_before_reply(capture, events)


def marker_in_echoed_prompt(capture: Capture) -> Capture | None:
    """gemini stream-json echoes the user's prompt, which quotes the marker instruction."""
    if capture.engine != "gemini" or _gemini_mode(capture) != "stream-json":
        return None
    echo = {"type": "message", "role": "user", "content": f"When you are done, print {_ECHO}"}
    return _insert_before_reply(capture, [echo])


def _insert_before_reply(capture: Capture, events: list[dict[str, Any]]) -> Capture | None:
    lines = _lines(capture.stdout)
    session = next(((_obj(line) or {}).get("sessionID") for line in lines if _obj(line)), None)
    if capture.engine in ("opencode", "kilo") and session:
        events = [{**event, "sessionID": session} for event in events]
    sdk_session = _sdk_session(lines) if capture.engine in SDK_ENGINES else None
    if sdk_session is not None:
        events = [{**event, "session_id": sdk_session} for event in events]
    index = next(
        (
            i
            for i, line in enumerate(lines)
            if (record := _obj(line)) is not None and _is_reply(capture.engine, record)
        ),
        None,
    )
    if index is None:
        return None
    lines[index:index] = [_dump(event, b"\n") for event in events]
    return capture.with_streams(b"".join(lines), capture.stderr)


def _sdk_session(lines: list[bytes]) -> str | None:
    """The session id the first line naming one names (claude, qwen, codebuddy)."""
    for line in lines:
        session = (_obj(line) or {}).get("session_id")
        if isinstance(session, str):
            return session
    return None


def opencode_top_level_text(capture: Capture) -> Capture | None:
    """opencode's ``text`` at the top level instead of ``part.text`` (ENGINE_FORMATS.md, a known variant)."""
    if capture.engine != "opencode":
        return None

    def change(record: dict[str, Any]) -> dict[str, Any] | None:
        part = record.get("part")
        if record.get("type") == "text" and isinstance(part, dict) and "text" in part:
            record["text"] = part.pop("text")
            return record
        return None

    stdout = _map_lines(capture.stdout, change)
    return None if stdout is None else capture.with_streams(stdout, capture.stderr)


_ENGINE_NOTES: Final = "../shared/ENGINE_FORMATS.md"
_MARKER_RULE: Final = "003 done marker 检测兼容转义流文本; 000 Decision 3.1"

MUTATORS: Final[tuple[Mutator, ...]] = (
    Mutator(
        "rename-text-to-content",
        "the reply field renamed (text → content, response → text)",
        "unspecified",
        "decision",
        "no rule: the reply is no longer where the format puts it",
        rename_text_to_content,
    ),
    Mutator(
        "drop-turn-end",
        "the end-of-turn event is missing (turn.completed, step_finish, result, </Execution Info>)",
        "unspecified",
        "decision",
        "the spec is silent (000 Decision 1 names only an interrupted process); the reference's"
        " documented choice is ENGINE_TURN_INCOMPLETE (docs/reference-orchestrator.md)",
        drop_turn_end,
    ),
    Mutator(
        "add-unknown-event",
        "an event type the reader has never seen",
        "irrelevant",
        "decision",
        f"{_MARKER_RULE}: evidence comes only from the assistant reply",
        add_unknown_event,
    ),
    Mutator(
        "legacy-envelope",
        'codex events in the older {"id","msg"} envelope',
        "irrelevant",
        "decision",
        "docs/fake-engines.md, codex legacy_msg (a format a real codex build writes)",
        legacy_envelope,
    ),
    Mutator(
        "iflow-block-other-stream",
        "the iflow execution-info block on the other stream",
        "irrelevant",
        "decision",
        f"{_ENGINE_NOTES}, iflow: the block has been seen drifting to stdout",
        iflow_block_other_stream,
    ),
    Mutator(
        "glue-noise",
        "a noise line glued to the next line without a newline",
        "unspecified",
        "decision",
        f"{_ENGINE_NOTES}, gemini json: noise sometimes glued to the next line (documented for gemini only)",
        glue_noise,
        {"gemini:json": "irrelevant"},
    ),
    Mutator(
        "pretty-print",
        "the reply's JSON document printed over many lines",
        "unspecified",
        "decision",
        f"{_ENGINE_NOTES}, gemini json: the document may be pretty-printed (NDJSON engines never do)",
        pretty_print,
        {"gemini:json": "irrelevant"},
    ),
    Mutator(
        "split-line",
        "a line written in two writes",
        "irrelevant",
        "decision",
        "write boundaries are not in the bytes; a gate must read lines, not writes",
        split_line,
    ),
    Mutator(
        "escape-marker-twice",
        "the marker escaped one level deeper (the reply quotes JSON)",
        "irrelevant",
        "marker",
        f"{_MARKER_RULE}: plain and escaped marker text both count",
        escape_marker_twice,
    ),
    Mutator(
        "marker-true-as-string",
        '"__SKILL_DONE__": "true" (a string, not the boolean)',
        "flips",
        "marker",
        f'{_MARKER_RULE}: the marker is "__SKILL_DONE__": true',
        marker_true_as_string,
    ),
    Mutator(
        "marker-in-tool-result",
        "the marker in a tool's output",
        "irrelevant",
        "decision",
        f"{_MARKER_RULE}: tool echoes MUST NOT be evidence",
        marker_in_tool_result,
    ),
    Mutator(
        "marker-in-reasoning",
        "the marker in the model's reasoning",
        "irrelevant",
        "decision",
        f"{_MARKER_RULE}: evidence comes only from the assistant reply",
        marker_in_reasoning,
    ),
    Mutator(
        "marker-in-echoed-prompt",
        "the marker in the echoed user prompt (gemini stream-json)",
        "irrelevant",
        "decision",
        f"{_MARKER_RULE}: evidence comes only from the assistant reply",
        marker_in_echoed_prompt,
    ),
    Mutator(
        "opencode-top-level-text",
        "opencode's reply text at the top level instead of part.text",
        "irrelevant",
        "decision",
        f"{_ENGINE_NOTES}, opencode: some versions put text at the top level",
        opencode_top_level_text,
    ),
)

BY_NAME: Final = {mutator.name: mutator for mutator in MUTATORS}
