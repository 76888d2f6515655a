"""A scenario's nodes and ResourceQuotas: where its pods run and how many may be created.

Why apart from :mod:`pyhpa.sim.scenario`: both are optional, read by their own rules, and only
:mod:`pyhpa.sim.admission` uses them. Without ``nodes:`` pods run on no node and never share CPU
(the simulator as it always was); without a quota every pod is created.

``nodes:`` is a list; an entry is one node (``name``) or ``count`` alike ones (named
``<name>-1`` ... , ``name`` defaulting to ``node``), with their allocatable ``cpu`` (required),
``memory`` and ``pods`` (default 110, the kubelet's ``maxPods``). A ResourceQuota is an object
of ``objects:`` as users write it (``v1``, ``spec.hard``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from pyhpa.sim.scenario_fields import FieldLocator, check_fields, plain, read_quantity

__all__ = ["NodeSpec", "QuotaSpec", "read_nodes", "read_quota", "NODE_FIELDS", "DEFAULT_MAX_PODS"]

NODE_FIELDS = ("name", "count", "cpu", "memory", "pods")
DEFAULT_MAX_PODS = 110  # the kubelet's default --max-pods


@dataclass(frozen=True)
class NodeSpec:
    """One node and its allocatable resources (quantities as written: ``cpu``, ``memory``, ``pods``)."""

    name: str
    allocatable: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class QuotaSpec:
    """A ResourceQuota: its namespace, name and ``spec.hard``."""

    namespace: str
    name: str
    hard: Mapping[str, str] = field(default_factory=dict)


def read_nodes(loc: FieldLocator, root: Any) -> list[NodeSpec]:
    """The ``nodes:`` list (empty without one); an error names the entry and field."""
    raw = root.get("nodes")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise loc.fail(root, "", "nodes", "expected a list of {name or count, cpu, memory, pods}")
    out: list[NodeSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        path = f"nodes[{i}]"
        if not isinstance(entry, Mapping):
            raise loc.fail(raw, "nodes", i, "expected a mapping with name or count, cpu, memory, pods")
        check_fields(loc, entry, path, NODE_FIELDS)
        allocatable: dict[str, str] = {}
        if entry.get("cpu") is None:
            raise loc.fail(entry, path, "cpu", "Required value: the node's allocatable CPU")
        for key, milli in (("cpu", True), ("memory", False), ("pods", False)):
            if entry.get(key) is None:
                continue
            value = read_quantity(loc, entry, path, key, milli=milli)
            if value <= 0 or (key == "pods" and value != int(value)):
                raise loc.fail(entry, path, key, f"Invalid value: {entry[key]!r}: must be "
                                                 + ("a whole number > 0" if key == "pods" else "> 0"))
            allocatable[key] = str(entry[key])
        allocatable.setdefault("pods", str(DEFAULT_MAX_PODS))
        name = entry.get("name")
        if name is not None and (not isinstance(name, str) or not name):
            raise loc.fail(entry, path, "name", f"Invalid value: {name!r}: expected a node name")
        count = entry.get("count")
        if count is None:
            if name is None:
                raise loc.fail(entry, path, "name", "Required value: name or count")
            names = [name]
        else:
            if isinstance(count, bool) or not isinstance(count, int) or count < 1:
                raise loc.fail(entry, path, "count", f"Invalid value: {count!r}: must be an integer >= 1")
            names = [f"{name or 'node'}-{k}" for k in range(1, count + 1)]
        for n in names:
            if n in seen:
                raise loc.fail(entry, path, "name" if count is None else "count", f"Duplicate value: node {n!r}")
            seen.add(n)
            out.append(NodeSpec(n, allocatable))
    return out


def read_quota(loc: FieldLocator, doc: Any, path: str) -> QuotaSpec:
    """A ResourceQuota manifest of ``objects:``: its name, namespace and ``spec.hard``."""
    meta = doc.get("metadata")
    if not isinstance(meta, Mapping) or not meta.get("name"):
        raise loc.fail(meta if isinstance(meta, Mapping) else doc, path, "metadata.name", "Required value")
    spec = doc.get("spec")
    if not isinstance(spec, Mapping) or not isinstance(spec.get("hard"), Mapping) or not spec["hard"]:
        raise loc.fail(spec if isinstance(spec, Mapping) else doc, path + (".spec" if isinstance(spec, Mapping) else ""),
                       "hard" if isinstance(spec, Mapping) else "spec.hard",
                       "Required value: a mapping of resource name: quantity")
    hard = spec["hard"]
    for key in hard:
        value = read_quantity(loc, hard, f"{path}.spec.hard", key, milli=False)
        if value < 0:
            raise loc.fail(hard, f"{path}.spec.hard", key,
                           f"Invalid value: {hard[key]!r}: must be greater than or equal to 0")
    return QuotaSpec(str(meta.get("namespace") or "default"), str(meta["name"]),
                     {str(k): str(v) for k, v in plain(hard).items()})
