"""Developer and CI sessions. `nox` alone runs tests, lint and typecheck."""

from __future__ import annotations

import itertools
import os
import re
import sys
from pathlib import Path

import nox

nox.options.sessions = ["tests", "lint", "typecheck"]
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True


def _install(session: nox.Session, *requirements: str) -> None:
    """Into the session's own virtualenv. Under ``nox --no-venv`` (the README's test command) nothing:
    the environment nox runs in has ``.[dev]`` already, and three more virtualenvs took CI a minute."""
    if session.venv_backend != "none":
        session.install(*requirements)


def _module(session: nox.Session, name: str, *args: str, env: dict[str, str] | None = None) -> None:
    """``python -m NAME ARGS`` in the session's environment: under ``--no-venv``, nox's own."""
    python = sys.executable if session.venv_backend == "none" else "python"
    session.run(python, "-m", name, *args, external=True, env=env)


# An empty value is "not set" to Python (only a non-empty one stops it writing bytecode).
BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}


@nox.session
def tests(session: nox.Session) -> None:
    """The test suite (real subprocesses, pexpect over a PTY, hypothesis), on every core (pytest-xdist).

    ``nox -s tests -- -n 0`` runs it in one process (a later ``-n`` wins)."""
    _install(session, "-e", ".[test]")
    # The HTML report is tested in a real headless Chromium (Debian's package); install it if missing.
    session.run("bash", "scripts/ensure-chromium", external=True)
    # Bytecode for every process the tests start (the CLI, turngate serve, xdist workers): with
    # PYTHONDONTWRITEBYTECODE set, as on these machines, each would compile the package again.
    _module(session, "compileall", "-q", "turngate")
    # Twice as many workers as cores: the tests marked mostly_waiting go first and wait a minute on
    # real time, and most others wait on subprocesses; the other workers keep every core busy
    # meanwhile. Measured on 2 cores (4917 tests, warm, seconds): -n 3 222; -n 4 207, 212, 214, 196;
    # -n 5 201, 193; -n 6 203. Not 5: from a fresh clone it was no faster (237 s against 228 s at
    # -n 4, one run each), and the extra load is what exposed the probe-each-run races (55f900b).
    # worksteal: an idle worker takes queued tests over from a busy one.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    workers = 2 * cores
    # Bytecode written, whatever PYTHONDONTWRITEBYTECODE says: pytest rewrites the asserts of every
    # module of a package that registers a plugin (all of turngate) and keeps the result only where
    # bytecode may be written; without it each xdist worker and each pytest the tests start spent
    # 4 s of CPU rewriting the same modules (collection: 7.1 s, with it 2.9 s).
    _module(session, "pytest", "-n", str(workers), "--dist", "worksteal", *session.posargs, env=BYTECODE)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: the rules in pyproject.toml, and the formatting."""
    _install(session, "ruff")
    _module(session, "ruff", "check", ".")
    _module(session, "ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """mypy, strict on turngate/ (configured in pyproject.toml)."""
    _install(session, "-e", ".[dev]")
    _module(session, "mypy")


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmarks; figures go to bench-results.json (never timed tests)."""
    session.install("-e", ".")
    session.run("python", "-m", "turngate.tools.bench", "--out", "bench-results.json", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """The main job: the whole scenario catalog against the reference orchestrator."""
    session.install("-e", ".")
    session.run("turngate", "run", *session.posargs)


@nox.session(name="verify-server")
def verify_server(session: nox.Session) -> None:
    """Probe an already-running job-API server, then run the catalog against it (needs no network).

    nox -s verify-server -- URL --scripts DIR [--call-log FILE] [--model ENGINE=NAME] ...
    writes server-target.yaml, server-run.jsonl and server-junit.xml. Starting the server is the
    user's (see README, "Verifying your own server"); this session never installs it.
    """
    if not session.posargs or not session.posargs[0].startswith(("http://", "https://")):
        session.error("usage: nox -s verify-server -- http://HOST:PORT --scripts DIR [probe options]")
    url, *probe_options = session.posargs
    session.install("-e", ".")
    session.run("turngate", "probe", "--target", url, *probe_options, "--out", "server-target.yaml")
    session.run(
        "turngate", "run", "--target", "server-target.yaml",
        "--report-json", "server-run.jsonl", "--junit", "server-junit.xml",
        success_codes=[0, 1],  # failed cases are the report's business, not the session's
    )  # fmt: skip


@nox.session
def fuzz(session: nox.Session) -> None:
    """Fuzzing: 10^5 mutated corpus streams per engine (`-- --streams N`); figures to fuzz-results.json."""
    session.install("-e", ".")
    session.run("python", "-m", "turngate.tools.fuzz", "--out", "fuzz-results.json", *session.posargs)


def _drift_pairs() -> list[tuple[str, str]]:
    """(ENGINE@OLD, ENGINE@NEW) for every engine whose real captures in corpus/ (ENGINE/real-VERSION-...)
    come from two versions or more, each version against the one before it."""
    found: dict[str, set[str]] = {}
    for meta in Path(__file__).parent.glob("corpus/*/real-*/capture.yaml"):
        match = re.fullmatch(r"real-(\d+(?:\.\d+)+)-.+", meta.parent.name)
        if match:
            found.setdefault(meta.parent.parent.name, set()).add(match[1])
    pairs = []
    for engine, seen in sorted(found.items()):
        ordered = sorted(seen, key=lambda version: tuple(int(part) for part in version.split(".")))
        pairs += [(f"{engine}@{old}", f"{engine}@{new}") for old, new in itertools.pairwise(ordered)]
    return pairs


@nox.session(name="real-drift")
def real_drift(session: nox.Session) -> None:
    """Drift between two real versions, on their saved captures (no npm, no network): for every engine
    with captures of two versions (codex, claude, kilo today), `engines real drift OLD NEW --saved
    --fail-on-drift`: exit 1 on a change the expected-drift baseline (corpus/real-drift-baseline.yaml)
    does not name, the known ones reported as known (codex's announced 429 retries, claude's init keys,
    the timing-dependent drop turns). Not part of the default sessions
    (docs/drift.md, "Expected drift")."""
    _install(session, "-e", ".")
    pairs = _drift_pairs()
    if not pairs:
        session.skip("no engine has real captures of two versions in corpus/")
    for old, new in pairs:
        _module(session, "turngate", "engines", "real", "drift", old, new, "--saved", "--fail-on-drift")


@nox.session(name="real-engines")
def real_engines(session: nox.Session) -> None:
    """The real CLIs (npm and PyPI, network for the install; slow): install every pin (codex, gemini,
    opencode, claude, qwen, kilo, codebuddy), the tests in tests_real/ (fidelity against the fakes where a
    fake exists, every fidelity script played offline to its end by the others), fidelity, the catalog on
    the real codex, and live drift (--fail-on-drift) for every engine with real captures of two versions
    (codex, claude, kilo today). Not part of the default sessions (docs/real-engines.md)."""
    session.install("-e", ".[test]")
    session.run("turngate", "engines", "real", "install")
    session.run("pytest", "-p", "no:randomly", "tests_real", *session.posargs)
    session.run("turngate", "engines", "fidelity", "--json", "real-engines-fidelity.json")
    session.run(
        "turngate", "run", "--engines", "real", "--engine", "codex", "--jobs", "1",
        "--report-json", "real-engines-codex-catalog.jsonl",
    )  # fmt: skip
    # Live drift between the versions of every engine the corpus has real captures of two versions of.
    for old, new in _drift_pairs():
        session.run("turngate", "engines", "real", "drift", old, new, "-k", "fid-*", "--fail-on-drift")


@nox.session
def explore(session: nox.Session) -> None:
    """Exploration against the reference: generated runs judged by the spec model (`-- --budget N
    --seed S --target T`); the figures go to explore-results.json. Its own budget, outside the tests."""
    session.install("-e", ".")
    arguments = session.posargs or ["--budget", "3000", "--seed", "1"]
    session.run("turngate", "explore", *arguments, "--json", "explore-results.json")


@nox.session
def sensitivity(session: nox.Session) -> None:
    """Catalog alone vs catalog + exploration, per broken implementation (the spec mutants); the
    table goes to sensitivity.json and docs/exploration.md's figures come from it."""
    session.install("-e", ".")
    session.run("python", "-m", "turngate.tools.sensitivity", "--out", "sensitivity.json", *session.posargs)


@nox.session
def mutants(session: nox.Session) -> None:
    """Each spec mutant against the catalog cases citing its sentences; the score goes to mutants.json."""
    session.install("-e", ".")
    session.run("turngate", "mutants", "run", "--out", "mutants.json", *session.posargs)
