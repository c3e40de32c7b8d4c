"""Where drift gets its captures: capture folders (the seeded corpus), and the catalog's transcripts.

The catalog's transcripts are made by playing each scenario's first turn on a
fake engine as a real process, with the command line the reference would
build, and keeping the bytes: the same shapes the catalog runs against.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, Final

import yaml

from turngate.base.shipped_data import data_dir
from turngate.engines.fake.install import install
from turngate.engines.fake.script import write_compiled
from turngate.implementations.reference.commands import CommandOptions, build_command
from turngate.judge.case_folder import FIXED_EPOCH_MS, case_id
from turngate.judge.catalog import Scenario
from turngate.tools.drift.capture import Capture, load_capture

CORPUS_DIR: Final = data_dir("corpus")
TURN_TIMEOUT_SEC: Final = 10.0


def shipped_names(root: Path = CORPUS_DIR) -> list[str]:
    """The shipped captures' names, ``ENGINE/NAME`` (their folders under the corpus)."""
    return sorted(f"{path.parent.parent.name}/{path.parent.name}" for path in root.glob("*/*/capture.yaml"))


def shipped_capture(name: str, root: Path = CORPUS_DIR) -> Path | None:
    """The folder of the shipped capture ``ENGINE/NAME``; None when the corpus has none of that name."""
    return root / name if name in shipped_names(root) else None


def corpus_captures(root: Path = CORPUS_DIR, engines: Iterable[str] | None = None) -> list[Capture]:
    wanted = set(engines) if engines else None
    folders = sorted(path.parent for path in root.glob("*/*/capture.yaml"))
    captures = [load_capture(folder) for folder in folders]
    return [capture for capture in captures if wanted is None or capture.engine in wanted]


class FakeEngines:
    """The four fake engines installed in a folder, playing one-turn scripts as real processes."""

    def __init__(self, root: Path) -> None:
        self.root = root
        install(root / "bin")
        (root / "scripts").mkdir(exist_ok=True)
        self.env = {
            **os.environ,
            "HOME": str(root),
            "TURNGATE_SCRIPTS": str(root / "scripts"),
            "TURNGATE_STATE": str(root / "state"),
            "TURNGATE_CALL_LOG": str(root / "calls.jsonl"),
            "TURNGATE_FAKE_EPOCH_MS": str(FIXED_EPOCH_MS),
        }

    def play(
        self,
        case: str,
        script: Mapping[str, Any],
        engine: str,
        mode: str,
        *,
        output_format: str | None = None,
        output_schema: str = "greeting",
    ) -> Capture | None:
        """The first turn of ``script``, with the command line the reference builds; None if it hangs.

        ``output_format`` is gemini's (json or stream-json); without one, gemini reads json
        from the run folder's settings, as it does under the reference.
        """
        written = self.root / "scripts" / f"{case}.yaml"
        text = yaml.safe_dump({"case": case, **script}, sort_keys=False)
        write_compiled(str(written), text, str(self.root / "state"))
        run_dir = self.root / "runs" / case
        run_dir.mkdir(parents=True)
        if engine == "gemini" and output_format is None:
            (run_dir / ".gemini").mkdir()
            (run_dir / ".gemini" / "settings.json").write_text(json.dumps({"output": {"format": "json"}}))
        argv = build_command(
            engine,
            mode,
            prompt=f"Run the skill greet.\nInputs:\n- case: tg-case-{case}",
            options=CommandOptions(gemini_output_format=output_format),  # type: ignore[arg-type]
        )
        try:
            done = subprocess.run(
                [str(self.root / "bin" / engine), *argv[1:]],
                cwd=run_dir,
                env=self.env,
                capture_output=True,
                timeout=TURN_TIMEOUT_SEC,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return None  # a scripted hang: there is no finished stream to drift
        exit_code, signal = (done.returncode, None) if done.returncode >= 0 else (None, -done.returncode)
        return Capture(
            engine=engine,
            stdout=done.stdout,
            stderr=done.stderr,
            mode=mode,
            exit_code=exit_code,
            signal=signal,
            output_schema=output_schema,
            reader_options={"mode": output_format or "json"} if engine == "gemini" else {},
            name=f"{case} [{engine}]",
        )


def catalog_captures(planned: Iterable[tuple[Scenario, str]]) -> Iterator[Capture]:
    """The first turn of each (scenario, engine), played by the fake engine; hanging turns are left out."""
    with tempfile.TemporaryDirectory(prefix="turngate-drift-") as folder:
        engines = FakeEngines(Path(folder))
        for scenario, engine in planned:
            capture = engines.play(
                case_id(scenario, engine),
                scenario.engine_script,
                engine,
                str(scenario.runtime["mode"]),
                output_format=scenario.gemini_output_format if engine == "gemini" else None,
                output_schema="greeting" if scenario.skill.get("output_schema", True) is not None else "none",
            )
            if capture is not None:
                yield replace(capture, name=f"{scenario.id} [{engine}]")
