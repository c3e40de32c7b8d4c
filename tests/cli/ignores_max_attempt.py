"""A broken orchestrator over the command protocol: the reference, with its gate ignoring max_attempt.

The same bug as ``ignores-max-attempt`` in tests/conformance/test_broken_targets.py, in a process of its
own, so that a test can point ``--target cmd:...`` (or ``--turngate-target``) at it.
"""

from __future__ import annotations

import dataclasses

from turngate.implementations.command_example import main
from turngate.implementations.reference import gate

_decide = gate.decide
gate.decide = lambda evidence: _decide(dataclasses.replace(evidence, max_attempt=None))

if __name__ == "__main__":
    main()
