"""The scripted model server: a threaded HTTP server on 127.0.0.1 that answers real CLIs from turn scripts.

Plain ``http.server`` rather than starlette/uvicorn: the server runs inside
the runner's process and inside tests as one daemon thread, its answers are
short and written at once (no async streaming to schedule), and the stdlib
server starts in milliseconds without an event loop.

Every request is logged as one JSON line (``log``): the path, the protocol,
the case, turn and round it was placed at, the status and kind of the
answer, and the request body as the CLI sent it, so what a CLI told the
model (the prompt with the patched SKILL.md, a resumed history) is on file.

Nothing here answers with a 5xx: gemini and opencode retry those for
minutes. A request the server cannot place (bad JSON, no case token, no
script, a turn past the script's end) is a 4xx whose message says why, which
the CLI prints.
"""

from __future__ import annotations

import json
import shlex
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, Final

from turngate.engines.fake import script as scripts
from turngate.engines.fake.problems import ScriptProblem
from turngate.engines.modelserver import chat_completions, gemini_api, openai_responses
from turngate.engines.modelserver.answer import Answer, json_answer
from turngate.engines.modelserver.conversation import Position, case_of, position
from turngate.engines.modelserver.rounds import Round, ToolCall, rounds_of
from turngate.engines.modelserver.toolargs import NoShellTool

MAX_BODY_BYTES: Final = 64 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Placed:
    """A conversation request, placed in its script."""

    case: str
    where: Position
    step: Round


class Unplaceable(ValueError):
    """The request cannot be answered from a script; the message says why (sent back as a 4xx)."""


@dataclass
class ModelServer:
    """Serve ``scripts`` (the fake engines' case folder) to real CLIs; log requests to ``log``."""

    scripts: Path
    log: Path
    data: Path  # tool outputs the CLIs `cat` are written here
    host: str = "127.0.0.1"
    port: int = 0
    _server: ThreadingHTTPServer | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _counter: int = field(default=0, init=False, repr=False)
    _sequence: int = field(default=0, init=False, repr=False)

    @property
    def url(self) -> str:
        assert self._server is not None, "start() first"
        return f"http://{self.host}:{self._server.server_address[1]}"

    def start(self) -> ModelServer:
        self.data.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        server = ThreadingHTTPServer((self.host, self.port), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        threading.Thread(target=server.serve_forever, name="turngate-modelserver", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # One request --------------------------------------------------------------------------------

    def handle(self, method: str, path: str, raw: bytes) -> Answer:
        """The answer to one request; logs it. Pure but for the log, the counters and tool files."""
        route = path.split("?", 1)[0]
        protocol, module = _protocol_of(route)
        placed: Placed | None = None
        body: Any = None
        try:
            if method != "POST" or module is None:
                answer = json_answer(
                    404, {"error": {"message": f"{method} {route}: not a model endpoint"}}, "refused"
                )
            else:
                body = _json_body(raw)
                answer, placed = self._answer(protocol, module, body, route)
        except Unplaceable as problem:
            answer = (module or openai_responses).error(400, f"turngate model server: {problem}")
        self._write_log(
            method,
            path,
            protocol,
            placed,
            answer,
            body if body is not None else raw[:4096].decode("utf-8", "replace"),
        )
        return answer

    def _answer(
        self, protocol: str, module: ModuleType, body: Mapping[str, Any], route: str
    ) -> tuple[Answer, Placed | None]:
        if module is gemini_api and gemini_api.is_side_request(body):
            return gemini_api.side_answer(body), None
        if module is chat_completions and chat_completions.is_title_request(body):
            return chat_completions.title_answer(body, self._id), None
        placed = self._place(body, module)
        try:
            answer: Answer = module.answer(body, placed.step, self._id, self._command_writer(placed))
        except NoShellTool as problem:
            raise Unplaceable(str(problem)) from None
        return answer, placed

    def _place(self, body: Mapping[str, Any], module: ModuleType) -> Placed:
        case = case_of(json.dumps(body, ensure_ascii=False))
        if case is None:
            raise Unplaceable("no tg-case-<id> token in the conversation")
        try:
            compiled = scripts.load(scripts.find(str(self.scripts), case), None)
        except ScriptProblem as problem:
            raise Unplaceable(problem.line("modelserver")) from None
        where = position(module.entries(body))
        turns = compiled["turns"]
        if where.turn >= len(turns):
            raise Unplaceable(f"case {case}: turn {where.turn + 1}: the script has {len(turns)} turns")
        rounds = rounds_of(turns[where.turn])
        if where.round >= len(rounds):
            raise Unplaceable(
                f"case {case}: turn {where.turn + 1}: round {where.round + 1}:"
                f" the turn has {len(rounds)} rounds"
            )
        return Placed(case, where, rounds[where.round])

    def _command_writer(self, placed: Placed) -> Callable[[ToolCall], str]:
        def command_for(call: ToolCall) -> str:
            folder = self.data / "tool-outputs" / placed.case
            folder.mkdir(parents=True, exist_ok=True)
            output = folder / f"t{placed.where.turn + 1}-r{placed.where.round + 1}.out"
            output.write_text(call.output, encoding="utf-8")
            command = f"cat {shlex.quote(str(output.resolve()))}"
            return command if call.exit_code == 0 else f"{command}; exit {call.exit_code}"

        return command_for

    def _id(self, prefix: str) -> str:
        with self._lock:
            self._counter += 1
            return f"{prefix}_tg{self._counter:06d}"

    def _write_log(
        self, method: str, path: str, protocol: str, placed: Placed | None, answer: Answer, body: Any
    ) -> None:
        line = {
            "time": round(time.time(), 3),
            "method": method,
            "path": path,
            "protocol": protocol,
            "case": placed.case if placed else None,
            "turn": placed.where.turn + 1 if placed else None,
            "round": placed.where.round + 1 if placed else None,
            "status": answer.status,
            "answer": answer.kind,
            "error": _error_message(answer),
            "body": body,
        }
        with self._lock:
            self._sequence += 1
            line = {"seq": self._sequence, **line}
            with self.log.open("a", encoding="utf-8") as out:
                out.write(json.dumps(line, ensure_ascii=False) + "\n")


def _protocol_of(route: str) -> tuple[str, ModuleType | None]:
    if route.endswith("/responses"):
        return "responses", openai_responses
    if route.endswith("/chat/completions"):
        return "chat_completions", chat_completions
    if ":generateContent" in route or ":streamGenerateContent" in route:
        return "gemini", gemini_api
    return "unknown", None


def _json_body(raw: bytes) -> Mapping[str, Any]:
    try:
        body = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as error:
        raise Unplaceable(f"request body: not JSON: {error}") from None
    if not isinstance(body, dict):
        raise Unplaceable(f"request body: a JSON {type(body).__name__}, not an object")
    return body


def _error_message(answer: Answer) -> str | None:
    if answer.status < 400:
        return None
    try:
        return str(json.loads(answer.chunks[0])["error"]["message"])
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _handler_for(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Keep-alive: the headers and each streamed chunk are separate writes, which Nagle would hold
        # for the client's delayed ACK (~40 ms each).
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            declared = self.headers.get("Content-Length") or "0"
            length = int(declared) if declared.isdigit() else -1
            if length < 0:
                message = f"Content-Length: {declared!r}: not a byte count"
                answer = json_answer(400, {"error": {"message": message}}, "refused")
                self.close_connection = True
            elif length > MAX_BODY_BYTES:
                answer = json_answer(
                    413, {"error": {"message": f"body of {length} bytes: limit {MAX_BODY_BYTES}"}}, "refused"
                )
                self.close_connection = True
            else:
                raw = self.rfile.read(length) if length else b""
                answer = server.handle(self.command, self.path, raw)
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            if answer.content_type == "text/event-stream":
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for piece in answer.chunks:
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
            else:
                data = b"".join(answer.chunks)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            self.wfile.flush()

        do_POST = do_GET = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the JSON Lines log is the record

    return Handler
