"""``python -m turngate ...`` is ``turngate ...``."""

from harness.cli import main

raise SystemExit(main())
