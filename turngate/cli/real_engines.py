"""`turngate engines real install|launchers|serve|capture|drift` and `turngate engines fidelity`."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from turngate.base.arguments import UsageProblem
from turngate.engines.real.lock import LockProblem, Pin, default_cache, read_lock, select


def _corpus() -> Path:
    from turngate.base.shipped_data import data_dir

    return data_dir("corpus")


def _pins(words: list[str] | None) -> tuple[Pin, ...]:
    try:
        return select(read_lock(), words)
    except LockProblem as problem:
        raise UsageProblem(str(problem)) from None


def _install(args: argparse.Namespace) -> int:
    from turngate.engines.real.npm_install import InstallProblem, install_pin

    failures = 0
    for pin in _pins(args.engines):
        try:
            done = install_pin(pin, args.cache, force=args.force)
        except InstallProblem as problem:
            print(f"turngate: {problem}", file=sys.stderr)
            failures += 1
            continue
        how = f"installed in {done.seconds} s" if done.fresh else "already installed"
        print(
            f"{pin.name}  {pin.requirement} ({pin.source})  {done.bytes / 1e6:.0f} MB  {how}  {done.folder}"
        )
    return 1 if failures else 0


def _launchers(args: argparse.Namespace) -> int:
    from turngate.engines.real.npm_install import write_launchers

    pins = _pins(args.engines or sorted({pin.engine for pin in read_lock()}))
    for path in write_launchers(
        args.directory,
        pins,
        args.cache,
        model_url=args.model_url,
        scripts=args.scripts,
        call_log=args.call_log,
    ):
        print(path)
    return 0


def _serve(args: argparse.Namespace) -> int:
    from turngate.engines.modelserver.endpoint import ModelServer

    if args.host not in ("127.0.0.1", "localhost", "::1"):
        raise UsageProblem(f"--host {args.host}: the model server binds to a loopback address only")
    log = args.log or args.scripts / "model-requests.jsonl"
    data = args.data or args.scripts / ".turngate-model-data"
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        server = ModelServer(
            args.scripts,
            log,
            data,
            host=args.host,
            port=args.port,
            outputs_in_workdir=args.outputs_in_workdir,
            named_tools=frozenset(args.named_tool or ()),
            cut_style=args.cut_style,
        ).start()
    except OSError as error:
        raise UsageProblem(f"engines real serve: {error}") from None
    print(server.url, flush=True)
    try:
        stop.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def _capture(args: argparse.Namespace) -> int:
    from turngate.tools.realengines.captures import capture_all, chosen

    pins = _pins(args.engines)
    missing = [pin.name for pin in pins if not pin.executable(args.cache).exists()]
    if missing:
        raise UsageProblem(f"not installed: {' '.join(missing)}: run `turngate engines real install`")
    wanted = chosen(args.k, args.set)
    if not wanted:
        raise UsageProblem(
            f"capture: no wanted capture is named {' or '.join(args.k or ['*'])} in {args.set}"
        )
    for folder in capture_all(pins, args.cache, args.corpus, wanted):
        print(folder)
    return 0


def _saved_pin(word: str) -> Pin:
    """ENGINE@VERSION as the saved captures name it (no lock entry or install needed)."""
    engine, _, version = word.partition("@")
    if not engine or not version:
        raise UsageProblem(f"{word!r}: ENGINE@VERSION (the versions of the saved captures)")
    return Pin(engine, "", version, "")


def _drift(args: argparse.Namespace) -> int:
    from collections import Counter

    from turngate.tools.realengines.fidelity import Difference, run_drift, scripts

    found: list[Difference]
    entries = _baseline(args) if args.fail_on_drift else ()  # a bad baseline fails before any run
    if args.saved is not None:
        from turngate.tools.realengines.saved import saved_captures, saved_drift

        old, new = _saved_pin(args.old), _saved_pin(args.new)
        if old.engine != new.engine:
            raise UsageProblem(f"drift: {old.name} and {new.name}: not the same engine")
        have = {capture.pin for capture in saved_captures(args.saved, [old.engine], kinds=None)}
        for pin in (old, new):
            if pin.name not in have:
                there = ", ".join(sorted(have)) or "none"
                raise UsageProblem(
                    f"drift --saved {args.saved}: no real captures of {pin.name} (there: {there})"
                )
        found = saved_drift(args.saved, old, new)
    else:
        old, new = _pins([args.old, args.new])
        found = run_drift(old, new, args.cache, scripts(args.k))
    counted = Counter((d.mode, d.text) for d in found)
    where = f" (saved captures in {args.saved})" if args.saved is not None else ""
    print(f"{old.name} -> {new.name}{where}: {len(found)} shape differences, {len(counted)} distinct")
    for (mode, text), count in sorted(counted.items()):
        example = next(d for d in found if (d.mode, d.text) == (mode, text))
        print(f"  ({count}x, e.g. {example.script} [{mode}] turn {example.turn}) {text}")
    if not args.fail_on_drift:
        return 0
    return _judged_drift(args, old, new, found, entries)


def _baseline(args: argparse.Namespace) -> tuple[Any, ...]:
    from turngate.tools.realengines.drift_baseline import BaselineProblem, load

    if args.baseline is None:
        return ()
    try:
        return load(args.baseline)
    except BaselineProblem as problem:
        raise UsageProblem(f"--baseline: {problem}") from None


def _judged_drift(
    args: argparse.Namespace, old: Pin, new: Pin, found: list[Any], entries: tuple[Any, ...]
) -> int:
    """--fail-on-drift: each change on one line, known (the baseline's, with its entry and cause) or
    not; exit 1 only for a change the baseline does not name."""
    from turngate.tools.realengines.drift_baseline import CAUSES, judge

    judged = judge(found, entries, new.engine, old.version, new.version)
    pair = f"{new.engine} {old.version} -> {new.version}"
    for known in judged.known:
        difference, entry = known.difference, known.entry
        timing = " (timing-dependent)" if entry.cause == "timing" else ""
        print(
            f"known drift{timing}: {pair}: {difference.script} [{difference.mode}] turn {difference.turn}:"
            f" {difference.text} (baseline {entry.id}, cause: {entry.cause})"
        )
    beyond = " (not in the baseline)" if args.baseline is not None else ""
    for difference in judged.unknown:
        where = f"{difference.script} [{difference.mode}] turn {difference.turn}"
        print(f"drift: {pair}: {where}: {difference.text}{beyond}")
    for entry in judged.unseen:
        print(f"baseline entry not seen: {entry.id} ({entry.capture}; {CAUSES[entry.cause]})")
    if judged.unknown:
        beyond = f" not in the baseline {args.baseline}" if args.baseline is not None else ""
        print(f"drift found: {old.name} -> {new.name}: {len(judged.unknown)} change(s){beyond}")
        return 1
    if judged.known:
        ids = ", ".join(dict.fromkeys(known.entry.id for known in judged.known))
        print(f"no drift beyond the baseline: {old.name} -> {new.name} ({len(judged.known)} known: {ids})")
        return 0
    print(f"no drift: {old.name} -> {new.name}")
    return 0


def _fidelity(args: argparse.Namespace) -> int:
    from turngate.tools.realengines.fidelity import main as fidelity_main

    if args.saved is not None:
        from turngate.tools.realengines.saved import main as saved_main

        return saved_main(args)
    return fidelity_main(args)


def add_commands(engine_commands: argparse._SubParsersAction[Any]) -> None:
    real = engine_commands.add_parser("real", help="the real CLIs (npm), against turngate's model server")
    commands = real.add_subparsers(dest="real_command", required=True)

    install = commands.add_parser(
        "install", help="install the pinned versions (engines.lock.json) with npm, or pip for a wheel"
    )
    install.add_argument("engines", nargs="*", metavar="ENGINE[@VERSION]", help="default: every pin")
    install.add_argument("--cache", type=Path, default=default_cache(), help="install folder")
    install.add_argument("--force", action="store_true", help="reinstall what is there")
    install.set_defaults(handler=_install)

    launchers = commands.add_parser("launchers", help="write real launchers (iflow stays fake) into DIR")
    launchers.add_argument("directory", type=Path, metavar="DIR")
    launchers.add_argument("engines", nargs="*", metavar="ENGINE[@VERSION]", help="default: each first pin")
    launchers.add_argument("--model-url", help="the model server (else TURNGATE_MODEL_URL at run time)")
    launchers.add_argument("--scripts", type=Path, help="TURNGATE_SCRIPTS for the fake iflow")
    launchers.add_argument("--call-log", type=Path, help="TURNGATE_CALL_LOG (argv checks)")
    launchers.add_argument("--cache", type=Path, default=default_cache(), help="install folder")
    launchers.set_defaults(handler=_launchers)

    serve = commands.add_parser("serve", help="the scripted model server; prints its URL")
    serve.add_argument("--scripts", type=Path, required=True, help="the case scripts folder")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0: any free port (default)")
    serve.add_argument("--log", type=Path, help="request log (default SCRIPTS/model-requests.jsonl)")
    serve.add_argument("--data", type=Path, help="tool outputs folder")
    serve.add_argument(
        "--outputs-in-workdir",
        action="store_true",
        help="write tool outputs under the CLI's working directory (as its request names it), for CLIs"
        " configured to refuse files outside it (kilo's external_directory: deny)",
    )
    serve.add_argument(
        "--cut-style",
        choices=("ended", "dropped"),
        default="ended",
        help="a scripted cut: the body ends without the answer's end event (default), or the connection"
        " is dropped mid-body",
    )
    serve.add_argument(
        "--named-tool",
        action="append",
        metavar="NAME",
        help="call a scripted tool of this name by its own name, when the CLI declares it (e.g."
        " request_user_input, an MCP tool); every other scripted tool is a shell call",
    )
    serve.set_defaults(handler=_serve)

    capture = commands.add_parser(
        "capture", help="record real captures (fidelity scripts, hazards, explorations) into the corpus"
    )
    capture.add_argument("engines", nargs="*", metavar="ENGINE[@VERSION]", help="default: every pin")
    capture.add_argument("--corpus", type=Path, default=Path("corpus"), help="the corpus folder")
    capture.add_argument("-k", action="append", metavar="GLOB", help="only captures whose name matches")
    capture.add_argument(
        "--set",
        action="append",
        choices=("fidelity", "hazard", "exploration"),
        help="only this set of captures (repeatable; default: all three)",
    )
    capture.add_argument("--cache", type=Path, default=default_cache(), help="install folder")
    capture.set_defaults(handler=_capture)

    drift = commands.add_parser("drift", help="two real builds of one engine, the same scripts, by shape")
    drift.add_argument("old", metavar="ENGINE@VERSION")
    drift.add_argument("new", metavar="ENGINE@VERSION")
    drift.add_argument("-k", action="append", metavar="GLOB", help="only scripts whose name matches")
    drift.add_argument("--cache", type=Path, default=default_cache(), help="install folder")
    drift.add_argument(
        "--saved",
        type=Path,
        nargs="?",
        const=_corpus(),
        metavar="CORPUS",
        help="compare the two versions' saved real captures (CORPUS/ENGINE/real-VERSION-*), not live runs:"
        " no npm (default CORPUS: the shipped corpus)",
    )
    drift.add_argument(
        "--fail-on-drift",
        action="store_true",
        help="exit 1 when anything changed between the versions that the baseline does not name, each"
        " change on one line, known ones as known (without it: exit 0 whatever is found)",
    )
    drift.add_argument(
        "--baseline",
        type=Path,
        default=_corpus() / "real-drift-baseline.yaml",
        metavar="FILE",
        help="the expected drift --fail-on-drift accepts (default: the shipped corpus's"
        " real-drift-baseline.yaml; docs/drift.md, 'Expected drift')",
    )
    drift.add_argument(
        "--no-baseline", dest="baseline", action="store_const", const=None, help="accept no drift at all"
    )
    drift.set_defaults(handler=_drift)

    fidelity = engine_commands.add_parser(
        "fidelity", help="real engine streams against the fakes', by shape, per engine and version"
    )
    fidelity.add_argument("engines", nargs="*", metavar="ENGINE[@VERSION]", help="default: every pin")
    fidelity.add_argument("--cache", type=Path, default=default_cache(), help="install folder")
    fidelity.add_argument("--json", type=Path, metavar="F", help="the report as JSON")
    fidelity.add_argument("-k", action="append", metavar="GLOB", help="only scripts whose name matches")
    fidelity.add_argument("--keep", type=Path, metavar="DIR", help="keep every stream pair here")
    fidelity.add_argument(
        "--saved",
        type=Path,
        nargs="?",
        const=_corpus(),
        metavar="CORPUS",
        help="the saved real captures (CORPUS/ENGINE/real-*) against the fakes, not live runs: no npm"
        " (default CORPUS: the shipped corpus)",
    )
    fidelity.add_argument(
        "--set",
        action="append",
        choices=("fidelity", "hazard", "exploration"),
        help="with --saved: the captures of this set (repeatable; default: fidelity)",
    )
    fidelity.set_defaults(handler=_fidelity)
