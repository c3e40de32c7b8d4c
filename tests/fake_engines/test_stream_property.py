"""Property: any script of content steps gives well-formed streams whose reply text round-trips.

The reader that checks the streams (turngate.engines.readers) is written from the
documented formats only; the expectation (turngate.engines.selfcheck.expected_reply)
is the documented rule for how each engine carries the reply.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from turngate.engines import readers
from turngate.engines.fake.compiler import compile_script
from turngate.engines.fake.install import install
from turngate.engines.fake.script import precompile
from turngate.engines.selfcheck import PROFILES, expected_reply, expected_turn_end

text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30) | st.sampled_from(
    ['{"value": 7, "__SKILL_DONE__": true}', '"__SKILL_DONE__": true', "line one\nline two\n", "", 'é ✓ \\ "']
)
say = text.map(lambda t: {"say": t}) | st.lists(text, min_size=1, max_size=3).map(
    lambda c: {"say": {"chunks": c}}
)
tool = st.builds(
    lambda name, output, ok: {
        "tool": {
            "name": name,
            "input": {"command": output[:10]},
            "output": output,
            "status": "ok" if ok else "error",
        }
    },
    st.sampled_from(["bash", "read_file"]),
    text,
    st.booleans(),
)
hint = st.builds(
    lambda form, defect: {
        "ask_user": {
            "form": form,
            "prompt": "Which?",
            "kind": "choose_one",
            **({"defect": defect} if defect else {}),
        }
    },
    st.sampled_from(["yaml_block", "yaml_fenced", "yaml_flow", "legacy_json"]),
    st.sampled_from([None, "missing_prompt", "broken_syntax", "truncated", "wrong_types"]),
)
error = st.builds(
    lambda message, transient: {"error": {"message": message, "transient": transient}}, text, st.booleans()
)
step = (
    say
    | tool
    | hint
    | error
    | text.map(lambda t: {"think": t})
    | text.map(lambda t: {"stderr": t})
    | st.just({"split": {"parts": 3, "pause": 0}})
)
turns = st.builds(
    lambda steps, end: {"steps": steps, "end": end},
    st.lists(step, max_size=6),
    st.sampled_from(["completed", "failed", "none"]),
)

ROOT = Path(tempfile.mkdtemp(prefix="turngate-property-"))
install(ROOT / "bin")
(ROOT / "run").mkdir(exist_ok=True)


def play(profile_index: int, script_path: Path, state: Path) -> subprocess.CompletedProcess[bytes]:
    profile = PROFILES[profile_index]
    return subprocess.run(
        [str(ROOT / "bin" / profile.engine), *profile.first_turn("tg-case-prop")],
        env={
            "PATH": os.environ["PATH"],
            "HOME": str(ROOT),
            "TURNGATE_SCRIPTS": str(script_path.parent),
            "TURNGATE_STATE": str(state),
        },
        cwd=ROOT / "run",
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
        check=False,
    )


# One test per profile, so that xdist spreads them; each profile sees its own 30 scripts.
@pytest.mark.parametrize("index", range(len(PROFILES)), ids=[profile.name for profile in PROFILES])
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(turn=turns)
def test_streams_are_well_formed_and_the_reply_round_trips(index: int, turn: dict[str, Any]) -> None:
    folder = Path(tempfile.mkdtemp(dir=ROOT))
    script_path = folder / "prop.yaml"
    script_path.write_text(yaml.safe_dump({"case": "prop", "turns": [turn]}), encoding="utf-8")
    compiled = compile_script(script_path)["turns"][0]
    # Compiled beside the script, as a harness does: the engine takes its fast path (no PyYAML import).
    precompile(str(script_path), None)
    profile = PROFILES[index]
    completed = play(index, script_path, folder / "state")
    assert completed.returncode == compiled["exit_code"], completed.stderr
    if profile.output_format != "text" and not (
        profile.engine == "gemini" and profile.output_format == "json"
    ):
        for line in completed.stdout.splitlines():
            assert isinstance(json.loads(line), dict), (profile.name, line)
    options = {"mode": profile.output_format} if profile.engine == "gemini" else {}
    transcript = readers.read(profile.engine, completed.stdout, completed.stderr, **options)
    assert "".join(transcript.assistant_messages()) == expected_reply(profile, compiled), profile.name
    end = transcript.turn_end()
    assert (None if end is None else end.ok) == expected_turn_end(profile, compiled), profile.name
