"""What a pod counts against a ResourceQuota, and whether a quota refuses one more.

Why here: the embedded cluster's admission (:mod:`pyhpa.cluster.apiserver.admission`) and the
simulator's quotas (:mod:`pyhpa.sim.nodes`) refuse pods alike, with upstream's messages, by this
one implementation (plugin/pkg/admission/resourcequota and pkg/quota/v1/evaluator/core/pods.go).
A ReplicaSet whose pod is refused records ``FailedCreate`` (``Error creating: pods "web-7d9-" is
forbidden: exceeded quota: ...``) and runs fewer pods than its replicas.
"""

from __future__ import annotations

from typing import Any, Mapping

from pyhpa.api.quantity import Quantity

Obj = dict[str, Any]
# what each container must set when a quota caps it (pods.go enforcePodContainerConstraints)
COMPUTE = ("cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory")


def _d(o: Any, key: str) -> Obj:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


def q(v: Any) -> Quantity:
    """A quantity; zero when ``v`` is not one (validation reports it; count nothing)."""
    try:
        return Quantity.parse(str(v))
    except Exception:  # noqa: BLE001
        return Quantity.parse("0")


def _containers(pod: Obj) -> list[Obj]:
    return [c for c in _d(pod, "spec").get("containers") or [] if isinstance(c, dict)]


def pod_usage(pod: Obj) -> dict[str, Quantity]:
    """What one pod counts against a quota (pods.go PodUsageFunc, regular containers)."""
    out: dict[str, Quantity] = {"pods": q(1), "count/pods": q(1)}
    for c in _containers(pod):
        res = _d(c, "resources")
        for field, prefix in (("requests", "requests."), ("limits", "limits.")):
            for r, v in _d(res, field).items():
                for key in ((prefix + r, r) if field == "requests" else (prefix + r,)):
                    out[key] = out[key] + q(v) if key in out else q(v)
    return out


def add_usage(total: dict[str, Quantity], usage: Mapping[str, Quantity], times: int = 1) -> None:
    """Add ``times`` pods of ``usage`` to ``total``."""
    for k, v in usage.items():
        amount, n = q(0), times
        while n:  # v x times by doubling: quantities add, they do not multiply
            if n & 1:
                amount = amount + v
            v, n = v + v, n >> 1
        total[k] = total[k] + amount if k in total else amount


def _pretty(values: Mapping[str, Quantity], keys: list[str]) -> str:
    return ",".join(f"{k}={values.get(k, q(0))}" for k in keys)


def refusal(name: str, hard: Mapping[str, Any], used: Mapping[str, Quantity], pod: Obj) -> str | None:
    """Why the quota ``name`` (``spec.hard``) refuses ``pod`` with the namespace's pods using
    ``used``, worded as upstream; None when it admits it."""
    limits = {k: q(v) for k, v in hard.items()}
    required = [r for r in sorted(limits) if r in COMPUTE]
    missing: dict[str, list[str]] = {}
    for c in _containers(pod):
        has = set(pod_usage({"spec": {"containers": [c]}}))
        for r in required:
            if r not in has:
                missing.setdefault(r, []).append(c.get("name") or "")
    if missing:
        text = "; ".join(f"{r} for: {','.join(sorted(names))}" for r, names in sorted(missing.items()))
        return f"failed quota: {name}: must specify {text}"
    delta = pod_usage(pod)
    exceeded = [r for r in sorted(limits) if r in delta and (used.get(r, q(0)) + delta[r]).cmp(limits[r]) > 0]
    if exceeded:
        return (f"exceeded quota: {name}, requested: {_pretty(delta, exceeded)}, "
                f"used: {_pretty(used, exceeded)}, limited: {_pretty(limits, exceeded)}")
    return None


def forbidden_message(pod_name: str, reason: str) -> str:
    """The API server's 403 message for a refused pod (``pod_name``: its name, or the
    ``generateName`` prefix a controller's pod has before it is created)."""
    return f'pods "{pod_name}" is forbidden: {reason}'
