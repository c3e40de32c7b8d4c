"""One self-contained HTML file: the matrix scenario × engine, one column set per report.

Given several reports (two implementations, or before and after), their
columns stand side by side, as Bowtie's site shows implementations. Each cell
opens its differences, each with the words that back it (the spec's quote).
Filters by outcome and by capability. Inline CSS and JS, no network: the file
can be mailed, attached to CI, opened from disk. A run against a baseline
(``--baseline``) shows its known failing cases apart ("known (baseline)"), and
the cases whose known difference is gone ("fixed"), with the entries named.

What fails a run is ``verdict.fails_run``: a cell that fails it is marked so (a red bar under it),
partial included unless its report accepts partial (the header's ``allow_partial``, from
``--allow-partial``); a failing partial cell stays visibly partial (◐, tinted), not a failed one.
The page opens the first cell that failed (failed, errored, unreached, or fixed against a
baseline), else the first partial one; a legend explains every mark and colour. Each cell has a
stable anchor (``r1/codex/<scenario id>``: report, engine, scenario): the page opened with
``#<anchor>`` opens that cell, and the cell's panel offers its link. With two reports or more, a
filter keeps the rows whose outcome changed between them.

Everything from a report (messages, captured values) is escaped here, in
Python, before it reaches the page: a hostile capture cannot script the page.
The differences are rendered generically (step, key, expected, actual,
severity and what backs them), so a field added to the verdict shows up
without a change here.
"""

from __future__ import annotations

import html
import json
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from urllib.parse import quote

from turngate.base.hostile_text import shown_safe
from turngate.judge.catalog import ENGINES
from turngate.judge.verdict import fails_run

if TYPE_CHECKING:
    from turngate.judge.baseline import Comparison

# Inlined into every page (one file, no network); kept beside this module to be read and linted as CSS/JS.
STYLE_PATH: Final = Path(__file__).with_name("html_report.css")
SCRIPT_PATH: Final = Path(__file__).with_name("html_report.js")
OUTCOME_ORDER: Final = (
    "failed",
    "errored",
    "unreached",
    "fixed",
    "known",
    "partial",
    "non-strict",
    "ambiguous",
    "passed",
    "skipped",
)
SYMBOLS: Final = {
    "passed": "✓",
    "failed": "✗",
    "partial": "◐",
    "non-strict": "≈",
    "ambiguous": "⁇",
    "skipped": "–",
    "errored": "!",
    "unreached": "?",
    "known": "⊘",
    "fixed": "↺",
}
# With a baseline (turngate run --baseline), a case it speaks of shows apart from its outcome: failing
# only for known differences ("known (baseline)", not failing the run), or with a known one gone
# ("fixed": it fails the run until the baseline drops it). A case failing for a new one keeps its outcome.
SHOWN_APART: Final = frozenset({"known", "fixed"})
LABELS: Final = {"known": "known (baseline)", "fixed": "fixed (baseline)"}
# The legend: what each mark means (partial's depends on the run: _legend).
MEANINGS: Final = {
    "failed": "a MUST broken: fails the run",
    "errored": "the case could not be run: fails the run",
    "unreached": "not run: the target stopped answering: fails the run",
    "fixed": "a difference the baseline lists is gone: fails the run until the baseline drops it",
    "known": "fails only for differences the baseline lists: let through, not failing the run",
    "non-strict": "a SHOULD broken: does not fail the run",
    "ambiguous": "holds under some reading of an ambiguous sentence, breaks another: does not fail the run",
    "passed": "every check held",
    "skipped": "not run: the target cannot show what the case needs",
}


def accepts_partial(report: ReportColumns) -> bool:
    """The run was judged with --allow-partial: its header's ``allow_partial`` ("true" in the run's
    properties, true in a saved JSON Lines header). Anything else: partial fails the run."""
    value = report.header.get("allow_partial")
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def cell_fails(outcome: str, *, allow_partial: bool) -> bool:
    """Whether a cell showing ``outcome`` fails the run: the run's own rule (``fails_run``), and a
    baseline's "fixed" (failing until the baseline drops it); "known" is let through."""
    if outcome in SHOWN_APART:
        return outcome == "fixed"
    return fails_run(outcome, allow_partial=allow_partial)


def cell_anchor(report_index: int, engine: str, scenario_id: str) -> str:
    """A cell's stable id, usable as a URL fragment as it is: ``r1/codex/<scenario id>`` (the report's
    place, from 1, then the engine and the scenario), anything but ``[A-Za-z0-9._/-]`` percent-encoded."""
    text = f"r{report_index + 1}/{engine}/{scenario_id}"
    return quote(text, safe="/._-", errors="surrogatepass")


@dataclass(frozen=True, slots=True)
class ReportColumns:
    """One report: its label, header (target, versions, start), case lines and footer."""

    label: str
    header: Mapping[str, Any]
    cases: Sequence[Mapping[str, Any]]
    footer: Mapping[str, Any]


def from_file(path: Path) -> ReportColumns:
    from turngate.judge.report import read_report

    header, cases, footer = read_report(path)
    # the edition in the label: one server's run judged by two editions side by side reads as such
    edition = f" by {header['edition']}" if header.get("edition") else ""
    return ReportColumns(f"{path.name}: {header.get('target', '?')}{edition}", header, cases, footer)


def from_results(
    results: Iterable[Any],
    header: Mapping[str, Any],
    *,
    interrupted: bool,
    baseline: Comparison | None = None,
) -> ReportColumns:
    """A run's results (``CaseResult`` values) as a report, for ``turngate run --html``; ``baseline``:
    the run against its known differences, as the JSON Lines report records it."""
    checks = {(check.case, check.engine): check for check in baseline.cases} if baseline else {}
    cases = []
    for result in results:
        case = asdict(result)
        check = checks.get((result.scenario_id, result.engine))
        if check is not None and check.status is not None:
            case.update(baseline=check.status, baseline_note=check.note)
        cases.append(case)
    counts = Counter(str(case["outcome"]) for case in cases)
    footer: dict[str, Any] = {"counts": dict(counts), **({"interrupted": True} if interrupted else {})}
    if baseline is not None:
        footer["baseline"] = baseline.summary()
    return ReportColumns(str(header.get("target", "run")), header, cases, footer)


def shown_outcome(case: Mapping[str, Any]) -> str:
    """The outcome a cell shows: the baseline's known or fixed where it has one, else the case's own."""
    status = case.get("baseline")
    return str(status) if status in SHOWN_APART else str(case["outcome"])


def render(reports: Sequence[ReportColumns], *, title: str = "turngate report") -> str:
    engines = [
        engine for engine in ENGINES if any(case["engine"] == engine for r in reports for case in r.cases)
    ]
    engines += sorted({str(case["engine"]) for r in reports for case in r.cases} - set(engines))
    by_cell: list[dict[tuple[str, str], Mapping[str, Any]]] = [
        {(str(case["scenario_id"]), str(case["engine"])): case for case in report.cases} for report in reports
    ]
    scenarios: dict[str, str] = {}  # id -> capability
    for report in reports:
        for case in report.cases:
            scenarios.setdefault(str(case["scenario_id"]), str(case.get("capability", "")))
    capabilities = sorted(set(scenarios.values()))
    outcomes_seen = [o for o in OUTCOME_ORDER if any(shown_outcome(c) == o for r in reports for c in r.cases)]

    accepting = [accepts_partial(report) for report in reports]
    head = ['<tr><th class="sid" rowspan="2">scenario</th>']
    head += [
        f'<th class="set" colspan="{len(engines)}" title="{_e(report.label)}; {_e(_describe(report))}">'
        f"{_e(_short(report.label))}"
        f'<div class="counts">{_e(_counts(report))}</div></th>'
        for report in reports
    ]
    head.append("</tr><tr>")
    head += [f'<th class="eng">{_e(engine)}</th>' for _ in reports for engine in engines]
    head.append("</tr>")

    rows: list[str] = []
    details: list[str] = []
    current = None
    for scenario_id, capability in sorted(scenarios.items(), key=lambda item: (item[1], item[0])):
        if capability != current:
            current = capability
            span = 1 + len(engines) * len(reports)
            rows.append(
                f'<tr class="group" data-capability="{_e(capability)}"><th colspan="{span}">'
                f"{_e(capability)}</th></tr>"
            )
        row_outcomes: set[str] = set()
        cells = []
        for index, cells_of_report in enumerate(by_cell):
            for engine in engines:
                found = cells_of_report.get((scenario_id, engine))
                if found is None:
                    cells.append('<td class="cell none" title="not in this report">·</td>')
                    continue
                outcome = shown_outcome(found)
                row_outcomes.add(outcome)
                detail_id = f"d{len(details)}"
                anchor = cell_anchor(index, engine, scenario_id)
                fails = cell_fails(outcome, allow_partial=accepting[index])
                details.append(_detail(detail_id, reports[index], found, anchor=anchor, fails=fails))
                label = LABELS.get(outcome, outcome) + (": fails the run" if fails else "")
                cells.append(
                    f'<td id="{_e(anchor)}" class="cell {_e(outcome)}{" fails" if fails else ""}"'
                    f' data-outcome="{_e(outcome)}" data-detail="{detail_id}"'
                    f' tabindex="0" title="{_e(label)}">{SYMBOLS.get(outcome, "•")}</td>'
                )
        outcomes = " ".join(sorted(row_outcomes))
        changed = " data-changed" if _changed(by_cell, scenario_id, engines) else ""
        rows.append(
            f'<tr class="case" data-capability="{_e(capability)}" data-outcomes="{_e(outcomes)}"{changed}>'
            f'<th class="sid">{_e(scenario_id)}</th>{"".join(cells)}</tr>'
        )

    outcome_filters = "".join(
        f'<label class="pill {_e(o)}"><input type="checkbox" name="outcome" value="{_e(o)}" checked>'
        f" {SYMBOLS[o]} {_e(LABELS.get(o, o))}</label>"
        for o in outcomes_seen
    )
    if len(reports) > 1:
        outcome_filters += (
            '<label class="pill" title="only the rows where a scenario on an engine has another outcome'
            ' in one report than in another (an engine a report did not run is not compared)">'
            '<input type="checkbox" id="changed"> changed between reports</label>'
        )
    capability_options = "".join(f'<option value="{_e(c)}">{_e(c)}</option>' for c in capabilities)
    generated = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    interrupted = [report.label for report in reports if report.footer.get("interrupted")]
    warning = (
        f'<p class="warn">Interrupted run(s): {_e(", ".join(interrupted))}: only the cases that finished.</p>'
        if interrupted
        else ""
    )
    warning += "".join(_baseline_line(report) for report in reports)
    return _PAGE.format(
        title=_e(title),
        generated=_e(generated),
        warning=warning,
        outcome_filters=outcome_filters,
        capability_options=capability_options,
        legend=_legend(reports, accepting),
        head="".join(head),
        rows="".join(rows),
        details="".join(details),
        style=STYLE_PATH.read_text(encoding="utf-8"),
        script=SCRIPT_PATH.read_text(encoding="utf-8"),
    )


def _changed(
    by_cell: Sequence[Mapping[tuple[str, str], Mapping[str, Any]]], scenario_id: str, engines: Sequence[str]
) -> bool:
    """A scenario's outcome differs between the reports on some engine (the case's own outcome, not a
    baseline's view of it); an engine only one report ran is not compared."""
    for engine in engines:
        seen = {
            str(cells[(scenario_id, engine)]["outcome"])
            for cells in by_cell
            if (scenario_id, engine) in cells
        }
        if len(seen) > 1:
            return True
    return False


def _legend(reports: Sequence[ReportColumns], accepting: Sequence[bool]) -> str:
    """Every mark a cell can carry, its colour (a sample cell in the page's own style) and its meaning."""
    baseline = any(case.get("baseline") in SHOWN_APART for report in reports for case in report.cases)
    items = []
    for outcome in OUTCOME_ORDER:
        if outcome in SHOWN_APART and not baseline:
            continue
        if outcome == "partial":
            if not all(accepting):
                items.append(
                    _legend_item(
                        "partial fails",
                        SYMBOLS[outcome],
                        "partial",
                        "MUST checks the target could not all show: fails the run (partial not accepted)",
                    )
                )
            if any(accepting):
                accepted = ", ".join(_short(r.label) for r, ok in zip(reports, accepting, strict=True) if ok)
                items.append(
                    _legend_item(
                        "partial",
                        SYMBOLS[outcome],
                        "partial, accepted",
                        f"the same, in a run that accepts partial (--allow-partial: {accepted}): not failing",
                    )
                )
            continue
        fails = cell_fails(outcome, allow_partial=True)
        items.append(
            _legend_item(
                f"{outcome}{' fails' if fails else ''}",
                SYMBOLS[outcome],
                LABELS.get(outcome, outcome),
                MEANINGS[outcome],
            )
        )
    items.append(
        _legend_item("none", "·", "no case", "the report has no such case (not run, or not selected)")
    )
    items.append(
        _legend_item("fails", "&nbsp;", "red bar", "under a cell: that case fails its run", raw=True)
    )
    items.append(
        _legend_item(
            "chosen", "&nbsp;", "blue outline", "the cell whose differences the panel shows", raw=True
        )
    )
    return f'<div class="legend" id="legend"><strong>Legend</strong><ul>{"".join(items)}</ul></div>'


def _legend_item(classes: str, mark: str, name: str, meaning: str, *, raw: bool = False) -> str:
    shown = mark if raw else _e(mark)
    return f'<li><span class="sample cell {_e(classes)}">{shown}</span> <b>{_e(name)}</b>: {_e(meaning)}</li>'


def _e(value: object) -> str:
    # shown_safe: NUL and lone surrogates cannot be written (nor read back) raw, and bidi controls
    # would reorder what the page shows around them; each is written visibly, as ``\\u202e``.
    return shown_safe(html.escape(str(value), quote=True))


def _short(label: str, width: int = 44) -> str:
    """A column set's label as shown (the whole one is its tooltip): long command lines lose their middle."""
    if len(label) <= width:
        return label
    keep = (width - 1) // 2
    return f"{label[:keep]}…{label[-keep:]}"


def _baseline_line(report: ReportColumns) -> str:
    """Under the title: the run against its baseline, and each entry that fails it (new, fixed)."""
    summary = report.footer.get("baseline")
    if not isinstance(summary, Mapping):
        return ""
    new, fixed = list(summary.get("new") or ()), list(summary.get("fixed") or ())
    said = (
        f"{_e(_short(report.label))}: baseline {_e(summary.get('file', '?'))}: {_e(summary.get('known', 0))}"
        f" known difference(s) let through, {len(new)} new, {len(fixed)} fixed"
    )
    items = [f"<li>new: {_e(_entry(entry))}</li>" for entry in new]
    items += [f"<li>fixed, remove it from the baseline: {_e(_entry(entry))}</li>" for entry in fixed]
    kind = "warn" if new or fixed else "note"
    listed = f"<ul>{''.join(items)}</ul>" if items else ""
    return f'<div class="{kind} baseline"><p>{said}</p>{listed}</div>'


def _entry(entry: Any) -> str:
    if not isinstance(entry, Mapping):
        return str(entry)
    what = entry.get("outcome") or f"{entry.get('check')} ({entry.get('sentence')})"
    return f"{entry.get('case')} [{entry.get('engine')}]: {what}"


def _counts(report: ReportColumns) -> str:
    counts = Counter(shown_outcome(case) for case in report.cases)
    return "  ".join(f"{counts[o]} {o}" for o in OUTCOME_ORDER if counts[o])


def _describe(report: ReportColumns) -> str:
    header = report.header
    parts = [
        f"{key}: {header[key]}"
        for key in ("target", "edition", "turngate_version", "started_at")
        if header.get(key)
    ]
    parts.append("partial accepted (--allow-partial)" if accepts_partial(report) else "partial fails the run")
    return "; ".join(parts)


def _detail(
    detail_id: str, report: ReportColumns, case: Mapping[str, Any], *, anchor: str, fails: bool
) -> str:
    """The panel a cell opens: the case and the cell's link, then every difference with what backs it."""
    outcome = str(case["outcome"])
    shown = shown_outcome(case)
    badges = f'<span class="badge {_e(outcome)}">{_e(outcome)}</span>'
    if shown != outcome:
        badges += f' <span class="badge {_e(shown)}">{_e(LABELS.get(shown, shown))}</span>'
    if fails:
        badges += ' <span class="badge fails-run">fails the run</span>'
    parts = [
        f'<div class="detail" id="{detail_id}" hidden>',
        f"<h2>{badges} {_e(case['scenario_id'])} [{_e(case['engine'])}]"
        f' <a class="cell-link" href="#{_e(anchor)}" title="a link to this cell: the page opens it">'
        "link to this cell</a></h2>",
        f'<p class="meta">{_e(report.label)} · {_e(case.get("level", ""))}'
        f"{' · reading ' + _e(case['reading']) if case.get('reading') else ''}"
        f" · {_e(case.get('duration_sec', ''))} s</p>",
    ]
    if case.get("baseline_note"):
        status = f"status-{case.get('baseline')}"
        parts.append(f'<p class="baseline-note {_e(status)}">{_e(case["baseline_note"])}</p>')
    readings = case.get("readings") or {}
    if isinstance(readings, Mapping) and readings:  # judged under every reading of an ambiguous sentence
        shown = ", ".join(f"{name}: {verdict}" for name, verdict in readings.items())
        parts.append(f'<p class="meta">readings judged: {_e(shown)}</p>')
    differences = [d for d in case.get("differences") or () if isinstance(d, Mapping)]
    if differences:
        parts.append(f'<ol class="differences">{"".join(_difference(d) for d in differences)}</ol>')
    elif case.get("message"):
        parts.append(f'<pre class="message">{_e(case["message"])}</pre>')
    else:
        parts.append("<p>Every check held.</p>")
    parts.append("</div>")
    return "".join(parts)


def _difference(difference: Mapping[str, Any]) -> str:
    severity = str(difference.get("severity", ""))
    known = {
        "step",
        "action",
        "key",
        "expected",
        "actual",
        "severity",
        "authority",
        "level",
        "quote",
        "source",
        "note",
        "reading",
    }
    rows = [
        f'<div class="what"><span class="sev {_e(severity)}">{_e(severity)}</span> '
        f"step {_e(difference.get('step', '?'))}"
        f"{' (' + _e(difference['action']) + ')' if difference.get('action') else ''}: "
        f"<code>{_e(difference.get('key', ''))}</code>"
        f"{' under reading ' + _e(difference['reading']) if difference.get('reading') else ''}</div>",
        f'<div class="kv"><span>expected</span><pre>{_e(_show(difference.get("expected")))}</pre></div>',
        f'<div class="kv"><span>actual</span><pre>{_e(_show(difference.get("actual")))}</pre></div>',
    ]
    authority = difference.get("authority")
    backed = " ".join(str(part) for part in (difference.get("level"), authority) if part)
    if difference.get("source"):
        backed += f" ({difference['source']})"
    if backed:
        rows.append(f'<div class="kv"><span>backed by</span><div>{_e(backed)}</div></div>')
    if difference.get("quote"):
        rows.append(f'<blockquote class="quote">{_e(str(difference["quote"]).strip())}</blockquote>')
    if difference.get("note"):
        rows.append(f'<div class="kv"><span>note</span><div>{_e(difference["note"])}</div></div>')
    for name, value in difference.items():  # fields this page does not know yet, shown as they are
        if name not in known and value not in (None, "", [], {}):
            rows.append(f'<div class="kv"><span>{_e(name)}</span><pre>{_e(_show(value))}</pre></div>')
    return f'<li class="difference">{"".join(rows)}</li>'


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1, default=str)


_PAGE: Final = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title><style>{style}</style></head>
<body>
<header><h1>{title}</h1><p>Generated by turngate, {generated}. Each cell is one scenario on one engine;
select it to read its differences and the spec's words behind each, and its link.</p></header>
{warning}
<div class="controls">
<strong>Outcome</strong> {outcome_filters}
<label><strong>Capability</strong> <select id="capability">
<option value="">all</option>{capability_options}</select></label>
<span id="shown"></span>
</div>
{legend}
<main>
<div class="matrix"><table id="matrix"><thead>{head}</thead><tbody>{rows}</tbody></table></div>
<aside id="panel"><p>Select a cell to see its differences.</p></aside>
</main>
<div id="details" hidden>{details}</div>
<script>{script}</script>
</body></html>
"""
