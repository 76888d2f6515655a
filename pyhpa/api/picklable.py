"""Pickling of frozen dataclasses that holds whether or not the compiled build compiled them.

Pickle restores a dataclass by setting its fields one by one, which a frozen class compiled by
mypyc refuses; rebuilding it from its fields through the constructor works in both builds.
Simulation workers (``pyhpa simulate --jobs``) receive and return such objects.
"""

from __future__ import annotations

import copyreg
import dataclasses
from typing import Any


def _rebuild(obj: Any) -> tuple[type, tuple]:
    return type(obj), tuple(getattr(obj, f.name) for f in dataclasses.fields(obj))


def picklable(*classes: type) -> None:
    """Pickle these frozen dataclasses by their constructor (every field must be an init field)."""
    for cls in classes:
        if any(not f.init for f in dataclasses.fields(cls)):
            raise TypeError(f"{cls.__name__} has fields its constructor does not take")
        copyreg.pickle(cls, _rebuild)
