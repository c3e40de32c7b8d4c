"""Stream readers: one engine turn's raw stdout/stderr bytes -> a Transcript.

Each engine speaks its own format (ENGINE_FORMATS.md). A reader decides what counts as
assistant reply content (the only place the done marker and the output may come from), the
session id to resume with, and whether the engine itself signalled the end or failure of the
turn. Readers never raise on hostile input: undecodable lines are skipped.
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


def _lines(data: bytes) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for raw in data.splitlines():
        text = raw.decode("utf-8", "replace").strip()
        if not text.startswith("{"):
            continue
        try:
            row = json.loads(text)
        except ValueError:
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
        except ValueError:
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
        except ValueError:
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
    raise ValueError(f"unknown engine {engine!r}")
