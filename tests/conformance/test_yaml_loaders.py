"""Every shipped YAML file reads the same with libyaml and with PyYAML's pure-Python loader.

turngate/base/data_yaml.py prefers libyaml and falls back to the pure-Python loader where it is missing;
the two disagree on some plain scalars (a flow mapping value ending in ``?``), so a file one of them
refuses would break the catalog on a platform without libyaml. A lone surrogate escape (``\\ud83d``,
the hostile-text scenarios) is refused by libyaml alone: ``load_data`` reads it with the pure-Python
loader there, so what is compared is what turngate reads.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from turngate.base.data_yaml import load_data

ROOT = Path(__file__).resolve().parents[2]
FILES = sorted(path for folder in ("scenarios", "turngate") for path in (ROOT / folder).rglob("*.yaml"))


@pytest.mark.skipif(not hasattr(yaml, "CSafeLoader"), reason="libyaml is not installed here")
def test_libyaml_and_the_pure_python_loader_read_every_shipped_file_alike() -> None:
    differ = []
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        try:
            pure = yaml.load(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as problem:
            differ.append(f"{path.relative_to(ROOT)}: the pure-Python loader refuses it: {problem}")
            continue
        if pure != load_data(text):
            differ.append(f"{path.relative_to(ROOT)}: read differently")
    assert not differ, "\n".join(differ)
