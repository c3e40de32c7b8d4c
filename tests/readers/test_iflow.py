"""iflow reader: plain text and the execution-info block, written by hand from the two documents."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from tests.readers.conftest import ERR, OUT, assert_well_formed, stream
from turngate.engines import readers
from turngate.engines.readers import iflow
from turngate.engines.readers.events import (
    AssistantText,
    EngineError,
    RawLine,
    SessionId,
    TurnEnd,
    UnknownEvent,
)

REPLY = 'Sure, here is the result.\n{"value": 7, "__SKILL_DONE__": true}\n'
INFO = (
    '{"session-id":"session-3f2a9c","conversation-id":"conv-77","assistantRounds":2,"executionTimeMs":5120,'
    '"tokenUsage":{"input":300,"output":20,"total":320}}'
)
BLOCK = f"<Execution Info>\n{INFO}\n</Execution Info>\n"
STACK = [
    "Error: SERVER_OAUTH2_REQUIRED: Please sign in again",
    "    at OAuthClient.refresh (file:///usr/lib/node_modules/iflow/dist/auth.js:88:11)",
    "    at async main (file:///usr/lib/node_modules/iflow/dist/cli.js:12:3)",
]


def test_the_documented_example_verbatim() -> None:
    # ENGINE_FORMATS.md elides the ids and the token usage with "…": the JSON does not
    # decode, and the session id is still read.
    stderr = (
        "<Execution Info>\n"
        '{"session-id":"session-3f2a…","conversation-id":"…","assistantRounds":2,"executionTimeMs":5120,'
        '"tokenUsage":{…}}\n'
        "</Execution Info>\n"
    ).encode()
    transcript = iflow.read(REPLY.encode(), stderr)
    assert transcript.engine == "iflow"
    assert transcript.events == (
        AssistantText(REPLY, OUT, 0),
        SessionId("session-3f2a…", ERR, 17),
        TurnEnd(True, ERR, stderr.index(b"</Execution")),
    )
    assert transcript.assistant_messages() == (REPLY,)  # the marker is plain text here


def test_the_block_on_stderr() -> None:
    transcript = iflow.read(REPLY.encode(), BLOCK.encode())
    assert transcript.events == (
        AssistantText(REPLY, OUT, 0),
        SessionId("session-3f2a9c", ERR, len("<Execution Info>\n")),
        TurnEnd(True, ERR, len("<Execution Info>\n") + len(INFO) + 1),
    )
    assert transcript.session_id() == "session-3f2a9c"


def test_the_block_drifted_to_stdout() -> None:
    stdout = (REPLY + BLOCK).encode()
    block_at = len(REPLY)
    assert iflow.read(stdout).events == (
        AssistantText(REPLY, OUT, 0),
        SessionId("session-3f2a9c", OUT, block_at + len("<Execution Info>\n")),
        TurnEnd(True, OUT, block_at + len("<Execution Info>\n") + len(INFO) + 1),
    )


def test_text_after_a_block_on_stdout_is_still_the_reply() -> None:
    stdout = ("Before.\n" + BLOCK + "After.\n").encode()
    transcript = iflow.read(stdout)
    assert transcript.assistant_messages() == ("Before.\nAfter.\n",)
    assert transcript.events[0] == AssistantText("Before.\nAfter.\n", OUT, 0)


def test_a_resumed_turn_starts_with_a_banner() -> None:
    banner = "Resuming session session-3f2a9c..."
    stdout = (banner + "\n" + "Formal it is.\n").encode()
    assert iflow.read(stdout, BLOCK.encode()).events[:2] == (
        RawLine(banner, OUT, 0),
        AssistantText("Formal it is.\n", OUT, len(banner) + 1),
    )


def test_an_oauth_error_with_a_stack_trace_and_no_block() -> None:
    stderr = stream(*STACK)
    transcript = iflow.read(b"", stderr)
    second = len(STACK[0]) + 1
    assert transcript.events == (
        EngineError("SERVER_OAUTH2_REQUIRED: Please sign in again", "SERVER_OAUTH2_REQUIRED", False, ERR, 0),
        RawLine(STACK[1] + "\n" + STACK[2], ERR, second),  # the stack trace: one run of noise lines
    )
    assert transcript.turn_end() is None
    assert transcript.assistant_messages() == ()


def test_an_error_the_turn_survives_then_the_block() -> None:
    stderr = stream("Error: rate limited, retrying", "some other noise") + BLOCK.encode()
    transcript = iflow.read(b"Done.\n", stderr)
    noise_at = len("Error: rate limited, retrying\n")
    block_at = noise_at + len("some other noise\n")
    assert transcript.events == (
        AssistantText("Done.\n", OUT, 0),
        EngineError("rate limited, retrying", None, False, ERR, 0),
        RawLine("some other noise", ERR, noise_at),
        SessionId("session-3f2a9c", ERR, block_at + len("<Execution Info>\n")),
        TurnEnd(True, ERR, block_at + len("<Execution Info>\n") + len(INFO) + 1),
    )


def test_a_block_cut_before_its_closing_tag_has_no_turn_end() -> None:
    stderr = f"<Execution Info>\n{INFO}\n".encode()
    transcript = iflow.read(REPLY.encode(), stderr)
    assert transcript.session_id() == "session-3f2a9c"
    assert transcript.turn_end() is None


def test_a_block_without_a_session_id() -> None:
    info = '{"conversation-id":"c","assistantRounds":1}'
    stderr = f"<Execution Info>\n{info}\n</Execution Info>\n".encode()
    assert iflow.read(b"", stderr).events == (
        UnknownEvent("execution-info", info, ERR, 17),
        TurnEnd(True, ERR, 17 + len(info) + 1),
    )


def test_a_block_without_json() -> None:
    stderr = b"<Execution Info>\nnot json at all\n</Execution Info>\n"
    assert iflow.read(b"", stderr).events == (
        RawLine("not json at all", ERR, 17),
        TurnEnd(True, ERR, 33),
    )


def test_whitespace_replies_and_invalid_utf8_are_kept_as_written() -> None:
    assert iflow.read(b"\n").assistant_messages() == ("\n",)
    assert iflow.read(b"caf\xc3\xa9 \xff\r\n").assistant_messages() == ("café \ufffd\r\n",)
    assert iflow.read(b"").events == ()


def test_the_package_dispatches_to_iflow() -> None:
    assert readers.read("iflow", REPLY.encode(), BLOCK.encode()) == iflow.read(REPLY.encode(), BLOCK.encode())


# --- properties ---------------------------------------------------------------------------------

PIECES = [
    "<Execution Info>",
    "</Execution Info>",
    "\n",
    "Error: X: y",
    "Resuming session s",
    '"session-id":"',
]
plain_text = st.text(st.characters(exclude_categories=["Cs"]))


@given(st.binary(), st.binary())
def test_arbitrary_bytes_never_raise(stdout: bytes, stderr: bytes) -> None:
    assert_well_formed(iflow.read(stdout, stderr), stdout, stderr)


@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=10), max_size=12), st.booleans())
def test_arbitrary_blocks_never_raise(pieces: list[str], on_stdout: bool) -> None:
    data = "".join(pieces).encode()
    stdout, stderr = (data, b"") if on_stdout else (b"", data)
    assert_well_formed(iflow.read(stdout, stderr), stdout, stderr)


@given(st.lists(plain_text.filter(lambda text: "Execution Info>" not in text), max_size=4), plain_text)
def test_the_reply_round_trips(texts: list[str], session_id: str) -> None:
    reply = "".join(text if text.endswith("\n") else text + "\n" for text in texts)
    if reply.startswith("Resuming session"):
        return
    block = "<Execution Info>\n" + json.dumps({"session-id": session_id}) + "\n</Execution Info>\n"
    transcript = iflow.read(reply.encode(), block.encode())
    assert "".join(transcript.assistant_messages()) == reply
    assert transcript.session_id() == session_id
    assert transcript.turn_end() is not None
