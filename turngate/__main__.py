"""``python -m turngate ...`` is ``turngate ...``."""

from turngate.cli.main import main

raise SystemExit(main())
