"""The `turngate` command."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from turngate import __version__
from turngate.base.arguments import OneLineParser, at_least_one, port, positive_seconds


def _engines_install(args: argparse.Namespace) -> int:
    from turngate.engines.fake.install import install

    non_resumable = tuple(name for name in (args.non_resumable or "").split(",") if name)
    for path in install(
        args.directory,
        scripts=args.scripts,
        state=args.state,
        call_log=args.call_log,
        non_resumable=non_resumable,
    ):
        print(path)
    return 0


def _engines_check(args: argparse.Namespace) -> int:
    from turngate.engines.fake.compiler import compile_script
    from turngate.engines.fake.problems import ScriptProblem

    failures = 0
    for path in args.files:
        try:
            compiled = compile_script(path)
        except ScriptProblem as problem:
            failures += 1
            print(problem.line("check"), file=sys.stderr)
        else:
            print(f"ok {path} ({len(compiled['turns'])} turns)")
    return 1 if failures else 0


def _engines_selfcheck(args: argparse.Namespace) -> int:
    from turngate.engines.selfcheck import report, run_selfcheck

    results = run_selfcheck(args.files)
    print(report(results))
    return 1 if any(check.problems for check in results) else 0


def _serve(args: argparse.Namespace) -> int:
    from turngate.base.arguments import UsageProblem
    from turngate.implementations.serve.main import BindRefused, ServeOptions, serve

    try:
        options = ServeOptions(
            host=args.host,
            port=args.port,
            allow_remote=args.allow_remote,
            data_dir=args.data,
            engines=args.engines,
            scripts=args.scripts,
            call_log=args.call_log,
            slots=args.slots,
            reading=args.reading,
            test_hooks=args.test_hooks,
            probe_each_run=args.probe_each_run,
            turn_timeout_sec=args.turn_timeout,
            max_reply_bytes=args.max_reply_bytes,
            max_turn_output_bytes=args.max_turn_output_bytes,
            variant=args.variant,
            mutant=args.mutant,
            quiet=args.quiet,
        )
    except ValueError as problem:
        raise UsageProblem(f"serve: {problem}") from None
    try:
        return serve(options)
    except (BindRefused, OSError, ValueError) as problem:  # ValueError: an unknown variant or mutant
        raise UsageProblem(f"serve: {problem}") from None


def _add_serve(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    from turngate.implementations.reference.gate import READING_BODY, SOFT_COMPLETION_READINGS
    from turngate.implementations.reference.processes import DEFAULT_OUTPUT_LIMIT
    from turngate.implementations.serve.service import MAX_REPLY_BYTES

    serve = commands.add_parser(
        "serve", help="the reference orchestrator behind the job API (HTTP_API.md), on 127.0.0.1"
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=port, default=8765, help="port (0: any free port; default 8765)")
    serve.add_argument(
        "--allow-remote", action="store_true", help="allow a non-loopback --host (it runs engines for anyone)"
    )
    serve.add_argument(
        "--data", type=Path, default=Path("turngate-serve-data"), help="store, runs and skills folder"
    )
    serve.add_argument(
        "--engines", type=Path, metavar="DIR", help="engine executables (default: fake engines in DATA/bin)"
    )
    serve.add_argument("--scripts", type=Path, help="TURNGATE_SCRIPTS for the fake engines")
    serve.add_argument("--call-log", type=Path, help="TURNGATE_CALL_LOG for the fake engines")
    serve.add_argument(
        "--slots", type=at_least_one, default=2, help="runs that may hold an engine at once (>= 1)"
    )
    serve.add_argument(
        "--reading",
        choices=sorted(SOFT_COMPLETION_READINGS),
        default=READING_BODY,
        help="the reading of Decision 4.1 (soft completion) the gate applies",
    )
    serve.add_argument(
        "--test-hooks",
        action="store_true",
        help="manual clock, restart and internals under /v1/_turngate/ (for turngate's own tests)",
    )
    serve.add_argument(
        "--probe-each-run",
        action="store_true",
        help="probe the engine's resume support for every run (else once per engine), as a real server may",
    )
    serve.add_argument(
        "--turn-timeout", type=positive_seconds, default=120.0, help="seconds one engine turn may take"
    )
    serve.add_argument(
        "--max-reply-bytes", type=at_least_one, default=MAX_REPLY_BYTES, help="larger reply bodies get 413"
    )
    serve.add_argument(
        "--max-turn-output-bytes",
        type=at_least_one,
        default=DEFAULT_OUTPUT_LIMIT,
        help="bytes kept per engine stream per turn; past it the turn fails ENGINE_OUTPUT_LIMIT",
    )
    serve.add_argument("--variant", metavar="NAME", help="serve a conforming variant (docs/variants.md)")
    serve.add_argument("--mutant", metavar="NAME", help="serve a spec mutant (docs/mutants.md)")
    serve.add_argument("--quiet", action="store_true", help="no request log (one line per request on stderr)")
    serve.set_defaults(handler=_serve)


# Each top-level command but `engines` and `serve` (below), in the order `turngate --help` lists them,
# with the function that adds it (and its siblings) to the parser: a command line builds only the
# command it names, so `turngate list` does not import the server, the probe or the drift tools.
_COMMANDS: Final = (
    (("run",), "turngate.cli.run:add_command"),
    (("list", "show"), "turngate.cli.catalog_commands:add_list_and_show"),
    (("report", "baseline"), "turngate.cli.saved_reports:add_commands"),
    (("catalog",), "turngate.cli.catalog_commands:add_catalog_check"),
    (("editions",), "turngate.cli.editions_command:add_command"),
    (("serve",), "turngate.cli.main:_add_serve"),
    (("replay", "drift", "record"), "turngate.cli.drift:add_commands"),
    (("probe",), "turngate.judge.probe:add_command"),
    (("coverage",), "turngate.tools.coverage:add_command"),
    (("mutants",), "turngate.cli.mutants:add_commands"),
    (("explore",), "turngate.cli.explore:add_command"),
)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; given the command line, only the command it names (every one when it names none:
    `turngate --help`, a mistyped command)."""
    parser = OneLineParser(prog="turngate", description=__doc__)
    parser.add_argument("--version", action="version", version=f"turngate {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    named = next((word for word in argv or () if not word.startswith("-")), None)
    known = {"engines", *(name for names, _ in _COMMANDS for name in names)}
    wanted = named if named in known else None
    if wanted in (None, "engines"):
        _add_engines(commands)
    for names, adder in _COMMANDS:
        if wanted is None or wanted in names:
            module, function = adder.split(":")
            getattr(importlib.import_module(module), function)(commands)
    return parser


def _add_engines(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    engines = commands.add_parser("engines", help="the fake engines")
    engine_commands = engines.add_subparsers(dest="engines_command", required=True)

    install = engine_commands.add_parser(
        "install", help="write the fake engines' launchers (one per engine) into DIR"
    )
    install.add_argument("directory", type=Path, metavar="DIR")
    install.add_argument("--scripts", type=Path, help="default TURNGATE_SCRIPTS baked into the launchers")
    install.add_argument("--state", type=Path, help="default TURNGATE_STATE")
    install.add_argument("--call-log", type=Path, help="default TURNGATE_CALL_LOG")
    install.add_argument(
        "--non-resumable", metavar="ENGINES", help="comma list of engines (or 'all') that look non-resumable"
    )
    install.set_defaults(handler=_engines_install)

    check = engine_commands.add_parser("check", help="validate case scripts without playing them")
    check.add_argument("files", type=Path, nargs="+", metavar="FILE")
    check.set_defaults(handler=_engines_check)

    selfcheck = engine_commands.add_parser(
        "selfcheck", help="play the bundled example scripts on every engine and read them back"
    )
    selfcheck.add_argument(
        "files", type=Path, nargs="*", metavar="FILE", help="scripts (default: the examples)"
    )
    selfcheck.set_defaults(handler=_engines_selfcheck)
    from turngate.cli.real_engines import add_commands as add_real_engine_commands

    add_real_engine_commands(engine_commands)


def main(argv: list[str] | None = None) -> int:
    """Every way a command can end is an exit status and at most one line on stderr: bad input (2),
    Ctrl-C outside a run (130; a run handles its own and keeps its verdict), a closed pipe (141)."""
    # Not turngate.cli.run's: that import is a tenth of a second of CPU every other command (serve) spared.
    from turngate.base.arguments import EXIT_INTERRUPTED, EXIT_USAGE, UsageProblem
    from turngate.base.terminal import end_quietly_on_closed_pipe

    words = sys.argv[1:] if argv is None else argv
    args = build_parser(words).parse_args(words)
    try:
        result: int = args.handler(args)
        sys.stdout.flush()
    except UsageProblem as problem:
        print(f"turngate: {problem}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `turngate list | head`: the reader has all it wanted
        return end_quietly_on_closed_pipe()
    except KeyboardInterrupt:
        print("turngate: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    return result


if __name__ == "__main__":
    raise SystemExit(main())
