"""The house: every module imports on its own, no import cycles, arrows only to lower layers.

The layers (tests/house/graph.py) are the README's picture: the command line on top, then the
tools, the judge, the implementations it judges, the protocol they share and the engines, and
the ground floor. A module imported alone in a fresh interpreter cannot lean on another import
having run first, so an import-order bug cannot hide behind the order the tests import in.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections import defaultdict

from tests.house.graph import LAYERS, ROOT, arrows, cycles, folder, modules

# Third-party packages preloaded before each fork: importing them is not what is tested, and each
# child then pays only for turngate's own modules.
PRELOAD = ("yaml", "jsonschema", "rich.console", "starlette.applications", "httpx", "uvicorn")

IMPORT_EACH = textwrap.dedent(
    """
    import importlib, os, sys, traceback
    for name in {preload!r}:
        importlib.import_module(name)
    failed = []
    for name in sys.argv[1:]:
        pid = os.fork()
        if pid == 0:
            try:
                importlib.import_module(name)
            except BaseException:
                traceback.print_exc()
                os._exit(1)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if status != 0:
            failed.append(name)
    print("\\n".join(failed))
    """
).format(preload=PRELOAD)


def test_every_module_imports_alone_in_a_fresh_interpreter() -> None:
    names = sorted(name for name in modules() if not name.endswith("__main__"))
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EACH, *names],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    failed = done.stdout.split()
    assert failed == [], f"{failed}\n{done.stderr[-3000:]}"


def test_no_import_cycles() -> None:
    edges: dict[str, set[str]] = defaultdict(set)
    for arrow in arrows():
        edges[arrow.source].add(arrow.target)  # an import inside a function counts too
    assert cycles(edges) == []


def test_arrows_point_only_to_lower_layers() -> None:
    upward = [
        f"{arrow.source}:{arrow.line} -> {arrow.target}"
        for arrow in arrows()
        if folder(arrow.source) != folder(arrow.target)
        and LAYERS[folder(arrow.target)] >= LAYERS[folder(arrow.source)]
    ]
    assert upward == []


def test_the_protocol_and_the_engines_know_nothing_of_each_other() -> None:
    crossing = {
        (folder(arrow.source), folder(arrow.target))
        for arrow in arrows()
        if {folder(arrow.source), folder(arrow.target)} == {"turngate.protocol", "turngate.engines"}
    }
    assert crossing == set()


def test_every_module_belongs_to_a_layer() -> None:
    for name in modules():
        assert folder(name) in LAYERS
    assert set(modules()) >= {"turngate.judge.verdict", "turngate.engines.fake.engine"}
