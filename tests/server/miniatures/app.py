"""Miniature job-API servers: each reproduces one thing a real server (Skill-Runner at 7d8914d) does.

One small starlette app whose :class:`Behaviour` switches on the real-world
answers of ../shared/HTTP_API.md ("What the public Skill-Runner server does"):
an asynchronous install that can fail, a versioned reinstall, an engine
refused, pending answered 400 for auto jobs, null interaction ids, runtime
events in the history endpoint, 429 when full, credentials required, a runtime
patch in its own words that the fake codex reads from the run folder. A
connection reset is :class:`ResettingProxy`, in front of any of them. Served
by uvicorn on 127.0.0.1, port 0, in a thread.
"""

from __future__ import annotations

import asyncio
import io
import json
import shutil
import socket
import struct
import subprocess
import tempfile
import threading
import uuid
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route


@dataclass
class Behaviour:
    install: str = "sync"  # sync | async | async-fail
    versioned: bool = False  # refuse a reinstall at the same or a lower version
    engines: frozenset[str] = frozenset({"codex"})  # others: 400 SKILL_ENGINE_UNSUPPORTED
    pending_400_for_auto: bool = False
    null_interaction_ids: bool = False  # user.input.required with interaction_id null
    runtime_history: bool = False  # /events/history holds rasp events; FCMP only on the SSE stream
    full_for_first_jobs: int = 0  # answer 429 to this many POST /v1/jobs first
    token: str | None = None  # a Bearer token every request needs
    # Run the fake codex (launchers of `turngate engines install` in this folder) for every job, in a
    # run folder holding the skill's SKILL.md patched in this miniature's own words (PATCH_WORDS):
    # "seed" in the spec's module order, "mode-first" the mode module first, "none" the engine
    # gets no SKILL.md at all (the skill reaches it some other way).
    engine_bin: str | None = None
    patch: str = "seed"
    # Each attempt's audit record at /v1/management/runs/{job}/file?path=.audit/meta.N.json, as
    # Skill-Runner serves it: "agrees" with the run's course, "drifts" (finds a marker in a turn the
    # run waited after), or None (no such endpoint).
    audit: str | None = None
    # Where: "flat" .audit/meta.N.json (7d8914d to v0.6.0), "namespaced" .audit/<skill>.1/meta.N.json
    # (v0.7.9).
    audit_layout: str = "flat"
    # This many replies lead to another wait under the same pending id 1, as a server numbering its
    # waits by the engine's hint does when the engine repeats the hint's id (Skill-Runner 4cb89ba).
    waits_again: int = 0
    # The runtime options it accepts (POLICIES; any other is 400 "Unknown runtime_options: ...") and,
    # from "auto-reply" on, the events of Skill-Runner v0.4.0+: the run's end folded into
    # conversation.state.changed's terminal, interaction.reply.accepted, each event with its seq.
    dialect: str = "require-user-reply"
    # Engines whose jobs need a provider_id (Skill-Runner v0.7: 400 "provider_id is required ...").
    provider_required: frozenset[str] = frozenset()
    # A job given hard_timeout_seconds shows running once, then failed with this code, as a hung
    # engine ended by its per-job watchdog (None: the option is accepted and does nothing).
    hard_timeout_code: str | None = None


# A runtime patch in words that are not turngate's: each module recognisable only by what it says.
PATCH_WORDS: dict[str, str] = {
    "runtime-enforcement": "## Laufzeitregeln\n\nThese rules win. Emit `__SKILL_DONE__`: true when done.",
    "artifact-redirection": "## Dateiablage\n\nWrite these files under artifacts/:\n{artifacts}",
    "output-format-contract": "## Antwortformat\n\nYour final message is one JSON object and nothing else.",
    "output-schema": "## Felder\n\n{fields}",
    "auto-mode": "## Modus: selbstaendig\n\nNobody is there to answer: never ask.",
    "interactive-mode": "## Modus: im Gespraech\n\nA person may answer; ask one question at a time.",
}


# The runtime options a dialect's server accepts: Skill-Runner's options_policy.json at 7d8914d
# (server/assets/configs/), 8a0ec29 (v0.4.0) and ff4e1a0 (v0.4.3; server/config/policy/).
POLICIES: dict[str, frozenset[str]] = {
    "require-user-reply": frozenset(
        {
            "verbose",
            "no_cache",
            "debug",
            "debug_keep_temp",
            "execution_mode",
            "interactive_require_user_reply",
            "session_timeout_sec",
            "interactive_wait_timeout_sec",
            "hard_wait_timeout_sec",
            "wait_timeout_sec",
        }
    ),
    "auto-reply": frozenset(
        {"no_cache", "debug", "execution_mode", "interactive_auto_reply", "interactive_reply_timeout_sec"}
    ),
    "auto-reply-hard-timeout": frozenset(
        {
            "no_cache",
            "execution_mode",
            "interactive_auto_reply",
            "interactive_reply_timeout_sec",
            "hard_timeout_seconds",
        }
    ),
}


@dataclass
class Job:
    mode: str
    status: str
    events: list[dict[str, Any]] = field(default_factory=list)
    data: dict[str, Any] | None = None
    replies: int = 0
    runtime_options: dict[str, Any] = field(default_factory=dict)
    reads: int = 0
    skill: str = ""


class Miniature:
    """The app and what it has seen (for the tests' own assertions)."""

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.installed: dict[str, str] = {}  # skill id -> version
        self.packages: dict[str, dict[str, bytes]] = {}  # skill id -> its files (path in the package)
        self.installs: dict[str, dict[str, Any]] = {}
        self.jobs: dict[str, Job] = {}
        self.refused_jobs = 0
        self.job_requests: list[dict[str, Any]] = []
        self.app = Starlette(
            routes=[
                Route("/v1/skill-packages/install", self.install, methods=["POST"]),
                Route("/v1/skill-packages/{request_id}", self.install_status),
                Route("/v1/jobs", self.create, methods=["POST"]),
                Route("/v1/jobs/{job}", self.status),
                Route("/v1/jobs/{job}/interaction/pending", self.pending),
                Route("/v1/jobs/{job}/interaction/reply", self.reply, methods=["POST"]),
                Route("/v1/jobs/{job}/cancel", self.cancel, methods=["POST"]),
                Route("/v1/jobs/{job}/result", self.result),
                Route("/v1/jobs/{job}/events/history", self.history),
                Route("/v1/jobs/{job}/events", self.stream),
                Route("/v1/management/runs/{job}/file", self.run_file),
            ]
        )
        self.app.add_middleware(_Auth, miniature=self)

    # Skills ------------------------------------------------------------------------------

    async def install(self, request: Request) -> Response:
        form = await request.form()
        upload: Any = form["file"]
        archive = zipfile.ZipFile(io.BytesIO(await upload.read()))
        runner_name = next(name for name in archive.namelist() if name.endswith("assets/runner.json"))
        runner = json.loads(archive.read(runner_name))
        skill, version = runner["id"], runner.get("version", "")
        error = None
        if self.behaviour.install == "async-fail":
            error = "runner.json must define a non-empty version (turngate miniature)"
        elif (
            self.behaviour.versioned
            and skill in self.installed
            and not _higher(version, self.installed[skill])
        ):
            error = f"Skill update requires strictly higher version: installed={self.installed[skill]}"
        if error is None:
            self.installed[skill] = version
            self.packages[skill] = {
                name.split("/", 1)[-1] if "/" in name else name: archive.read(name)
                for name in archive.namelist()
                if not name.endswith("/")
            }
        if self.behaviour.install == "sync":
            if error:
                return JSONResponse({"detail": error}, status_code=400)
            return JSONResponse({"status": "installed", "skill_id": skill})
        request_id = uuid.uuid4().hex
        # Validation happens "afterwards": the first status read says running, the next the outcome.
        self.installs[request_id] = {"reads": 0, "error": error, "skill_id": skill}
        return JSONResponse({"request_id": request_id, "status": "queued"})

    async def install_status(self, request: Request) -> Response:
        record = self.installs.get(request.path_params["request_id"])
        if record is None:
            return JSONResponse({"detail": "Install request not found"}, status_code=404)
        record["reads"] += 1
        if record["reads"] == 1:
            return JSONResponse({"status": "running"})
        if record["error"]:
            return JSONResponse({"status": "failed", "error": record["error"]})
        return JSONResponse({"status": "succeeded", "skill_id": record["skill_id"]})

    # Jobs --------------------------------------------------------------------------------

    async def create(self, request: Request) -> Response:
        body = await request.json()
        self.job_requests.append(body)
        if body["skill_id"] not in self.installed:
            return JSONResponse({"detail": f"Skill '{body['skill_id']}' not found"}, status_code=404)
        if body["engine"] not in self.behaviour.engines:
            detail = {"code": "SKILL_ENGINE_UNSUPPORTED", "message": f"does not support {body['engine']}"}
            return JSONResponse({"detail": detail}, status_code=400)
        if self.refused_jobs < self.behaviour.full_for_first_jobs:
            self.refused_jobs += 1
            return JSONResponse({"detail": "Job queue is full"}, status_code=429)
        unknown = sorted(set(body["runtime_options"]) - POLICIES[self.behaviour.dialect])
        if unknown:  # as Skill-Runner's options policy: a ValueError the jobs router answers with 400
            return JSONResponse({"detail": f"Unknown runtime_options: {', '.join(unknown)}"}, status_code=400)
        if body["engine"] in self.behaviour.provider_required and not body.get("provider_id"):
            detail = f"provider_id is required for multi-provider engine '{body['engine']}'"
            return JSONResponse({"detail": detail}, status_code=400)
        mode = body["runtime_options"]["execution_mode"]
        if self.behaviour.engine_bin is not None:
            await asyncio.to_thread(self._run_engine, body["skill_id"], mode, json.dumps(body["input"]))
        job = Job(
            mode,
            "succeeded" if mode == "auto" else "waiting_user",
            runtime_options=body["runtime_options"],
            skill=body["skill_id"],
        )
        if self.later:
            self._state(job, "queued", "running", "turn.started", attempt=1)
        else:
            job.events.append(_fcmp("conversation.started", {}, attempt=1))
        if mode == "auto":
            self._complete(job, attempt=1)
        else:
            number = None if self.behaviour.null_interaction_ids else 1
            job.events.append(
                _fcmp("user.input.required", {"interaction_id": number, "prompt": "Which style?"}, attempt=1)
            )
            if self.later:
                self._state(job, "running", "waiting_user", "turn.needs_input", attempt=1)
        name = uuid.uuid4().hex
        self.jobs[name] = job
        return JSONResponse({"request_id": name, "status": "queued"})

    def _run_engine(self, skill: str, mode: str, prompt: str) -> None:
        """The fake codex in a fresh run folder, with the skill's SKILL.md patched as PATCH_WORDS say."""
        files = self.packages[skill]
        run = Path(tempfile.mkdtemp(prefix="miniature-run-"))
        if self.behaviour.patch != "none":
            runner = json.loads(files["assets/runner.json"])
            schema = json.loads(files[runner["schemas"]["output"]])
            modules = ["runtime-enforcement"]
            if runner.get("artifacts"):
                modules.append("artifact-redirection")
            modules += ["output-format-contract", "output-schema", f"{mode}-mode"]
            if self.behaviour.patch == "mode-first":
                modules.insert(0, modules.pop())
            words = {
                "artifacts": "\n".join(f"- {item['pattern']}" for item in runner.get("artifacts", ())),
                "fields": "\n".join(f"- `{name}`" for name in schema.get("properties", {})),
            }
            added = "\n\n".join(PATCH_WORDS[module].format(**words) for module in modules)
            folder = run / ".codex" / "skills" / skill
            folder.mkdir(parents=True)
            (folder / "SKILL.md").write_text(files["SKILL.md"].decode().rstrip() + "\n\n" + added + "\n")
        command = [str(Path(self.behaviour.engine_bin or "") / "codex"), "exec", "--skip-git-repo-check"]
        subprocess.run([*command, "--json", "--full-auto", prompt], cwd=run, capture_output=True, timeout=60)
        shutil.rmtree(run, ignore_errors=True)

    @property
    def later(self) -> bool:
        """Speaks as Skill-Runner v0.4.0 and later (its events included), not as the seed's job API."""
        return self.behaviour.dialect != "require-user-reply"

    def _state(self, job: Job, source: str, target: str, trigger: str, *, attempt: int, **more: Any) -> None:
        data = {"from": source, "to": target, "trigger": trigger, "updated_at": "2026-03-12T00:00:00Z"}
        job.events.append(_fcmp("conversation.state.changed", {**data, **more}, attempt=attempt))

    def _complete(self, job: Job, *, attempt: int) -> None:
        job.status, job.data = "succeeded", {"greeting": "Hi"}
        job.events.append(_fcmp("assistant.message.final", {"text": '{"greeting": "Hi"}'}, attempt=attempt))
        if self.later:  # 3d9e93a: the end is the state change's terminal, no conversation.completed
            terminal = {"status": "succeeded", "reason_code": "DONE_MARKER_FOUND"}
            self._state(job, "running", "succeeded", "turn.succeeded", attempt=attempt, terminal=terminal)
            return
        job.events.append(
            _fcmp("conversation.completed", {"reason_code": "DONE_MARKER_FOUND"}, attempt=attempt)
        )

    async def status(self, request: Request) -> Response:
        job = self.jobs.get(request.path_params["job"])
        if job is None:
            return JSONResponse({"detail": "Request not found"}, status_code=404)
        job.reads += 1
        if self.behaviour.hard_timeout_code and "hard_timeout_seconds" in job.runtime_options:
            if job.reads == 1:
                return JSONResponse({"status": "running", "warnings": [], "error": None})
            error = {"code": self.behaviour.hard_timeout_code, "message": "engine hard timeout"}
            job.status = "failed"
            return JSONResponse({"status": "failed", "warnings": [], "error": error})
        waiting = job.status == "waiting_user"
        return JSONResponse(
            {
                "status": job.status,
                "pending_interaction_id": 1 if waiting else None,
                "warnings": [],
                "error": None,
            }
        )

    async def pending(self, request: Request) -> Response:
        job = self.jobs[request.path_params["job"]]
        if job.mode == "auto" and self.behaviour.pending_400_for_auto:
            detail = "interaction endpoints require execution_mode=interactive"
            return JSONResponse({"detail": detail}, status_code=400)
        if job.status != "waiting_user":
            return JSONResponse({"status": job.status, "pending": None})
        return JSONResponse(
            {
                "status": job.status,
                "pending": {"interaction_id": 1, "kind": "open_text", "prompt": "Which style?"},
            }
        )

    async def reply(self, request: Request) -> Response:
        job = self.jobs[request.path_params["job"]]
        body = await request.json()
        if job.status != "waiting_user" or body.get("interaction_id") != 1:
            return JSONResponse({"detail": "stale interaction"}, status_code=409)
        job.replies += 1
        if self.later:
            accepted = {
                "interaction_id": 1,
                "resolution_mode": "user_reply",
                "response_preview": body["response"],
            }
            job.events.append(_fcmp("interaction.reply.accepted", accepted, attempt=job.replies))
            self._state(job, "waiting_user", "queued", "interaction.reply.accepted", attempt=job.replies)
            self._state(job, "queued", "running", "turn.started", attempt=job.replies + 1)
        if job.replies <= self.behaviour.waits_again:
            prompt = {"interaction_id": 1, "prompt": "Which style?"}
            job.events.append(_fcmp("user.input.required", prompt, attempt=job.replies + 1))
            return JSONResponse({"status": "queued", "accepted": True})
        self._complete(job, attempt=job.replies + 1)
        return JSONResponse({"status": "queued", "accepted": True})

    async def cancel(self, request: Request) -> Response:
        job = self.jobs[request.path_params["job"]]
        accepted = job.status not in ("succeeded", "failed", "canceled")
        job.status = "canceled" if accepted else job.status
        return JSONResponse({"accepted": accepted})

    async def run_file(self, request: Request) -> Response:
        job = self.jobs.get(request.path_params["job"])
        path = request.query_params.get("path", "")
        attempts = 1 if job is None or job.mode == "auto" or job.status == "waiting_user" else 2
        numbers = [str(number) for number in range(1, attempts + 1)]
        if (
            self.behaviour.audit is None
            or job is None
            or path not in [self._audit_file(job, n) for n in numbers]
        ):
            return JSONResponse({"detail": "File not found"}, status_code=404)
        attempt = int(path.split(".")[-2])
        found = attempt == 2 or self.behaviour.audit == "drifts"
        record = {"attempt": {"number": attempt}, "completion": {"done_marker_found": found}}
        return JSONResponse({"path": path, "preview": {"mode": "text", "content": json.dumps(record)}})

    def _audit_file(self, job: Job, attempt: str) -> str:
        if self.behaviour.audit_layout == "namespaced":
            return f".audit/{job.skill}.1/meta.{attempt}.json"
        return f".audit/meta.{attempt}.json"

    async def result(self, request: Request) -> Response:
        job = self.jobs[request.path_params["job"]]
        return JSONResponse({"result": {"status": job.status, "data": job.data}})

    async def history(self, request: Request) -> Response:
        job = self.jobs[request.path_params["job"]]
        if self.behaviour.runtime_history:
            rasp = [
                {"protocol_version": "rasp/1.0", "seq": index + 1, "event": {"type": "lifecycle.run.status"}}
                for index, _ in enumerate(job.events)
            ]
            return JSONResponse({"count": len(rasp), "events": rasp})
        return JSONResponse({"count": len(job.events), "events": _numbered(job.events)})

    async def stream(self, request: Request) -> Response:
        job = self.jobs[request.path_params["job"]]

        def frames() -> Iterator[str]:
            yield f"event: snapshot\ndata: {json.dumps({'status': job.status})}\n\n"
            for event in _numbered(job.events):
                yield f"event: chat_event\ndata: {json.dumps(event)}\n\n"
            yield 'event: end\ndata: {"reason": "terminal"}\n\n'

        return StreamingResponse(frames(), media_type="text/event-stream")


class _Auth:
    """401 without the miniature's Bearer token (when it has one)."""

    def __init__(self, app: Any, miniature: Miniature) -> None:
        self.app, self.miniature = app, miniature

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        token = self.miniature.behaviour.token
        if scope["type"] == "http" and token is not None:
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await JSONResponse({"detail": "Not authenticated"}, status_code=401)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _fcmp(kind: str, data: dict[str, Any], *, attempt: int) -> dict[str, Any]:
    return {"protocol_version": "fcmp/1.0", "type": kind, "data": data, "meta": {"attempt": attempt}}


def _numbered(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events with their ``seq``, 1 up, as a server numbers them when it publishes them."""
    return [{**event, "seq": index} for index, event in enumerate(events, start=1)]


def _higher(new: str, old: str) -> bool:
    def parts(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("."))

    return bool(new) and parts(new) > parts(old)


@contextmanager
def serve(behaviour: Behaviour) -> Iterator[tuple[str, Miniature]]:
    """The miniature on 127.0.0.1 (port 0) in a thread: (base URL, the miniature)."""
    miniature = Miniature(behaviour)
    with run_app(miniature.app) as url:
        yield url, miniature


@contextmanager
def run_app(app: Any, *, stop_wait_sec: float = 10) -> Iterator[str]:
    """Any ASGI app on 127.0.0.1 (port 0) in a thread, until the block ends: its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="error"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("the server did not start")
        thread.join(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(stop_wait_sec)


class ResettingProxy:
    """A TCP proxy that resets (RST) the first ``resets`` connections whose request matches, then
    passes every connection through to the upstream server."""

    def __init__(self, upstream: str, *, resets: int, matching: bytes) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self.resets_left, self.matching = resets, matching
        self.reset_count = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(client,), daemon=True).start()

    def _handle(self, client: socket.socket) -> None:
        upstream = socket.create_connection(self.upstream)
        threading.Thread(target=_pipe, args=(upstream, client), daemon=True).start()
        try:
            while chunk := client.recv(65536):
                if self.resets_left > 0 and self.matching in chunk:  # a request on a kept-alive connection
                    self.resets_left -= 1
                    self.reset_count += 1
                    # SO_LINGER 0: close() sends RST, as a crashed or overloaded server does.
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    client.close()
                    upstream.close()
                    return
                upstream.sendall(chunk)
        except OSError:
            pass
        upstream.close()

    def close(self) -> None:
        self.listener.close()


def _pipe(source: socket.socket, sink: socket.socket) -> None:
    try:
        while chunk := source.recv(65536):
            sink.sendall(chunk)
    except OSError:
        pass
    finally:
        for end in (source, sink):
            with suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
