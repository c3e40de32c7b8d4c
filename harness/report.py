"""Reports: JSON Lines (header, one line per case, footer) and JUnit XML.

A report without its footer is a run that died; ``read_report`` refuses it
rather than presenting a partial verdict as a whole one.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any
from xml.etree import ElementTree

from harness import __version__
from harness.catalog import CATALOG_VERSION
from harness.runner import CaseResult
from harness.verdict import OUTCOMES


class ReportError(ValueError):
    pass


class JsonlReport:
    """Writes as the run goes, so a crash leaves a readable but footer-less (refused) file."""

    def __init__(self, stream: IO[str], *, target: str, engines: Sequence[str], planned: int) -> None:
        self._stream = stream
        self._started = time.time()
        self._counts: Counter[str] = Counter()
        self._write(
            {
                "kind": "header",
                "turngate_version": __version__,
                "catalog_version": CATALOG_VERSION,
                "target": target,
                "engines": list(engines),
                "planned": planned,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started)),
            }
        )

    def case(self, result: CaseResult) -> None:
        self._counts[result.outcome] += 1
        self._write({"kind": "case", **asdict(result)})

    def finish(self, *, interrupted: bool = False) -> None:
        """The footer. ``interrupted``: the user stopped the run (Ctrl-C); the cases above are all
        that finished, and the footer says so rather than pass for a whole run."""
        counts = {outcome: self._counts.get(outcome, 0) for outcome in OUTCOMES}
        counts.update({outcome: n for outcome, n in self._counts.items() if outcome not in counts})
        footer: dict[str, Any] = {
            "kind": "footer",
            "counts": counts,
            "duration_sec": round(time.time() - self._started, 3),
        }
        if interrupted:
            footer["interrupted"] = True
        self._write(footer)

    def _write(self, line: Mapping[str, Any]) -> None:
        self._stream.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        self._stream.flush()


def read_report(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """Header, cases, footer; a missing header or footer, or a miscount, is an error."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    if not lines or lines[0].get("kind") != "header":
        raise ReportError(f"{path}: no header line: not a turngate report")
    if lines[-1].get("kind") != "footer":
        raise ReportError(f"{path}: no footer line: the run did not finish; its verdict is incomplete")
    cases = [line for line in lines[1:-1] if line.get("kind") == "case"]
    footer = lines[-1]
    if sum(footer["counts"].values()) != len(cases):
        raise ReportError(
            f"{path}: the footer counts {sum(footer['counts'].values())} cases, the file holds {len(cases)}"
        )
    return lines[0], cases, footer


def run_properties(*, target: str, engines: Sequence[str], reading: str | None, jobs: int) -> dict[str, str]:
    """What identifies a run, for JUnit's ``<properties>`` (the JSON Lines header has the same)."""
    return {
        "turngate_version": __version__,
        "catalog_version": CATALOG_VERSION,
        "target": target,
        "engines": ",".join(engines),
        "reading": reading or "(each scenario's default)",
        "jobs": str(jobs),
    }


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def _readings(result: CaseResult) -> str:
    return ", ".join(f"{name}={outcome}" for name, outcome in result.readings.items())


def write_junit(
    stream: IO[str],
    results: Iterable[CaseResult],
    *,
    properties: Mapping[str, str],
    started_at: float,
    interrupted: bool = False,
) -> None:
    """JUnit XML as CI servers read it: a suite per capability, totals, ``time`` and ``timestamp``
    on every level, and the run's properties (target, versions, engines, reading)."""
    results = list(results)
    suites: dict[str, list[CaseResult]] = {}
    for result in results:
        suites.setdefault(result.capability, []).append(result)
    everything = Counter(result.outcome for result in results)
    root = ElementTree.Element(
        "testsuites",
        name=f"turngate against {properties.get('target', '?')}",
        tests=str(len(results)),
        failures=str(everything["failed"]),
        errors=str(everything["errored"] + everything["unreached"]),
        skipped=str(everything["skipped"]),
        time=f"{sum(result.duration_sec for result in results):.3f}",
        timestamp=_iso(started_at),
    )
    for capability, members in sorted(suites.items()):
        counts = Counter(result.outcome for result in members)
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=capability,
            tests=str(len(members)),
            failures=str(counts["failed"]),
            errors=str(counts["errored"] + counts["unreached"]),
            skipped=str(counts["skipped"]),
            time=f"{sum(result.duration_sec for result in members):.3f}",
            timestamp=_iso(started_at),
        )
        listed = ElementTree.SubElement(suite, "properties")
        for name, value in {**properties, "interrupted": str(interrupted).lower()}.items():
            ElementTree.SubElement(listed, "property", name=name, value=value)
        for result in sorted(members, key=lambda item: (item.scenario_id, item.engine)):
            case = ElementTree.SubElement(
                suite,
                "testcase",
                classname=result.scenario_id.rsplit("/", 1)[0].replace("/", "."),
                name=f"{result.scenario_id.rsplit('/', 1)[1]}[{result.engine}]",
                time=f"{result.duration_sec:.3f}",
            )
            first = result.message.split("\n")[0]
            match result.outcome:
                case "failed":
                    ElementTree.SubElement(case, "failure", message=first).text = result.message
                case "errored" | "unreached":
                    ElementTree.SubElement(case, "error", message=first).text = result.message
                case "skipped":
                    ElementTree.SubElement(case, "skipped", message=result.message)
                case "non-strict":
                    ElementTree.SubElement(case, "system-out").text = f"SHOULD-level miss: {result.message}"
                case "partial":
                    ElementTree.SubElement(
                        case, "system-out"
                    ).text = f"partial: MUST checks the target could not show\n{result.message}"
                case "ambiguous":  # not a failure: it holds under one reading of the sentence
                    ElementTree.SubElement(case, "system-out").text = f"ambiguous: {result.message}"
                    ElementTree.SubElement(case, "properties").append(
                        ElementTree.Element("property", name="readings", value=_readings(result))
                    )
    ElementTree.indent(root)
    stream.write(ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
