"""Start the reference server: bind first (port 0 picks a free port), say where, then serve."""

from __future__ import annotations

import ipaddress
import os
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from turngate.implementations.reference.gate import READING_BODY
from turngate.implementations.reference.lifecycle import EngineSetup
from turngate.implementations.reference.processes import DEFAULT_OUTPUT_LIMIT, OutputLimits
from turngate.implementations.serve.request_log import LoggedRequests, RequestLog
from turngate.implementations.serve.service import MAX_REPLY_BYTES, JobService, ServiceConfig


class BindRefused(ValueError):
    """A non-loopback address without ``--allow-remote``."""


@dataclass(frozen=True, slots=True)
class ServeOptions:
    host: str = "127.0.0.1"
    port: int = 8765
    allow_remote: bool = False
    data_dir: Path = Path("turngate-serve-data")
    engines: Path | None = None  # None: the fake engines, installed into DATA/bin
    scripts: Path | None = None
    call_log: Path | None = None
    slots: int = 2
    reading: str = READING_BODY
    test_hooks: bool = False
    probe_each_run: bool = False  # probe the engine's resume support for every run, not once
    turn_timeout_sec: float = 120.0
    max_reply_bytes: int = MAX_REPLY_BYTES
    max_turn_output_bytes: int = DEFAULT_OUTPUT_LIMIT
    variant: str | None = None  # a conforming variant (turngate/implementations/conforming_variants.py)
    mutant: str | None = (
        None  # a spec mutant (turngate/implementations/mutants/), patched in for the server's life
    )
    quiet: bool = False  # no request log (request_log.py) on stderr

    def __post_init__(self) -> None:
        # The command line checks these as it parses; a caller building options in code gets the same.
        if not 0 <= self.port <= 65535:
            raise ValueError(f"--port: {self.port}: a port is 0 (any free port) to 65535")
        if self.slots < 1:
            raise ValueError(f"--slots: {self.slots}: must be at least 1")
        if not self.turn_timeout_sec > 0:
            raise ValueError(f"--turn-timeout: {self.turn_timeout_sec}: must be more than 0 seconds")


def check_host(host: str, allow_remote: bool) -> None:
    if allow_remote:
        return
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise BindRefused(
            f"--host {host}: not a loopback address; the server runs engines for whoever reaches it,"
            " so binding elsewhere needs --allow-remote"
        )


def build_service(options: ServeOptions) -> JobService:
    from turngate.implementations.conforming_variants import variant_named

    variant = variant_named(options.variant)
    mutant = None
    if options.mutant is not None:
        from turngate.implementations.mutants import activate
        from turngate.implementations.mutants.registry import mutant_named

        mutant = mutant_named(options.mutant)
        activate(mutant)  # never taken back: the process serves this mutant only
    data = options.data_dir.resolve()
    bin_dir = options.engines
    if bin_dir is None:
        from turngate.engines.fake.install import install

        bin_dir = data / "bin"
        # Their session state goes with the server's data, not into the scripts folder (their own
        # default), which may be a checkout; TURNGATE_STATE in the environment still wins.
        install(bin_dir, state=data / "engine-state")
    env = dict(os.environ)
    if options.scripts is not None:
        env["TURNGATE_SCRIPTS"] = str(options.scripts.resolve())
    if options.call_log is not None:
        env["TURNGATE_CALL_LOG"] = str(options.call_log.resolve())
    config = ServiceConfig(
        data_dir=data,
        engines=EngineSetup(
            bin_dir=bin_dir.resolve(),
            env=env,
            turn_timeout_sec=options.turn_timeout_sec,
            output_limits=OutputLimits(options.max_turn_output_bytes),
        ),
        slots=options.slots,
        soft_completion_reading=options.reading,
        test_hooks=options.test_hooks,
        probe_each_run=options.probe_each_run,
        max_reply_bytes=options.max_reply_bytes,
        variant=variant,
        mutant=mutant,
    )
    return JobService(config)


def open_listener(host: str, port: int) -> socket.socket:
    """The listening socket, bound and listening."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP, not 0: asyncio sets TCP_NODELAY only on sockets whose proto says TCP, and without
    # it every keep-alive response waits ~40 ms for the client's delayed ACK (Nagle).
    listener = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    return listener


def serve(options: ServeOptions) -> int:
    import uvicorn

    from turngate.implementations.serve.app import build_app

    check_host(options.host, options.allow_remote)
    listener = open_listener(options.host, options.port)
    family, port = listener.family, listener.getsockname()[1]
    service = build_service(options)
    # The manual clock moves only through the test hook, so there is nothing to tick.
    app = build_app(service, tick_sec=None if options.test_hooks else 1.0)
    shown = f"[{options.host}]" if family == socket.AF_INET6 else options.host
    print(f"turngate serve: listening on http://{shown}:{port} (data {options.data_dir})", flush=True)
    print(f"turngate serve: serving {service.served.description()}", flush=True)
    log = None if options.quiet else RequestLog()
    served = app if log is None else LoggedRequests(app, log)
    # uvicorn's own access log stays off: its lines are ours (request_log.py), one plain line each.
    config = uvicorn.Config(
        served, log_level="warning", access_log=False, lifespan="on", timeout_graceful_shutdown=2
    )
    try:
        uvicorn.Server(config).run(sockets=[listener])
    finally:
        if log is not None:
            log.close()
    sys.stdout.flush()
    return 0
