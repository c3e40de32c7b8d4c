"""Script file → validated, normalised plain data (the slow path, run on a cache miss).

Validation is the JSON Schema shipped beside this module, with jsonschema; the
first error is reported with the file, the field (a path such as
`turns[0].steps[1].sleep`) and the offending value. Normalising fills every
default and turns each step into one canonical shape, so the engine's hot path
can `match` on plain dicts without checking anything again.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from turngate.base.data_yaml import load_data
from turngate.engines.fake import hint_forms as hints
from turngate.engines.fake.problems import SCRIPT_INVALID, ScriptProblem

SCHEMA_PATH = Path(__file__).with_name("script.schema.json")

VARIANT_DEFAULTS: dict[str, dict[str, Any]] = {
    "codex": {"envelope": "items"},
    "gemini": {
        "document_stream": "stdout",
        "pretty": True,
        "noise": [],
        "noise_stream": "stdout",
        "glue_noise": False,
    },
    "iflow": {"block_stream": "stderr", "resuming_banner": False},
    "opencode": {"text_at": "part"},
    # claude 2.1.331 prints the `result` event's `type` key after `result`; result.result repeats the
    # last reply text (docs/fake-engines.md, "claude").
    "claude": {"result_type": "late", "result_echo": True},
    # qwen 0.24.4 prints a stray `stream_event` goal_state before the first answer of a process.
    "qwen": {"goal_state": True},
    # codebuddy 2.118.2 prints some reply texts only in result.result ("observed": as it was seen).
    "codebuddy": {"text_in_result_only": "observed", "result_echo": True},
    "kilo": {
        "error_before_step": True,
        "text_after_error": False,
        "error_string": False,
        "cut_ends_step": False,
    },
}


@cache
def schema() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return loaded


@cache
def _validator() -> jsonschema.protocols.Validator:
    cls = jsonschema.validators.validator_for(schema())
    cls.check_schema(schema())
    validator: jsonschema.protocols.Validator = cls(schema())
    return validator


def compile_script(path: Path) -> dict[str, Any]:
    """Read, validate and normalise one script; raise ScriptProblem naming what is wrong."""
    document = _read_yaml(path)
    check(document, str(path))
    if document["case"] != _case_id_of(path):
        raise ScriptProblem(
            SCRIPT_INVALID,
            str(path),
            "case",
            document["case"],
            f"the case id must equal the file name {_case_id_of(path)!r}",
        )
    return normalise(document, str(path))


def check(document: Any, file: str) -> None:
    """Raise ScriptProblem for the first schema violation in document order, if any."""
    errors = list(_validator().iter_errors(document))
    if not errors:
        return
    first = min(errors, key=lambda error: _document_position(document, error.absolute_path))
    # Within one place (a oneOf, say), let jsonschema pick the most telling cause.
    best = jsonschema.exceptions.best_match([first]) or first
    raise _problem_from(best, file, document)


def _document_position(document: Any, path: Any) -> tuple[int, ...]:
    """Where a path lies in reading order: list indexes, and key order in mappings."""
    position = []
    node = document
    for part in path:
        if isinstance(node, dict):
            keys = list(node)
            position.append(keys.index(part) if part in keys else len(keys))
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int):
            position.append(part)
            node = node[part] if part < len(node) else None
        else:
            break
    return tuple(position)


def _case_id_of(path: Path) -> str:
    return path.name.rsplit(".", 1)[0]


def _read_yaml(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ScriptProblem(SCRIPT_INVALID, str(path), "(file)", exc.object[:40], "not UTF-8") from exc
    try:
        return load_data(text)  # lone surrogate escapes read as on every platform
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(file)"
        line = text.splitlines()[mark.line] if mark and mark.line < len(text.splitlines()) else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScriptProblem(SCRIPT_INVALID, str(path), where, line, f"not YAML: {problem}") from exc


def field_path(parts: Any) -> str:
    """`turns[0].steps[1].say` from a jsonschema path."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"


def _problem_from(error: jsonschema.ValidationError, file: str, document: Any) -> ScriptProblem:
    path = list(error.absolute_path)
    instance: Any = error.instance
    schema_node: dict[str, Any] = error.schema if isinstance(error.schema, dict) else {}
    if "propertyNames" in error.absolute_schema_path:
        # The instance is the offending key: report the step under that key.
        step = _node_at(document, path)
        kinds = ", ".join(schema_node.get("enum", []))
        return ScriptProblem(
            SCRIPT_INVALID,
            file,
            field_path([*path, instance]),
            step.get(instance) if isinstance(step, dict) else instance,
            f"unknown step kind {instance!r} (expected one of {kinds})",
        )
    match error.validator:
        case "additionalProperties":
            allowed = set(schema_node.get("properties", {}))
            extra = [key for key in instance if key not in allowed]
            name = extra[0] if extra else "?"
            return ScriptProblem(
                SCRIPT_INVALID,
                file,
                field_path([*path, name]),
                instance.get(name),
                f"unknown field {name!r} (allowed: {', '.join(sorted(allowed))})",
            )
        case "required":
            missing = error.message.split("'")[1] if "'" in error.message else "?"
            return ScriptProblem(SCRIPT_INVALID, file, field_path([*path, missing]), None, error.message)
        case "not" if schema_node.get("description"):
            # A field forbidden where it stands (a repair answer's own `repair`): the schema says why.
            return ScriptProblem(SCRIPT_INVALID, file, field_path(path), instance, schema_node["description"])
        case "minProperties" | "maxProperties" if schema_node.get("propertyNames"):
            return ScriptProblem(
                SCRIPT_INVALID,
                file,
                field_path(path),
                instance,
                "a step is a mapping with exactly one key (its kind)",
            )
        case _:
            return ScriptProblem(SCRIPT_INVALID, file, field_path(path), instance, error.message)


def _node_at(document: Any, path: list[Any]) -> Any:
    node = document
    for part in path:
        node = node[part]
    return node


def normalise(document: dict[str, Any], file: str) -> dict[str, Any]:
    variants = document.get("variants", {})
    return {
        "case": document["case"],
        "file": file,
        "resident": bool(document.get("resident", False)),
        "variants": {
            engine: {**defaults, **variants.get(engine, {})} for engine, defaults in VARIANT_DEFAULTS.items()
        },
        "turns": [
            _normalise_turn(turn, file, f"turns[{index}]") for index, turn in enumerate(document["turns"])
        ],
    }


def _normalise_turn(turn: dict[str, Any], file: str, where: str) -> dict[str, Any]:
    end = turn.get("end", "completed")
    steps = turn["steps"]
    return {
        "steps": [_normalise_step(step, file, f"{where}.steps[{index}]") for index, step in enumerate(steps)],
        "start": turn.get("start", "engine"),
        "end": end,
        "exit_code": turn.get("exit_code", 1 if end == "failed" else 0),
        "linger": _normalise_linger(turn.get("linger")),
        # The answers to repair resumes of this turn, in order; None (no list): the turn answers each
        # repair resume again, as a model that ignores the repair prompt does (engine._repair_answer).
        "repair": (
            None
            if "repair" not in turn
            else [
                _normalise_turn(answer, file, f"{where}.repair[{index}]")
                for index, answer in enumerate(turn["repair"])
            ]
        ),
    }


def _union_branch(done: bool, fields: dict[str, Any], file: str, where: str) -> str:
    """A branch of Skill-Runner's JSON union contract (v0.6.0+) as a model prints it: the whole
    reply is one JSON object, `__SKILL_DONE__` first (as the patch's examples put it), on one
    line, non-ASCII as is."""
    if "__SKILL_DONE__" in fields:
        raise ScriptProblem(
            SCRIPT_INVALID,
            file,
            f"{where}.__SKILL_DONE__",
            fields["__SKILL_DONE__"],
            "the step sets __SKILL_DONE__ itself (final: true, pending: false); write other values with say",
        )
    try:
        return json.dumps({"__SKILL_DONE__": done, **fields}, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:  # a YAML date, NaN: nothing a model prints as JSON
        raise ScriptProblem(SCRIPT_INVALID, file, where, fields, f"not JSON: {exc}") from None


def _normalise_linger(linger: dict[str, Any] | None) -> dict[str, Any] | None:
    if linger is None:
        return None
    seconds = linger["seconds"]
    return {
        "seconds": None if seconds == "forever" else float(seconds),
        "close_pipes": bool(linger.get("close_pipes", False)),
    }


def _normalise_step(step: dict[str, Any], file: str, where: str) -> dict[str, Any]:
    ((kind, value),) = step.items()
    match kind, value:
        case "final", dict(fields):
            text = _union_branch(True, fields, file, f"{where}.final")
            # `union`: the branch as an object too, for an engine that answers it as structured
            # output (claude and codebuddy --json-schema); every other engine says the text.
            return {"say": [text], "union": json.loads(text)}
        case "pending", dict(fields):
            text = _union_branch(False, fields, file, f"{where}.pending")
            return {"say": [text], "union": json.loads(text)}
        case "say", str(text):
            return {"say": [text]}
        case "say", {"text": str(text)}:
            return {"say": [text]}
        case "say", {"chunks": list(chunks)}:
            return {"say": list(chunks)}
        case "ask_user", dict(spec):
            return {"say": [hints.render(spec)], "hint": spec["form"]}
        case "tool", dict(spec):
            status = spec.get("status", "ok")
            tool = {
                "name": spec["name"],
                "input": spec.get("input", {}),
                "output": spec.get("output", ""),
                "ok": status == "ok",
                "exit_code": spec.get("exit_code", 0 if status == "ok" else 1),
            }
            if status == "running":  # only then: a finished call's shape stays as it always was
                tool["running"] = True
            return {"tool": tool}
        case "model_error", dict(spec):
            return {
                "model_error": {
                    "cut": spec.get("cut", False),
                    "dropped": spec.get("dropped", False),
                    "status": spec.get("status"),
                    "message": spec.get("message"),
                    "retries": spec.get("retries", 0),
                    "recovers": spec.get("recovers", False),
                }
            }
        case "file_change", dict(spec):
            return {
                "file_change": {
                    "path": spec["path"],
                    "kind": spec.get("kind", "add"),
                    "content": spec.get("content", ""),
                }
            }
        case "pad", int(size):
            return {"pad": size}
        case "error", dict(spec):
            return {
                "error": {
                    "message": spec["message"],
                    "transient": spec.get("transient", False),
                    "code": spec.get("code"),
                }
            }
        case "raw", str(text):
            return {"raw": {"data": text.encode("utf-8"), "stream": "stdout"}}
        case "raw", {"text": str(text), **rest}:
            return {"raw": {"data": text.encode("utf-8"), "stream": rest.get("stream", "stdout")}}
        case "raw", {"base64": str(encoded), **rest}:
            return {"raw": {"data": base64.b64decode(encoded), "stream": rest.get("stream", "stdout")}}
        case "crash", dict(spec):
            return {"crash": {"exit_code": spec.get("exit_code"), "signal": spec.get("signal")}}
        case "truncate", dict(spec):
            return {"truncate": {"at": spec.get("at", 0.5), "exit_code": spec.get("exit_code", 1)}}
        case "split", dict(spec):
            split = {"parts": spec.get("parts", 2), "pause": spec.get("pause", 0.005)}
            if "inside" in spec:
                split["inside"] = spec["inside"]
            return {"split": split}
        case "sleep", int(seconds) | float(seconds):
            return {"sleep": float(seconds)}
        case "detach", int(seconds) | float(seconds):
            return {"detach": float(seconds)}
        case (("think" | "stderr"), str(text)):
            return {kind: text}
        case "hang", True:
            return {"hang": True}
    raise AssertionError(f"schema admitted an unnormalisable step {step!r}")
