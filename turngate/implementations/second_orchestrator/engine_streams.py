"""Stream readers: one engine turn's raw stdout/stderr bytes -> a Transcript.

Each engine speaks its own format (ENGINE_FORMATS.md for the seed four; for claude, qwen,
kilo and codebuddy the fake engines' documentation and the real CLIs' recorded bytes). A
reader decides what counts as assistant reply content (the only place the done marker and the
output may come from), the session id to resume with, and whether the engine itself signalled
the end or failure of the turn. Readers never raise on hostile input: undecodable lines are skipped.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from .bugs import bug

MAX_DOC_CANDIDATES: Final = 200  # bounded search for gemini's JSON document among noise


@dataclass(frozen=True)
class Transcript:
    replies: tuple[str, ...]  # assistant reply messages in order; the last is the final message
    session_id: str | None
    ended: bool  # the engine's own end-of-turn signal was seen
    failed: bool  # the engine reported the turn as failed
    error: str | None = None


def _lines(data: bytes, guard: int | None = None) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for raw in data.splitlines():
        text = raw[:guard].decode("utf-8", "replace").strip()
        if not text.startswith("{"):
            continue
        try:
            row = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def read_codex(stdout: bytes, stderr: bytes) -> Transcript:
    replies: list[str] = []
    session: str | None = None
    ended = failed = False
    error: str | None = None
    for row in _lines(stdout):
        kind = row.get("type")
        if kind == "thread.started":
            session = _str(row.get("thread_id")) or session
        elif kind in ("item.completed", "item.updated"):
            item = row.get("item")
            if not isinstance(item, dict) or kind != "item.completed":
                continue
            item_type = item.get("type", item.get("item_type"))
            if item_type in ("agent_message", "assistant_message"):
                text = _str(item.get("text"))
                if text is not None:
                    replies.append(text)
            elif item_type == "reasoning" and bug("marker_in_reasoning"):
                replies.append(_str(item.get("text")) or "")
            elif item_type == "command_execution" and bug("marker_in_tool_output"):
                replies.append(_str(item.get("aggregated_output")) or "")
        elif kind == "turn.completed":
            ended = True
        elif kind == "turn.failed":
            failed = True
            err = row.get("error")
            error = _str(err.get("message")) if isinstance(err, dict) else "turn failed"
        elif "msg" in row and isinstance(row["msg"], dict):  # legacy envelope of older builds
            msg = row["msg"]
            mtype = msg.get("type")
            if mtype == "session_configured":
                session = _str(msg.get("session_id")) or session
            elif mtype == "agent_message":
                text = _str(msg.get("message"))
                if text is not None:
                    replies.append(text)
            elif mtype == "agent_reasoning" and bug("marker_in_reasoning"):
                replies.append(_str(msg.get("text")) or "")
            elif mtype == "task_complete":
                ended = True
            elif mtype == "error":
                failed = True
                error = _str(msg.get("message"))
    return Transcript(tuple(replies), session, ended and not failed, failed, error)


def _gemini_document(data: bytes) -> dict[str, Any] | None:
    """The json-mode document: the first JSON object with gemini's keys, after any noise."""
    text = data.decode("utf-8", "replace")
    decoder = json.JSONDecoder()
    start = text.find("{")
    tries = 0
    while start != -1 and tries < MAX_DOC_CANDIDATES:
        tries += 1
        try:
            doc, _ = decoder.raw_decode(text, start)
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            doc = None
        if isinstance(doc, dict) and ({"session_id", "response", "error"} & doc.keys()):
            return doc
        start = text.find("{", start + 1)
    return None


def read_gemini_json(stdout: bytes, stderr: bytes) -> Transcript:
    doc = _gemini_document(stdout) or _gemini_document(stderr)
    if doc is None:
        return Transcript((), None, False, False)
    session = _str(doc.get("session_id"))
    if doc.get("error"):
        err = doc["error"]
        message = _str(err.get("message")) if isinstance(err, dict) else str(err)
        return Transcript((), session, False, True, message)
    response = _str(doc.get("response"))
    return Transcript((response,) if response else (), session, True, False)


def read_gemini_stream(stdout: bytes, stderr: bytes) -> Transcript:
    replies: list[str] = []
    current: list[str] | None = None  # deltas of the assistant message being streamed
    session: str | None = None
    ended = failed = False
    error: str | None = None
    for row in _lines(stdout):
        kind = row.get("type")
        if kind == "init":
            session = _str(row.get("session_id")) or session
        elif kind == "message":
            role = row.get("role")
            content = _str(row.get("content")) or ""
            if role == "assistant" or (role == "user" and bug("marker_from_prompt_echo")):
                if current is None:
                    current = []
                    replies.append("")
                if bug("gemini_stream_last_chunk_only"):
                    current[:] = [content]
                else:
                    current.append(content)
                replies[-1] = "".join(current)
                continue
        elif kind == "result":
            if row.get("status") == "success":
                ended = True
            else:
                failed = True
                err = row.get("error")
                error = _str(err.get("message")) if isinstance(err, dict) else "result error"
        elif kind == "error" and row.get("severity", "error") == "error":
            error = _str(row.get("message")) or error
        current = None  # any other event closes the assistant message being streamed
    return Transcript(tuple(replies), session, ended, failed, error)


EXEC_INFO: Final = re.compile(r"<Execution Info>(.*?)</Execution Info>", re.S)
RESUMING: Final = re.compile(r"^Resuming session [^\n]*\n?", re.M)


def read_iflow(stdout: bytes, stderr: bytes) -> Transcript:
    out = stdout.decode("utf-8", "replace")
    err = stderr.decode("utf-8", "replace")
    session: str | None = None
    ended = False
    for block in EXEC_INFO.findall(out) + EXEC_INFO.findall(err):
        ended = True
        try:
            info = json.loads(block.strip())
        except (ValueError, RecursionError):  # RecursionError: hostile nesting
            continue
        if isinstance(info, dict):
            session = _str(info.get("session-id")) or session
    text = RESUMING.sub("", EXEC_INFO.sub("", out)).strip()
    failed = not ended and "Error:" in err
    error = next((line for line in err.splitlines() if line.startswith("Error:")), None)
    return Transcript((text,) if text else (), session, ended, failed, error if failed else None)


def read_opencode(stdout: bytes, stderr: bytes) -> Transcript:
    step_texts: list[str] = []  # the text parts of the current step
    replies: list[str] = []  # every text part of the turn (marker evidence)
    final: list[str] = []  # the text of the last step that had text (the reply)
    session: str | None = None
    ended = failed = False
    error: str | None = None
    for row in _lines(stdout):
        session = _str(row.get("sessionID")) or session
        kind = row.get("type")
        part = row.get("part") if isinstance(row.get("part"), dict) else {}
        assert isinstance(part, dict)
        if kind == "step_start":
            step_texts = []
        elif kind == "text" or (kind == "reasoning" and bug("marker_in_reasoning")):
            text = _str(part.get("text")) if "text" in part else _str(row.get("text"))
            if text is not None:
                step_texts.append(text)
                replies.append(text)
                final = list(step_texts)
        elif kind == "step_finish":
            if part.get("reason") == "stop":
                ended = True
        elif kind == "error":
            failed = True
            err = row.get("error")
            data = err.get("data") if isinstance(err, dict) else None
            error = _str(data.get("message")) if isinstance(data, dict) else "error"
    if final and replies:
        replies = [*replies, "\n".join(final)] if len(final) > 1 else replies
    return Transcript(tuple(replies), session, ended and not failed, failed, error)


def read_kilo(stdout: bytes, stderr: bytes) -> Transcript:
    """kilo ``run --format json``: opencode's events (kilo is its fork), one turn per process.

    A step is ``step_start`` … ``step_finish``; the turn has ended when its last step finished
    for any reason but ``tool-calls`` (after which the model is asked again): ``stop``, and
    also ``other``, which kilo 7.7.x gives a cut answer it then exits 0 on. Every text
    part is assistant content; the reply is the text of the last step that had any. An
    ``error`` line fails the turn, its ``error`` an object or a plain string, and a text part
    printed after it (the answer a cut request left) changes nothing.
    """
    steps: list[list[str]] = []  # the text parts of each step, in order
    replies: list[str] = []
    session: str | None = None
    ended = failed = False
    error: str | None = None
    for row in _lines(stdout):
        session = session or _str(row.get("sessionID"))
        kind = row.get("type")
        raw_part = row.get("part")
        part: dict[str, Any] = raw_part if isinstance(raw_part, dict) else {}
        if kind == "step_start":
            steps.append([])
            ended = False
        elif kind == "text":
            text = _str(part.get("text"))
            if text is None:
                continue
            if not steps:
                steps.append([])
            steps[-1].append(text)
            replies.append(text)
        elif kind == "step_finish":
            reason = part.get("reason")
            if bug("kilo_stop_reason_only"):
                ended = reason == "stop"
            elif bug("kilo_tool_step_ends_turn"):
                ended = True
            else:
                ended = reason != "tool-calls"
        elif kind == "error":
            failed = True
            error = _kilo_error(row.get("error"))
    last = next((texts for texts in reversed(steps) if texts), [])
    if bug("kilo_all_steps_reply"):
        last = [text for texts in steps for text in texts]
    if len(last) > 1:
        replies.append("\n".join(last))  # the last step's parts, one reply
    return Transcript(tuple(replies), session, ended and not failed, failed, error)


def _kilo_error(err: object) -> str:
    if isinstance(err, str):
        return err
    if isinstance(err, dict):
        data = err.get("data")
        if isinstance(data, dict) and isinstance(data.get("message"), str):
            return str(data["message"])
        return _str(err.get("name")) or "error"
    return "error"


SDK_SUCCESS: Final = ("success",)
SDK_LINE_GUARD: Final = 4096


def read_sdk_stream(engine: str, stdout: bytes, stderr: bytes) -> Transcript:
    """claude, qwen and codebuddy ``--output-format stream-json``: Agent-SDK messages.

    ``system``/``init`` opens a turn and names the session; each ``assistant`` event carries
    content blocks, whose ``text`` blocks are the replies (``thinking`` and ``tool_use`` are
    not); ``user`` events are tool results; ``result`` ends the turn. The ``result`` fails it
    when ``is_error`` is true (claude says ``subtype: success`` even then) or its subtype is not
    ``success``. ``result.result`` normally repeats the last reply and is then not counted again;
    when it differs (codebuddy may print a reply nowhere else) it is the last reply, and a
    ``structured_output`` object (``--json-schema``) is the reply after it. A bare ``error``
    line (codebuddy's unknown session, exit 0) fails the turn. Keys are found by name, never by
    position: claude prints ``type`` late in its ``result``.
    """
    replies: list[str] = []
    session: str | None = None
    init_session: str | None = None
    ended = failed = False
    error: str | None = None
    from_result_only = engine == "claude" and bug("claude_reply_from_result_only")
    for row in _lines(stdout, SDK_LINE_GUARD if bug("sdk_lines_cut_at_4096") else None):
        kind = row.get("type")
        session = session or _str(row.get("session_id"))
        if kind == "system" and row.get("subtype") == "init":
            init_session = init_session or _str(row.get("session_id"))
        elif kind == "assistant" and not from_result_only:
            replies += _sdk_texts(row.get("message"))
        elif kind == "result":
            ended = True
            if _sdk_result_failed(engine, row):
                failed = True
                error = _sdk_error(row)
                continue
            text = _str(row.get("result"))
            if engine == "codebuddy" and bug("codebuddy_result_text_ignored"):
                text = None
            if text and text.strip() and (not replies or replies[-1].strip() != text.strip()):
                replies.append(text)
            structured = row.get("structured_output")
            if isinstance(structured, dict):
                replies.append(json.dumps(structured, ensure_ascii=False))
        elif kind == "error":
            failed = True
            err = row.get("error")
            error = err if isinstance(err, str) else _sdk_error(row)
    return Transcript(tuple(replies), init_session or session, ended and not failed, failed, error)


def _sdk_result_failed(engine: str, row: dict[str, Any]) -> bool:
    subtype_failed = row.get("subtype") not in SDK_SUCCESS
    # the result only ends the turn; the exit code is left to say how it went
    if engine == "qwen" and bug("qwen_error_result_ignored"):
        return False
    if engine == "codebuddy" and bug("codebuddy_error_result_ignored"):
        return False
    if engine == "claude" and bug("claude_is_error_ignored"):
        return subtype_failed
    return row.get("is_error") is True or subtype_failed


def _sdk_blocks(message: object) -> list[dict[str, Any]]:
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [block for block in content if isinstance(block, dict)]
    return []


def _sdk_texts(message: object) -> list[str]:
    texts: list[str] = []
    for block in _sdk_blocks(message):
        text = _str(block.get("text")) if block.get("type") == "text" else None
        if text is not None:
            texts.append(text)
    return texts


def _sdk_error(row: dict[str, Any]) -> str:
    errors = row.get("errors")
    if isinstance(errors, list) and errors and isinstance(errors[0], str):
        return errors[0]
    err = row.get("error")
    if isinstance(err, dict) and isinstance(err.get("message"), str):
        return str(err["message"])
    return _str(row.get("result")) or _str(row.get("subtype")) or "error"


def read(engine: str, gemini_format: str, stdout: bytes, stderr: bytes) -> Transcript:
    if engine == "codex":
        return read_codex(stdout, stderr)
    if engine == "gemini":
        if gemini_format == "stream-json":
            return read_gemini_stream(stdout, stderr)
        return read_gemini_json(stdout, stderr)
    if engine == "iflow":
        return read_iflow(stdout, stderr)
    if engine == "opencode":
        return read_opencode(stdout, stderr)
    if engine == "kilo":
        return read_kilo(stdout, stderr)
    if engine in ("claude", "qwen", "codebuddy"):
        return read_sdk_stream(engine, stdout, stderr)
    raise ValueError(f"unknown engine {engine!r}")
