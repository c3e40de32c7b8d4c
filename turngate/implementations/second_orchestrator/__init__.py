"""A second, independent skill-run orchestrator, spoken to over turngate's command protocol.

Written from the spec texts (../shared/spec), ENGINE_FORMATS.md, docs/fake-engines.md and
docs/command-protocol.md only; it imports nothing from any other ``turngate`` package.
It exists as a yardstick: its ``--bug NAME`` builds are plausible implementer mistakes
(``bugs.py``), and ``score.py`` measures how many of them turngate's catalog catches.
"""
