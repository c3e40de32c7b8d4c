"""Frozen value classes for the fake engines, without importing dataclasses.

A fake engine is a short-lived process: its whole turn must cost at most 1.5
times a bare interpreter start (see `nox -s bench`). `dataclasses` imports
`inspect`, which alone costs about as much as that start, so the engines use
this small stand-in. Type checkers see it as a frozen dataclass (PEP 681), so
construction is checked field by field; at run time it builds the same
behaviour: every field required unless it has a default, keyword or
positional construction, no assignment after construction, equality, hashing
and a readable repr.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar, dataclass_transform

    T = TypeVar("T")
else:

    def dataclass_transform(**_options):
        return lambda decorated: decorated


_MISSING = object()


@dataclass_transform(frozen_default=True)
def value(cls: type[T]) -> type[T]:
    """Turn a class with annotated fields into an immutable value class."""
    # Own annotations only (not a base class's); inspect.get_annotations would import inspect.
    names = tuple(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063
    defaults = {name: cls.__dict__[name] for name in names if name in cls.__dict__}

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__} takes {len(names)} fields, got {len(args)}")
        given = dict(zip(names, args, strict=False))
        for name, field_value in kwargs.items():
            if name not in names:
                raise TypeError(f"{cls.__name__} has no field {name!r}")
            if name in given:
                raise TypeError(f"{cls.__name__} got {name!r} twice")
            given[name] = field_value
        for name in names:
            field_value = given.get(name, defaults.get(name, _MISSING))
            if field_value is _MISSING:
                raise TypeError(f"{cls.__name__} is missing field {name!r}")
            object.__setattr__(self, name, field_value)

    def __setattr__(self: Any, name: str, _value: Any) -> None:
        raise AttributeError(f"{cls.__name__} is frozen; cannot set {name!r}")

    def __delattr__(self: Any, name: str) -> None:
        raise AttributeError(f"{cls.__name__} is frozen; cannot delete {name!r}")

    def _astuple(self: Any) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in names)

    def __eq__(self: Any, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return bool(_astuple(self) == _astuple(other))

    def __hash__(self: Any) -> int:
        return hash((cls.__name__, *_astuple(self)))

    def __repr__(self: Any) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{cls.__name__}({fields})"

    for method in (__init__, __setattr__, __delattr__, __eq__, __hash__, __repr__):
        method.__qualname__ = f"{cls.__qualname__}.{method.__name__}"
        setattr(cls, method.__name__, method)
    setattr(cls, "__match_args__", names)  # noqa: B010 - a class attribute mypy cannot see
    return cls
