"""YAML of turngate's own data files (the catalog, its sentences, conventions and scopes), read fast.

PyYAML's pure-Python loader spent 1 s of every command's start on the catalog's hundred files;
libyaml's safe loader, which PyYAML ships compiled on every platform it has wheels for, reads the
same documents in a tenth of that. Where it is missing the pure-Python one reads them the same way.
Engine output and other hostile text never comes here (it has bounded readers of its own).
"""

from __future__ import annotations

from typing import Any, Final

import yaml

_LOADER: Final[type[Any]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_data(text: str) -> Any:
    """One YAML document, safely (no tags that build objects): the data it holds."""
    return yaml.load(text, Loader=_LOADER)
