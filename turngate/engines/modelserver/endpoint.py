"""The scripted model server: a threaded HTTP server on 127.0.0.1 that answers real CLIs from turn scripts.

Plain ``http.server`` rather than starlette/uvicorn: the server runs inside
the runner's process and inside tests as one daemon thread, its answers are
short and written at once (no async streaming to schedule), and the stdlib
server starts in milliseconds without an event loop.

Every request is logged as one JSON line (``log``): the path, the protocol,
the case, turn and round it was placed at, the status and kind of the
answer, and the request body as the CLI sent it, so what a CLI told the
model (the prompt with the patched SKILL.md, a resumed history) is on file.

Nothing here answers with a 5xx unless a script's ``model_error`` step asks
for one (gemini and opencode retry those for minutes; the launchers bound the
retries where the CLI lets them: turngate/engines/real/retries.py). A
request the server cannot place (bad JSON, no case token, no script, a turn
past the script's end, a tool the CLI did not declare) is a 4xx whose
message says why, which the CLI prints.
"""

from __future__ import annotations

import contextlib
import functools
import json
import shlex
import socket
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import ModuleType
from typing import Any, Final, Literal

from turngate.engines.fake import script as scripts
from turngate.engines.fake.problems import ScriptProblem
from turngate.engines.modelserver import anthropic_messages, chat_completions, gemini_api, openai_responses
from turngate.engines.modelserver.answer import Answer, json_answer
from turngate.engines.modelserver.calls import STRUCTURED_OUTPUT, structured_payload, write_call
from turngate.engines.modelserver.conversation import Position, case_of, position, working_directory
from turngate.engines.modelserver.reply import Call, Declared, Reply
from turngate.engines.modelserver.rounds import Fault, Round, ToolCall, rounds_of
from turngate.engines.modelserver.toolargs import MissingTool, pick_shell_tool, shell_arguments

MAX_BODY_BYTES: Final = 64 * 1024 * 1024
CUT_STYLES: Final = ("ended", "dropped")
CutStyle = Literal["ended", "dropped"]
FOLLOW_UP: Final = "Done."  # the model's answer after its StructuredOutput call
WORKDIR_OUTPUTS: Final = ".turngate-tool-outputs"  # under the CLI's working directory (outputs_in_workdir)
STOP_POLL_SEC: Final = 0.02  # how often the serving loop looks whether stop() was asked


@dataclass(frozen=True, slots=True)
class Placed:
    """A conversation request, placed in its script."""

    case: str
    where: Position
    step: Round
    follow_up: bool = False  # the answer after a StructuredOutput call, past the turn's rounds


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
    # Write tool outputs under the CLI's working directory (as its request names it) instead of
    # `data`, for CLIs configured to refuse files outside it (Skill-Runner's kilo config).
    outputs_in_workdir: bool = False
    # Scripted tools of these names are called by their own name, with the script's input, when the
    # CLI declares them (exploration: codex's request_user_input, an MCP tool); others are shell calls.
    named_tools: frozenset[str] = frozenset()
    # How a model_error cut ends the answer: "ended", the response body ends without the protocol's
    # end-of-answer event (what the fake engines' cut was observed against); "dropped", the connection
    # is closed in the middle of the body (a network drop).
    cut_style: CutStyle = "ended"
    _server: _QuietServer | None = field(default=None, init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _counter: int = field(default=0, init=False, repr=False)
    _sequence: int = field(default=0, init=False, repr=False)
    _failed: dict[tuple[str, int, int], int] = field(default_factory=dict, init=False, repr=False)

    @property
    def url(self) -> str:
        assert self._server is not None, "start() first"
        return f"http://{self.host}:{self._server.server_address[1]}"

    def __post_init__(self) -> None:
        if self.cut_style not in CUT_STYLES:
            raise ValueError(f"cut_style: {self.cut_style!r}: one of {', '.join(CUT_STYLES)}")

    def start(self) -> ModelServer:
        self.data.mkdir(parents=True, exist_ok=True)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        server = _QuietServer((self.host, self.port), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        # stop() waits for the loop to look at its flag again: every 0.5 s by default, half a second
        # of every stop (a run of the catalog on a real CLI stops one server per case).
        serve = functools.partial(server.serve_forever, poll_interval=STOP_POLL_SEC)
        threading.Thread(target=serve, name="turngate-modelserver", daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stopped = True
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
                answer, placed = self._answer(protocol, module, body)
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
        self, protocol: str, module: ModuleType, body: Mapping[str, Any]
    ) -> tuple[Answer, Placed | None]:
        if protocol == "anthropic_count":
            return anthropic_messages.count_tokens(body), None
        if module is gemini_api and gemini_api.is_side_request(body):
            return gemini_api.side_answer(body), None
        if module is chat_completions and chat_completions.is_title_request(body):
            return chat_completions.title_answer(body, self._id), None
        if module is chat_completions and chat_completions.is_side_agent(body):
            return chat_completions.side_agent_answer(body, self._id), None
        if module is anthropic_messages and anthropic_messages.is_side_request(body):
            return anthropic_messages.side_answer(body, self._id), None
        placed = self._place(body, module)
        step = placed.step
        if step.delay:
            time.sleep(step.delay)  # the model answering slowly (a sleep step before the answer)
        if step.fault is not None and self._fails(placed):
            return self._fault(module, body, step.fault), placed
        if step.error is not None:
            return module.error(400, step.error), placed
        try:
            reply, kind = self._reply(module, body, placed)
        except MissingTool as problem:
            raise Unplaceable(str(problem)) from None
        answer: Answer = module.render(body, reply, self._id)
        return replace(answer, kind=kind), placed

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
            if module.last_call(body) == STRUCTURED_OUTPUT:
                # The CLI asks again after the model's StructuredOutput call (codebuddy does): a short
                # closing line. Never an empty one: codebuddy 2.118.2 re-asks an empty answer until
                # its 500-turn limit.
                return Placed(case, where, Round(text=((FOLLOW_UP,),)), follow_up=True)
            raise Unplaceable(
                f"case {case}: turn {where.turn + 1}: round {where.round + 1}:"
                f" the turn has {len(rounds)} rounds"
            )
        return Placed(case, where, rounds[where.round])

    def _fails(self, placed: Placed) -> bool:
        """Whether this attempt at a faulty round fails: every attempt, or (``recovers``) the first
        ``retries`` ones. The count is kept per case, turn and round, and starts again once an
        attempt got through, so the next CLI playing the same script (drift: the other version)
        meets the same faults."""
        fault = placed.step.fault
        assert fault is not None
        if not fault.recovers:
            return True
        key = (placed.case, placed.where.turn, placed.where.round)
        with self._lock:
            failed = self._failed.get(key, 0)
            if failed < fault.retries:
                self._failed[key] = failed + 1
                return True
            self._failed.pop(key, None)
            return False

    def _fault(self, module: ModuleType, body: Mapping[str, Any], fault: Fault) -> Answer:
        if fault.status is None:  # a cut: what the model had streamed, then the connection goes
            answer: Answer = module.render(body, Reply(fault.thinking, fault.text, cut=True), self._id)
            return replace(answer, dropped=fault.dropped)
        message = fault.message or HTTPStatus(fault.status).phrase
        refused: Answer = module.error(fault.status, message)
        # One second: kilo honours retry-after, and a short wait keeps a hazard turn short.
        headers = (("retry-after", "1"),) if fault.status == 429 else ()
        return replace(refused, kind="fault", headers=headers)

    def _reply(self, module: ModuleType, body: Mapping[str, Any], placed: Placed) -> tuple[Reply, str]:
        step = placed.step
        if placed.follow_up:
            return Reply(text=step.text), "after_structured_output"
        declared: list[Declared] = module.declared_tools(body)
        if step.tool is not None:
            call = self._tool_call(module, step.tool, declared, placed, body)
            return Reply(step.thinking, step.text, call), "round"
        if step.change is not None:
            call = write_call(step.change, declared, working_directory(body))
            return Reply(step.thinking, step.text, call), "round"
        payload = structured_payload(step, declared)
        if payload is not None:
            return Reply(step.thinking, (), Call(STRUCTURED_OUTPUT, payload)), "structured_output"
        return Reply(step.thinking, step.text), "round"

    def _tool_call(
        self,
        module: ModuleType,
        tool: ToolCall,
        declared: list[Declared],
        placed: Placed,
        body: Mapping[str, Any],
    ) -> Call:
        if tool.name in self.named_tools:
            known = next((d for d in declared if d.name == tool.name and not d.search), None)
            if known is not None:
                return Call(tool.name, dict(tool.input), namespace=known.namespace)
            deferred = any(d.search for d in declared) and not (
                module is openai_responses and openai_responses.searched(body)
            )
            if deferred:  # behind the CLI's tool search (codex's MCP tools): search for it first, once
                return Call("tool_search", {"query": tool.name, "limit": 8}, search=True)
        shell = pick_shell_tool(declared)
        return Call(shell.name, shell_arguments(shell.schema, self._command_for(tool, placed, body)))

    def _command_for(self, tool: ToolCall, placed: Placed, body: Mapping[str, Any]) -> str:
        """``cat`` of a file holding the scripted output (``; exit N`` for a failed tool): the output is
        the CLI's real echo, and the marker it may hold never appears in the command itself."""
        name = f"t{placed.where.turn + 1}-r{placed.where.round + 1}.out"
        if self.outputs_in_workdir:
            # Inside the CLI's working directory, named relative to it: kilo denies reading outside
            # it (external_directory), and claude blocks `cat` of a file outside its cwd.
            workdir = working_directory(body)
            if workdir is None:
                raise Unplaceable("tool outputs go into the working directory, and the request names none")
            relative = f"{WORKDIR_OUTPUTS}/{placed.case}/{name}"
            output = Path(workdir) / relative
            shown = relative
        else:
            output = self.data / "tool-outputs" / placed.case / name
            shown = str(output.resolve())
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(tool.output, encoding="utf-8")
        command = f"cat {shlex.quote(shown)}"
        return command if tool.exit_code == 0 else f"{command}; exit {tool.exit_code}"

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
            "waited": placed.step.delay if placed and placed.step.delay else None,  # a sleep step's pause
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


class _QuietServer(ThreadingHTTPServer):
    """A CLI that hangs up (a keep-alive connection it resets, a stream it stops reading after a cut,
    a process killed mid-request) is ordinary here: no traceback on the runner's stderr. So is a
    request still being answered when the server was stopped (a `sleep` step's answer, its CLI killed
    by the turn watchdog): its case is over, and its folder, the log among it, may be gone. Anything
    else a request breaks is one line there, naming the client and the error."""

    stopped = False  # set by ModelServer.stop()

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if self.stopped or isinstance(error, ConnectionError | TimeoutError):
            return
        sys.stderr.write(f"turngate model server: request from {client_address[0]}: {error!r}\n")


def _protocol_of(route: str) -> tuple[str, ModuleType | None]:
    if route.endswith("/messages/count_tokens"):
        return "anthropic_count", anthropic_messages
    if route.endswith("/messages"):
        return "anthropic", anthropic_messages
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


def _write(handler: BaseHTTPRequestHandler, answer: Answer, cut_style: CutStyle = "ended") -> None:
    dropped = answer.cut and (answer.dropped or cut_style == "dropped")
    handler.send_response(answer.status)
    handler.send_header("Content-Type", answer.content_type)
    for name, value in answer.headers:
        handler.send_header(name, value)
    if answer.content_type == "text/event-stream":
        handler.send_header("Cache-Control", "no-cache")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        for piece in answer.chunks:
            handler.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            handler.wfile.flush()
        if not dropped:
            handler.wfile.write(b"0\r\n\r\n")  # an ended cut: the body ends, no end-of-answer event in it
    else:
        data = b"".join(answer.chunks)
        sent = data[: len(data) // 2] if answer.cut else data  # a cut document: its first half
        handler.send_header("Content-Length", str(len(data) if dropped else len(sent)))
        handler.end_headers()
        handler.wfile.write(sent)
    handler.wfile.flush()
    if dropped:
        # The body never ends: the connection is closed under the client, as a network drop does (the
        # CLI sees "terminated", "ECONNRESET", "error decoding response body").
        handler.close_connection = True
        with contextlib.suppress(OSError):  # the client may have gone already
            handler.connection.shutdown(socket.SHUT_RDWR)


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
            _write(self, answer, server.cut_style)

        do_POST = do_GET = _serve

        def log_message(self, format: str, *args: Any) -> None:
            pass  # the JSON Lines log is the record

    return Handler
