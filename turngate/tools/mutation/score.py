"""The mutation score: per mutant, run the catalog cases that cite its sentences and see whether one kills it.

A mutant is killed when some case reports a difference whose authority is
one of the mutant's sentences. Cases that cite none of them are not run: a
difference there would not be the sentence the mutant breaks.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from turngate.base.data_yaml import load_data
from turngate.implementations.mutants.model import Mutant
from turngate.judge.case_result import CaseResult
from turngate.judge.catalog import Scenario
from turngate.judge.pool import cases, run_all
from turngate.judge.targets import Target


@dataclass(frozen=True, slots=True)
class MutantResult:
    mutant: Mutant
    cases_run: int
    killers: tuple[str, ...]  # "scenario [engine]" of each case that cited one of its sentences
    errored: tuple[str, ...]  # cases that broke (a mutant that crashes the harness is not killed by it)

    @property
    def killed(self) -> bool:
        return bool(self.killers)


def sentence_registry() -> dict[str, Mapping[str, Any]]:
    """The spec sentences by ID (turngate/judge/catalog/sentences.yaml), as plain mappings."""
    from turngate.judge.catalog.sentences import sentences

    return {
        key: {"file": entry.file, "level": entry.level, "observable": entry.observable}
        for key, entry in sentences().items()
    }


def cited_sentences(scenario: Scenario) -> frozenset[str]:
    """The sentence IDs a scenario's checks name as their authority (its ``by:`` maps, anywhere)."""
    stat = scenario.path.stat()
    return _cited_in(scenario.path, stat.st_mtime_ns, stat.st_size)


# A score asks each scenario once per mutant (eighty times a catalog): each file is read once per
# version of it, its modification time and size telling a changed file from the one read.
@functools.lru_cache(maxsize=4096)
def _cited_in(path: Path, _mtime_ns: int, _size: int) -> frozenset[str]:
    found: set[str] = set()

    def walk(value: Any) -> None:
        match value:
            case Mapping():
                for key, item in value.items():
                    if key == "by":  # a map of checks (per reading, per step) to authorities, or one
                        found.update(name for name in _leaves(item) if "#" in name)
                    else:
                        walk(item)
            case list() | tuple():
                for item in value:
                    walk(item)

    walk(load_data(path.read_text(encoding="utf-8")))
    return frozenset(found)


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, str):
        yield value


def citing(scenarios: Sequence[Scenario], sentences: Iterable[str]) -> tuple[Scenario, ...]:
    wanted = set(sentences)
    chosen = []
    for scenario in scenarios:
        cited = cited_sentences(scenario)
        if cited & wanted:
            chosen.append(scenario)
        elif not cited and any(_by_id(scenario.id, sentence) for sentence in wanted):
            chosen.append(scenario)  # a scenario without authorities: the one the sentence's ID names
    return tuple(chosen)


def _by_id(scenario_id: str, sentence_id: str) -> bool:
    head = sentence_id.split("#", 1)[0]
    return scenario_id == head or scenario_id.startswith(head + "/")


def kills(result: CaseResult, sentences: Iterable[str]) -> bool:
    """Whether a case reports a difference (a real one, not unverified) citing one of ``sentences``.

    An ambiguous case (judged under every reading) kills only by its default reading, the one the
    reference implements: the differences it shows are those of every reading it breaks, and the
    reference itself breaks the others (the marker then a failed turn: evidence-first against the
    default process-failure-fails), so a break of another reading is no sign of the mutant."""
    differences = result.differences
    if result.outcome == "ambiguous":
        default = (result.checks or {}).get("default_reading")
        if default is None or result.readings.get(str(default)) not in ("failed", "non-strict"):
            return False
        differences = tuple(item for item in differences if item.get("reading") == default)
    wanted = set(sentences)
    for difference in differences:
        if difference.get("authority") in wanted and difference.get("severity") in ("failed", "non-strict"):
            return True
    return False


def run_mutant(
    mutant: Mutant, scenarios: Sequence[Scenario], *, jobs: int, every_case: bool = False
) -> MutantResult:
    """Run the cases citing the mutant's sentences, those of the sentences' own scenarios first.

    They run in small batches and stop after the batch that kills the mutant, unless ``every_case``
    (then ``killers`` lists every case that kills it).
    """
    chosen = citing(scenarios, mutant.sentences)
    own = {sentence.split("#", 1)[0] for sentence in mutant.sentences}
    ordered = sorted(chosen, key=lambda scenario: (scenario.id not in own, scenario.id))
    planned = cases(ordered, None)
    target = Target(f"reference --mutant {mutant.name}", "reference", mutant=mutant.name)
    killers: list[str] = []
    errored: list[str] = []
    size = len(planned) if every_case else max(2 * jobs, 4)
    ran = 0
    for start in range(0, len(planned), size):
        batch = planned[start : start + size]
        ran += len(batch)
        for result in run_all(batch, target=target, jobs=jobs, reading=mutant.reading):
            name = f"{result.scenario_id} [{result.engine}]"
            if kills(result, mutant.sentences):
                killers.append(name)
            elif result.outcome in ("errored", "unreached"):
                errored.append(name)
        if killers and not every_case:
            break
    return MutantResult(mutant, ran, tuple(sorted(killers)), tuple(sorted(errored)))


def score(results: Sequence[MutantResult], registry: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The mutation score as JSON: overall, per spec file, and the spec sentences a mutant covers."""
    per_file: dict[str, Counter[str]] = {}
    for result in results:
        files = {str(registry[s]["file"]) for s in result.mutant.sentences if s in registry}
        for name in files or {"?"}:
            counts = per_file.setdefault(name, Counter())
            counts["total"] += 1
            counts["killed"] += int(result.killed)
    normative = {key for key, entry in registry.items() if entry.get("level") in ("MUST", "SHOULD")}
    covered = normative & {s for result in results for s in result.mutant.sentences}
    killed_sentences = normative & {s for result in results if result.killed for s in result.mutant.sentences}
    killed = sum(result.killed for result in results)
    return {
        "score": {
            "killed": killed,
            "total": len(results),
            "ratio": round(killed / len(results), 4) if results else 0,
        },
        "per_file": {name: dict(counts) for name, counts in sorted(per_file.items())},
        "sentences": {
            "must_and_should": len(normative),
            "with_a_mutant": len(covered),
            "with_a_killed_mutant": len(killed_sentences),
            "without_a_mutant": sorted(normative - covered),
        },
        "mutants": [
            {
                "name": result.mutant.name,
                "summary": result.mutant.summary,
                "sentences": list(result.mutant.sentences),
                "reading": result.mutant.reading,
                "cases_run": result.cases_run,
                "killed": result.killed,
                "killed_by": list(result.killers),
                "errored": list(result.errored),
            }
            for result in results
        ],
    }


def write_score(path: Path, document: Mapping[str, Any]) -> None:
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


GENERATED: Final = (
    "<!-- generated by `turngate mutants run --markdown docs/mutants.md`; do not edit below -->"
)


def markdown_table(document: Mapping[str, Any], registry: Mapping[str, Mapping[str, Any]]) -> str:
    """Sentence -> mutants -> killing scenarios, for every MUST and SHOULD sentence, in registry order."""
    by_sentence: dict[str, list[Mapping[str, Any]]] = {}
    for mutant in document["mutants"]:
        for sentence in mutant["sentences"]:
            by_sentence.setdefault(sentence, []).append(mutant)
    total = document["score"]
    lines = [
        f"Mutation score: **{total['killed']}/{total['total']}** mutants killed; "
        f"{document['sentences']['with_a_mutant']} of {document['sentences']['must_and_should']}"
        " MUST/SHOULD sentences have a mutant.",
        "",
        "| sentence | level | mutants | killed by |",
        "| --- | --- | --- | --- |",
    ]
    for sentence, entry in registry.items():
        if entry.get("level") not in ("MUST", "SHOULD"):
            continue
        mutants = by_sentence.get(sentence, [])
        if not mutants:
            from turngate.implementations.mutants.registry import WITHOUT_A_MUTANT

            why = entry.get("observable") or WITHOUT_A_MUTANT.get(sentence, "no mutant yet")
            lines.append(f"| `{sentence}` | {entry['level']} | - | no black-box check: {why} |")
            continue
        names = ", ".join(
            f"`{mutant['name']}`" + ("" if mutant["killed"] else " (SURVIVED)") for mutant in mutants
        )
        killers = sorted({case.split(" [", 1)[0] for mutant in mutants for case in mutant["killed_by"]})
        shown = ", ".join(f"`{case}`" for case in killers[:3]) + (
            f" +{len(killers) - 3}" if len(killers) > 3 else ""
        )
        lines.append(f"| `{sentence}` | {entry['level']} | {names} | {shown or '-'} |")
    return "\n".join(lines) + "\n"


def write_markdown(path: Path, table: str) -> None:
    """Replace what follows the generated marker in ``path`` (or append the marker and the table)."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    head = text.split(GENERATED, 1)[0].rstrip("\n")
    path.write_text(f"{head}\n\n{GENERATED}\n\n{table}", encoding="utf-8")
