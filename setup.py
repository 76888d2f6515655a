"""The optional compiled build; everything else about the package is in pyproject.toml.

``PYHPA_COMPILE=1 pip install --no-build-isolation .`` (with mypy and pyhpa's dependencies
installed first, see ``make fast``) compiles the modules of the reconcile and simulation path with mypyc: the same
source, ~1.6x faster simulations. Without the variable the package is pure Python.

Compiled modules are never built in place: an extension module beside its source wins the
import, so a later edit of the ``.py`` would silently not run. Editable compiled installs are
therefore refused.
"""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

from setuptools import setup


def _compiled_paths() -> list[str]:
    """The source files of ``pyhpa.build.COMPILED_MODULES`` (read, not imported: no dependencies yet)."""
    tree = ast.parse(Path(__file__).with_name("pyhpa").joinpath("build.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "COMPILED_MODULES":
            return [name.replace(".", "/") + ".py" for name in ast.literal_eval(node.value)]
    raise SystemExit("pyhpa/build.py defines no COMPILED_MODULES")


def _ext_modules() -> list:
    if os.environ.get("PYHPA_COMPILE") != "1":
        return []
    if any(arg.startswith("editable") for arg in sys.argv):
        raise SystemExit("PYHPA_COMPILE=1 needs a regular install (pip install --no-build-isolation .): "
                         "compiled modules in the source tree would shadow later edits")
    from mypyc.build import mypycify

    # Types of the modules they import are read, not checked: only the compiled ones must be exact.
    return mypycify(["--follow-imports=silent", *_compiled_paths()], opt_level="3")


setup(ext_modules=_ext_modules())
