"""The house rules that a reader should be able to rely on, checked on the source itself.

- no module over 700 lines (a longer one holds more than one concern);
- no hidden module state anywhere: no module-level mutable container (tables are tuples,
  frozensets or MappingProxyType), so a result is a function of its inputs alone and no caller
  can change what another reads;
- nothing anywhere keyed by ``id()``: an identity key outlives the object's contents (the stale
  cohort list that stalled examples/batch-ramp.yaml was such a key);
- one YAML entry point: only ``pyhpa/api/goyaml.py`` imports PyYAML;
- every module in a layer of the import contract (pyproject.toml), so that no module escapes
  the layering by sitting beside it.
- no identity comparison of data: ``is``/``is not`` only against None, True, False, Ellipsis, a
  class, an enum member or a listed module-level sentinel (two equal containers, or one object
  changed in place, are not told apart by identity: compare values or a version carried in the data).
"""

from __future__ import annotations

import ast
import pathlib
import tomllib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "pyhpa"
MODULES = sorted(PACKAGE.rglob("*.py"))
MAX_LINES = 700

# Calls and displays that build a container a module could mutate later.
_MUTABLE_CALLS = {"dict", "list", "set", "defaultdict", "OrderedDict", "deque", "Counter", "WeakKeyDictionary",
                  "WeakValueDictionary", "bytearray"}


def _rel(path: pathlib.Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


def test_package_has_modules() -> None:
    assert len(MODULES) > 50  # the checks below would pass vacuously on a wrong path


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_module_under_700_lines(path: pathlib.Path) -> None:
    lines = path.read_text().count("\n")
    assert lines <= MAX_LINES, f"{_rel(path)} has {lines} lines; split it by concern"


def _mutable(value: ast.expr | None) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in _MUTABLE_CALLS
    return False


def _module_level_mutables(tree: ast.Module) -> list[str]:
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and _mutable(node.value):
            found += [ast.unparse(t) for t in node.targets]
        elif isinstance(node, ast.AnnAssign) and _mutable(node.value):
            found.append(ast.unparse(node.target))
    return [name for name in found if name != "__all__"]


@pytest.mark.parametrize("path", MODULES, ids=_rel)
def test_no_module_state(path: pathlib.Path) -> None:
    mutables = _module_level_mutables(ast.parse(path.read_text()))
    assert not mutables, (f"{_rel(path)}: module-level mutable state {mutables}; pass it in as an input, "
                          "or make a constant table a tuple, frozenset or MappingProxyType")


def test_module_state_check_finds_a_memo() -> None:
    tree = ast.parse("_MEMO: dict[int, str] = {}\n_FROZEN = frozenset({1})\nCACHE = dict()\n")
    assert _module_level_mutables(tree) == ["_MEMO", "CACHE"]


def _id_calls(tree: ast.AST) -> list[int]:
    return [node.lineno for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id"]


def test_nothing_keyed_by_identity() -> None:
    offenders = {_rel(p): lines for p in MODULES if (lines := _id_calls(ast.parse(p.read_text())))}
    assert not offenders, f"id() used (identity keys go stale when contents change): {offenders}"


def test_identity_check_finds_a_call() -> None:
    assert _id_calls(ast.parse("cache[id(pods)] = 1\n")) == [1]


def test_one_yaml_entry_point() -> None:
    importers = []
    for path in MODULES:
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n == "yaml" or n.startswith("yaml.") for n in names):
                importers.append(_rel(path))
    assert sorted(set(importers)) == ["pyhpa/api/goyaml.py"]


def _layer_packages() -> list[str]:
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text())
    [layers] = [c["layers"] for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"]
    return [name.strip() for layer in layers for name in layer.split("|")]


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _outside(modules: list[str], layers: list[str]) -> list[str]:
    return [m for m in modules if m != "pyhpa" and not any(m == p or m.startswith(p + ".") for p in layers)]


def test_every_module_belongs_to_a_layer() -> None:
    outside = _outside([_module_name(p) for p in MODULES], _layer_packages())
    assert not outside, f"modules in no layer of the import contract (pyproject.toml): {outside}"


def test_layer_check_finds_a_stray_module() -> None:
    assert _outside(["pyhpa", "pyhpa.cli", "pyhpa.api.names", "pyhpa.stray", "pyhpa.apis"],
                    ["pyhpa.cli", "pyhpa.api"]) == ["pyhpa.stray", "pyhpa.apis"]
# What ``is`` may compare against (one side of the comparison): constants that are singletons ...
_IDENTITY_CONSTANTS = (None, True, False, Ellipsis)
# ... classes (by name, the last part of a dotted name) ...
_CLASS_NAMES = {"str", "int", "float", "bool", "bytes", "list", "dict", "tuple", "set", "frozenset",
                "Any", "Union", "UnionType", "datetime", "Quantity", "WorkloadView", "K8s",
                "ScalarNode", "MappingNode", "SequenceNode"}
# ... members of these enums ...
_ENUMS = {"Operator"}
# ... and these module-level sentinels: markers a module makes and hands out itself, and the
# API server's registered resources (one object per kind for the process's life).
_SENTINELS = {"_ABSENT", "_NO_KEY", "_STRING", "_PLAIN", "_LOOK_STRUCT", "_LOOK_ITEMS", "_LOOK_TIME",
              "timezone.utc", "R.PODS", "R.NAMESPACES", "R.CRDS", "LOCAL_SUBJECT_ACCESS_REVIEWS",
              "SELF_SUBJECT_REVIEWS", "inspect.Parameter.empty"}


def _identity_ok(side: ast.expr) -> bool:
    if isinstance(side, ast.Constant):
        return any(side.value is c for c in _IDENTITY_CONSTANTS)
    if isinstance(side, ast.Call) and isinstance(side.func, ast.Name) and side.func.id == "type":
        return True  # type(x)
    if isinstance(side, ast.Attribute) and side.attr == "__class__":
        return True
    if isinstance(side, ast.Attribute) and isinstance(side.value, ast.Name) and side.value.id in _ENUMS:
        return True
    last = side.attr if isinstance(side, ast.Attribute) else side.id if isinstance(side, ast.Name) else None
    return last in _CLASS_NAMES or ast.unparse(side) in _SENTINELS


def _identity_comparisons(tree: ast.AST) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        left = node.left
        for op, right in zip(node.ops, node.comparators):
            if isinstance(op, (ast.Is, ast.IsNot)) and not (_identity_ok(left) or _identity_ok(right)):
                found.append(f"{node.lineno}: {ast.unparse(left)} {'is' if isinstance(op, ast.Is) else 'is not'} "
                             f"{ast.unparse(right)}")
            left = right
    return found


def test_no_identity_comparison_of_data() -> None:
    offenders = {_rel(p): found for p in MODULES if (found := _identity_comparisons(ast.parse(p.read_text())))}
    assert not offenders, f"`is` on data (compare values, or a version the data carries): {offenders}"


def test_identity_check_tells_data_from_singletons() -> None:
    tree = ast.parse("a is None\nb is not True\nx.__class__ is str\ntype(v) is int\nop is Operator.IN\n"
                     "y is _ABSENT\nlabels is previous\nrs is not new\nc is out.recommended\n"
                     "0 < n is not view\n")
    assert _identity_comparisons(tree) == ["7: labels is previous", "8: rs is not new",
                                           "9: c is out.recommended", "10: n is not view"]
