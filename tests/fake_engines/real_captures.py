"""The real claude, qwen and codebuddy captures (tests/data/real-captures/), and their shapes.

A shape is what a gate or a reader depends on in an SDK message stream, without the values
that change with every run (ids, times, token counts): each line's kind (`type`, its
`subtype`, the type of its content block) and the keys of the line, of its `message` and of
that block, in the order printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CAPTURES = Path(__file__).resolve().parents[1] / "data" / "real-captures"
# The fidelity scripts the captures were played from (the case token in each prompt names one).
SCRIPTS: dict[str, dict[str, Any]] = {
    "fid-message": {"turns": [{"steps": [{"say": '{"greeting": "Hello", "__SKILL_DONE__": true}'}]}]},
    "fid-think-message": {
        "turns": [
            {
                "steps": [
                    {"think": "The skill wants a greeting object."},
                    {"say": '{"greeting": "Hello", "__SKILL_DONE__": true}'},
                ]
            }
        ]
    },
    "fid-tool-echo": {
        "turns": [
            {
                "steps": [
                    {
                        "tool": {
                            "name": "bash",
                            "input": {"command": "cat SKILL.md"},
                            "output": 'Finish with {"__SKILL_DONE__": true}',
                        }
                    },
                    {"say": "Which greeting style do you want?"},
                ]
            }
        ]
    },
    "fid-tool-failed": {
        "turns": [
            {
                "steps": [
                    {
                        "tool": {
                            "name": "bash",
                            "input": {"command": "cat missing.txt; exit 1"},
                            "output": "cat: missing.txt: No such file or directory",
                            "status": "error",
                        }
                    },
                    {"say": '{"greeting": "Hello", "__SKILL_DONE__": true}'},
                ]
            }
        ]
    },
    "fid-error": {
        "turns": [
            {
                "steps": [{"error": {"message": "scripted failure: quota exhausted", "code": 400}}],
                "end": "failed",
            }
        ]
    },
    "fid-resume": {
        "turns": [
            {
                "steps": [
                    {
                        "ask_user": {
                            "form": "yaml_block",
                            "text": "I need the style first.",
                            "prompt": "Which style?",
                            "kind": "choose_one",
                            "options": [
                                {"label": "Formal", "value": "formal"},
                                {"label": "Casual", "value": "casual"},
                            ],
                        }
                    }
                ]
            },
            {"steps": [{"say": '{"greeting": "Good day", "__SKILL_DONE__": true}'}]},
        ]
    },
    "ne-two-messages": {
        "turns": [
            {
                "steps": [
                    {"say": "Let me read the skill first."},
                    {
                        "tool": {
                            "name": "bash",
                            "input": {"command": "cat SKILL.md"},
                            "output": 'Finish with {"__SKILL_DONE__": true}',
                        }
                    },
                    {"say": '{"greeting": "Hello", "__SKILL_DONE__": true}'},
                ]
            }
        ]
    },
    "ne-think-prose": {
        "turns": [{"steps": [{"think": "Thinking about it."}, {"say": "Which greeting style do you want?"}]}]
    },
    "ne-tool-then-json": {
        "turns": [
            {
                "steps": [
                    {"tool": {"name": "bash", "input": {"command": "cat SKILL.md"}, "output": "ok"}},
                    {"say": '{"greeting": "Hello", "__SKILL_DONE__": true}'},
                ]
            }
        ]
    },
    "ne-union": {
        "turns": [
            {
                "steps": [
                    {
                        "pending": {
                            "message": "Which style?",
                            "ui_hints": {
                                "kind": "choose_one",
                                "options": [{"label": "Formal", "value": "formal"}],
                            },
                        }
                    }
                ]
            },
            {"steps": [{"final": {"greeting": "Good day"}}]},
        ]
    },
}


@dataclass(frozen=True)
class Capture:
    engine: str
    name: str
    argv: list[str]  # without the program
    exit_code: int | None  # None: killed by the capture's timeout
    stdout: bytes
    stderr: bytes
    meta: dict[str, Any]

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stdout.splitlines() if line.strip()]


def load(engine: str, name: str) -> Capture:
    folder = CAPTURES / engine
    meta = json.loads((folder / f"{name}.meta.json").read_text(encoding="utf-8"))
    return Capture(
        engine,
        name,
        list(meta["argv"][1:]),
        meta.get("exit_code", meta.get("exit_code_after_stdin_eof")),
        (folder / f"{name}.stdout").read_bytes(),
        (folder / f"{name}.stderr").read_bytes(),
        meta,
    )


def names(engine: str) -> list[str]:
    return sorted(path.name.removesuffix(".meta.json") for path in (CAPTURES / engine).glob("*.meta.json"))


def kind(line: dict[str, Any]) -> str:
    """`type[/subtype][:block]`: what the line is, to a reader."""
    text = str(line.get("type"))
    if isinstance(line.get("subtype"), str) and line.get("type") != "result":
        text += f"/{line['subtype']}"
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and content and isinstance(content[0], dict):
        text += f":{content[0].get('type')}"
    return text


def keys(line: dict[str, Any]) -> tuple[tuple[str, ...], ...]:
    """The keys of the line, of its message and of its first content block, each in printed order."""
    message = line.get("message") if isinstance(line.get("message"), dict) else {}
    content = message.get("content") if isinstance(message, dict) else None
    block = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
    return tuple(line), tuple(message), tuple(block)


def kinds(lines: list[dict[str, Any]]) -> list[str]:
    return [kind(line) for line in lines]


def key_orders(lines: list[dict[str, Any]]) -> dict[str, set[tuple[tuple[str, ...], ...]]]:
    """Each kind's key orders among `lines`."""
    found: dict[str, set[tuple[tuple[str, ...], ...]]] = {}
    for line in lines:
        found.setdefault(kind(line), set()).add(keys(line))
    return found


def all_key_orders(engine: str) -> dict[str, set[tuple[tuple[str, ...], ...]]]:
    """Each kind's key orders over every capture of an engine: what the real CLI was seen to print."""
    found: dict[str, set[tuple[tuple[str, ...], ...]]] = {}
    for name in names(engine):
        capture = load(engine, name)
        try:
            lines = capture.lines()
        except ValueError:
            continue
        for event_kind, orders in key_orders(lines).items():
            found.setdefault(event_kind, set()).update(orders)
    return found


def assert_same_shape(real: Capture, fake_stdout: bytes) -> None:
    """The fake printed the real capture's sequence of kinds, and each of its lines has key orders
    the real CLI was seen to print for that kind."""
    fake = [json.loads(line) for line in fake_stdout.splitlines() if line.strip()]
    assert kinds(fake) == kinds(real.lines())
    seen = all_key_orders(real.engine)
    for line in fake:
        assert keys(line) in seen[kind(line)], (kind(line), keys(line))


def session_of(stdout: bytes) -> str:
    """The session id an orchestrator resumes with: the first line's `session_id`."""
    return str(json.loads(stdout.splitlines()[0])["session_id"])


def with_session(argv: list[str], real_id: str, fake_id: str) -> list[str]:
    """A resume command line of the capture, resuming the fake's session instead."""
    return [fake_id if word == real_id else word for word in argv]


def stdin_lines(capture: Capture) -> bytes:
    """The stream-json user messages a resident capture was sent, one per line."""
    return b"".join(
        (json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n").encode()
        for text in capture.meta["stdin_messages"]
    )
