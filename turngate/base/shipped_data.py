"""Where turngate's own data lives: the checkout when run from it, the installed package otherwise.

The catalog (``scenarios/``), the goldens (``golden/``) and the drift corpus
(``corpus/``) are top-level folders of the repository, where people edit them.
A wheel carries copies under ``turngate/_data/`` (pyproject.toml maps them in),
so an installed turngate finds the same files with no checkout at all. The
checkout wins when both exist: a developer's edits are what they mean to run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

DataName = Literal["scenarios", "golden", "corpus"]

PACKAGE_DIR: Final = Path(__file__).resolve().parents[1]  # turngate/
CHECKOUT_DIR: Final = PACKAGE_DIR.parent
PACKAGED_DIR: Final = PACKAGE_DIR / "_data"


def is_checkout(root: Path = CHECKOUT_DIR) -> bool:
    """A source tree (pyproject.toml beside the package), not an installed copy in site-packages."""
    return (root / "pyproject.toml").is_file() and (root / "turngate").is_dir()


def data_dir(name: DataName, *, checkout: Path = CHECKOUT_DIR, packaged: Path = PACKAGED_DIR) -> Path:
    """The folder ``name``: the checkout's when turngate runs from one, else the package's copy.

    Returns the packaged path even when it is missing, so an error names where it looked.
    """
    if is_checkout(checkout) and (checkout / name).is_dir():
        return checkout / name
    return packaged / name
