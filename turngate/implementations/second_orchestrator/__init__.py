"""A second, independent skill-run orchestrator, spoken to over turngate's command protocol.

Written from the spec texts (../shared/spec), ENGINE_FORMATS.md, docs/fake-engines.md and
docs/command-protocol.md only (claude, qwen, kilo and codebuddy later, from the engine notes,
the real captures in corpus/ and the fakes' --help texts: docs/second-orchestrator.md); it
imports nothing from any other ``turngate`` package. It exists as a yardstick: its
``--bug NAME`` builds are plausible implementer mistakes (``bugs.py``), and ``bug_score.py``
measures how many of them turngate's catalog catches.
"""
