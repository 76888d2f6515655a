"""Which build of pyhpa is running: the pure-Python source or the compiled one (setup.py).

Benchmarks print it (their figures depend on it) and the test suite checks that the build it was
asked to test is the one it imported.
"""

from __future__ import annotations

import importlib
import pathlib
from importlib.machinery import EXTENSION_SUFFIXES

#: The modules the compiled build compiles (setup.py reads this list).
COMPILED_MODULES = (
    "pyhpa.api.selectors",
    "pyhpa.adapters.memory",
    "pyhpa.adapters.selector_index",
    "pyhpa.cluster.workload",
    "pyhpa.controller.fetch",
    "pyhpa.controller.reconcile",
    "pyhpa.engine.calculator",
    "pyhpa.engine.conditions",
    "pyhpa.engine.gomath",
    "pyhpa.engine.inputs",
    "pyhpa.engine.metrics",
    "pyhpa.engine.normalize",
    "pyhpa.engine.pods",
    "pyhpa.engine.state",
    "pyhpa.engine.trace",
    "pyhpa.sim.runner",
)


def compiled_modules() -> list[str]:
    """Those of :data:`COMPILED_MODULES` imported from an extension module."""
    return [name for name in COMPILED_MODULES
            if str(importlib.import_module(name).__file__).endswith(tuple(EXTENSION_SUFFIXES))]


def describe() -> str:
    """One line: the build and where it is imported from."""
    n = len(compiled_modules())
    kind = "pure Python" if n == 0 else f"compiled ({n} of {len(COMPILED_MODULES)} hot modules by mypyc)"
    return f"pyhpa {kind} at {pathlib.Path(__file__).resolve().parent}"
