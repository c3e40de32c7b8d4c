"""Reports: JSON Lines (header, one line per case, footer) and JUnit XML.

A report without its footer is a run that died; ``read_report`` refuses it
rather than presenting a partial verdict as a whole one.
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from xml.etree import ElementTree

from turngate import __version__
from turngate.base.hostile_text import json_safe, xml_safe
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import CATALOG_VERSION
from turngate.judge.catalog.editions import default_edition
from turngate.judge.verdict import OUTCOMES

if TYPE_CHECKING:
    from turngate.judge.baseline import CaseCheck, Comparison


class ReportError(ValueError):
    pass


class JsonlReport:
    """Writes as the run goes, so a crash leaves a readable but footer-less (refused) file."""

    def __init__(
        self,
        stream: IO[str],
        *,
        target: str,
        engines: Sequence[str],
        planned: int,
        allow_partial: bool = False,
        edition: str | None = None,
    ) -> None:
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
                # how the run was judged: partial cases accepted as passing (--allow-partial) or failing
                "allow_partial": allow_partial,
                # the spec edition that judged the run (`turngate editions`)
                "edition": edition or default_edition().name,
                "started_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._started)),
            }
        )

    def case(self, result: CaseResult, *, baseline: CaseCheck | None = None) -> None:
        """A case line; with a baseline, its status there (``known``, ``new``, ``fixed``) and the
        entries named (``baseline_note``), when the baseline has something to say about it."""
        self._counts[result.outcome] += 1
        line: dict[str, Any] = {"kind": "case", **asdict(result)}
        if baseline is not None and baseline.status is not None:
            line.update(baseline=baseline.status, baseline_note=baseline.note)
        self._write(line)

    def finish(self, *, interrupted: bool = False, baseline: Comparison | None = None) -> None:
        """The footer. ``interrupted``: the user stopped the run (Ctrl-C); the cases above are all
        that finished, and the footer says so rather than pass for a whole run. ``baseline``: the
        run against it (counts, and the new and fixed entries)."""
        counts = {outcome: self._counts.get(outcome, 0) for outcome in OUTCOMES}
        counts.update({outcome: n for outcome, n in self._counts.items() if outcome not in counts})
        footer: dict[str, Any] = {
            "kind": "footer",
            "counts": counts,
            "duration_sec": round(time.time() - self._started, 3),
        }
        if interrupted:
            footer["interrupted"] = True
        if baseline is not None:
            footer["baseline"] = baseline.summary()
        self._write(footer)

    def _write(self, line: Mapping[str, Any]) -> None:
        # json_safe: a lone surrogate in any captured text is written as its escape, not a crash
        self._stream.write(json_safe(json.dumps(line, ensure_ascii=False, sort_keys=True)) + "\n")
        self._stream.flush()


def read_report(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """Header, cases, footer; a missing header or footer, or a miscount, is an error. ``-``: standard
    input (``turngate run --report-json - | turngate baseline write - -o known.yaml``).

    Case lines may carry fields a reader does not know (``baseline``, ``baseline_note``); reports
    written before them read the same."""
    raw = sys.stdin.buffer.read() if str(path) == "-" else path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ReportError(f"{path}: byte {error.start}: not UTF-8 text: not a turngate report") from None
    # Lines end at "\n" alone: str.splitlines would also cut at U+0085, U+2028 and U+2029, which a
    # captured text holds raw inside a JSON string.
    numbered = [(number, line) for number, line in enumerate(text.split("\n"), 1) if line.strip()]
    lines = []
    for number, line in numbered:
        try:
            parsed = json.loads(line)
        except ValueError as error:
            cut = " (the file ends inside this line: the run that wrote it was cut off)"
            ending = cut if number == numbered[-1][0] and not text.endswith("\n") else ""
            raise ReportError(f"{path}:{number}: not a JSON line: {error}{ending}") from None
        if not isinstance(parsed, dict):
            raise ReportError(f"{path}:{number}: not a JSON object: not a turngate report line")
        lines.append(parsed)
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


def run_properties(
    *,
    target: str,
    engines: Sequence[str],
    reading: str | None,
    jobs: int,
    allow_partial: bool = False,
    edition: str | None = None,
) -> dict[str, str]:
    """What identifies a run, for JUnit's ``<properties>`` (the JSON Lines header has the same)."""
    return {
        "allow_partial": str(allow_partial).lower(),
        "edition": edition or default_edition().name,
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


def _junit_kind(result: CaseResult, check: CaseCheck | None, allow_partial: bool = False) -> str:
    """How a case shows in JUnit: failure, error, skipped, or "" (it passed, maybe with a note). A
    partial case is a failure unless the run accepts partial (``verdict.fails_run``).

    With a baseline, a case failing only for known differences is *skipped* (its message says
    "known difference (baseline)"): every CI reader shows a skip apart and none fails the build on
    it, while the exit status stays 0. A known difference gone (fixed) is a failure, as it fails the run.
    """
    status = check.status if check is not None else None
    if status == "known":
        return "skipped"
    if status == "fixed" and result.outcome not in ("errored", "unreached"):
        return "failure"
    match result.outcome:
        case "failed":
            return "failure"
        case "partial" if not allow_partial:
            return "failure"
        case "errored" | "unreached":
            return "error"
        case "skipped":
            return "skipped"
    return ""


def write_junit(
    stream: IO[str],
    results: Iterable[CaseResult],
    *,
    properties: Mapping[str, str],
    started_at: float,
    interrupted: bool = False,
    baseline: Mapping[tuple[str, str], CaseCheck] | None = None,
    wall_sec: float | None = None,
    allow_partial: bool = False,
) -> None:
    """JUnit XML as CI servers read it: a suite per capability, totals, ``time`` and ``timestamp``
    on every level, and the run's properties (target, versions, engines, reading). ``baseline``: each
    case against the known differences (``--baseline``), by (scenario ID, engine). ``wall_sec``: how
    long the run took (the whole run's ``time``; cases run side by side, so their sum is more)."""
    results = list(results)
    checks = baseline or {}

    def check_of(result: CaseResult) -> CaseCheck | None:
        return checks.get((result.scenario_id, result.engine))

    suites: dict[str, list[CaseResult]] = {}
    for result in results:
        suites.setdefault(result.capability, []).append(result)

    def kind(result: CaseResult) -> str:
        return _junit_kind(result, check_of(result), allow_partial)

    everything = Counter(kind(result) for result in results)
    root = ElementTree.Element(
        "testsuites",
        name=f"turngate against {properties.get('target', '?')}",
        tests=str(len(results)),
        failures=str(everything["failure"]),
        errors=str(everything["error"]),
        skipped=str(everything["skipped"]),
        time=f"{wall_sec if wall_sec is not None else sum(result.duration_sec for result in results):.3f}",
        timestamp=_iso(started_at),
    )
    for capability, members in sorted(suites.items()):
        counts = Counter(kind(result) for result in members)
        suite = ElementTree.SubElement(
            root,
            "testsuite",
            name=capability,
            tests=str(len(members)),
            failures=str(counts["failure"]),
            errors=str(counts["error"]),
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
            check = check_of(result)
            if check is not None and check.status is not None:
                _baselined(case, result, check, allow_partial)
                continue
            match result.outcome:
                case "failed":
                    ElementTree.SubElement(case, "failure", message=first).text = result.message
                case "errored" | "unreached":
                    ElementTree.SubElement(case, "error", message=first).text = result.message
                case "skipped":
                    ElementTree.SubElement(case, "skipped", message=result.message)
                case "non-strict":
                    ElementTree.SubElement(case, "system-out").text = f"SHOULD-level miss: {result.message}"
                case "partial" if not allow_partial:
                    ElementTree.SubElement(
                        case, "failure", message=f"partial: MUST checks the target could not show: {first}"
                    ).text = f"{result.message}\n(--allow-partial accepts partial cases)"
                case "partial":
                    accepted = "partial (accepted: --allow-partial): MUST checks the target could not show"
                    ElementTree.SubElement(case, "system-out").text = f"{accepted}\n{result.message}"
                case "ambiguous":  # not a failure: it holds under one reading of the sentence
                    ElementTree.SubElement(case, "system-out").text = f"ambiguous: {result.message}"
                    ElementTree.SubElement(case, "properties").append(
                        ElementTree.Element("property", name="readings", value=_readings(result))
                    )
    _xml_safe(root)
    ElementTree.indent(root)
    stream.write(ElementTree.tostring(root, encoding="unicode", xml_declaration=True) + "\n")


def _xml_safe(root: ElementTree.Element) -> None:
    """Every text and attribute under ``root`` as XML 1.0 can hold it (NUL and lone surrogates from
    an engine's output shown as ``\\x00``, ``\\ud83d``): ElementTree writes them raw, which no XML
    reader accepts and UTF-8 cannot encode."""
    for element in root.iter():
        if element.text:
            element.text = xml_safe(element.text)
        for name, value in element.attrib.items():
            element.attrib[name] = xml_safe(value)


def _baselined(case: ElementTree.Element, result: CaseResult, check: CaseCheck, allow_partial: bool) -> None:
    """A case the baseline speaks of: its note is the message a CI page shows first, the verdict's
    whole message the text, and a ``baseline`` property says known, new or fixed."""
    text = f"{check.note}\n\n{result.message}".rstrip()
    match _junit_kind(result, check, allow_partial):
        case "skipped":
            ElementTree.SubElement(case, "skipped", message=check.note).text = text
        case "failure":
            ElementTree.SubElement(case, "failure", message=check.note).text = text
        case "error":
            ElementTree.SubElement(case, "error", message=check.note).text = text
        case _:  # not failing, nothing fixed: the baseline has nothing to say (status is None)
            pass
    ElementTree.SubElement(case, "properties").append(
        ElementTree.Element("property", name="baseline", value=str(check.status))
    )
