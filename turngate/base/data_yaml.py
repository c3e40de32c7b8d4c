"""YAML of turngate's own data files (the catalog, its sentences, conventions and scopes), read fast.

PyYAML's pure-Python loader spent 1 s of every command's start on the catalog's hundred files;
libyaml's safe loader, which PyYAML ships compiled on every platform it has wheels for, reads the
same documents in a tenth of that. Where it is missing the pure-Python one reads them the same way.
Engine output never comes here (it has bounded readers of its own); a scenario's scripted text may
hold lone surrogates (see ``load_data``).
"""

from __future__ import annotations

from typing import Any, Final

import yaml

_LOADER: Final[type[Any]] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_data(text: str) -> Any:
    """One YAML document, safely (no tags that build objects): the data it holds.

    A ``"\\ud83d"`` escape (a lone surrogate: text a CLI cut inside an emoji, which a scenario may
    script on purpose) is refused by libyaml and read by the pure-Python loader; the same document
    must read the same on every platform, so it is read again by the latter rather than refused."""
    try:
        return yaml.load(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        if _LOADER is yaml.SafeLoader or "invalid Unicode character escape" not in str(error):
            raise
        return yaml.load(text, Loader=yaml.SafeLoader)
