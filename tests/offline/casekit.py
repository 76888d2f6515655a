"""Authoring kit for the `pyhpa reconcile` acceptance corpus (tests/offline/cases/).

Why this exists: every case's expected output is the *full* `v1 List`, and most of it is an echo
of the snapshot (HPA spec after API defaulting, workloads, events wrapped as v1 Event objects).
Typing that echo by hand a hundred times would bury the numbers that matter under boilerplate
and typos. This kit writes the echo; the *decisions* (replica counts, conditions, metric
statuses, events, controller memory) are literal values written by hand in `corpus.py`,
computed from upstream's pkg/controller/podautoscaler. Nothing here imports pyhpa: the corpus is an
independent oracle, never the output of the code under test.

Run `python tests/offline/corpus.py` to (re)write the case directories.
"""

from __future__ import annotations

import copy
import json
import pathlib
import shutil
from datetime import datetime, timedelta, timezone
from typing import Any

import yaml

CASES = pathlib.Path(__file__).resolve().parent / "cases"

NOW_DT = datetime(2026, 1, 1, 0, 10, 0, tzinfo=timezone.utc)


def t(offset_s: float = 0) -> str:
    """RFC3339 time `offset_s` seconds from NOW (negative = in the past)."""
    return (NOW_DT + timedelta(seconds=offset_s)).strftime("%Y-%m-%dT%H:%M:%SZ")


NOW = t(0)
T0 = t(-600)  # default pod start: 10 minutes before NOW (past the 5m CPU initialization period)
NS = "default"

# ----------------------------------------------------------------------------- snapshot objects


def deploy(name="web", replicas: int | None = 3, status_replicas: int | None = None, labels=None, ns=NS,
           kind="Deployment", api_version="apps/v1", selector: Any = "match") -> dict:
    labels = labels if labels is not None else {"app": name}
    spec: dict[str, Any] = {}
    if replicas is not None:
        spec["replicas"] = replicas
    if selector == "match":
        spec["selector"] = dict(labels) if kind == "ReplicationController" else {"matchLabels": dict(labels)}
    elif selector is not None:
        spec["selector"] = selector
    obj = {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": ns}, "spec": spec,
           "status": {"replicas": status_replicas if status_replicas is not None else (replicas if replicas is not None else 1)}}
    return obj


def pod(name, labels=None, requests: Any = "1", containers=("app",), phase="Running", ready: str | None = "True",
        start: str | None = T0, ready_at: str | None = None, deleted=False, ns=NS, app="web") -> dict:
    """A pod; `requests` is the CPU request per container (a string) or a dict of resources, or None."""
    labels = labels if labels is not None else {"app": app}
    ctrs = []
    for c in containers:
        ctr: dict[str, Any] = {"name": c}
        if requests is not None:
            ctr["resources"] = {"requests": requests if isinstance(requests, dict) else {"cpu": requests}}
        ctrs.append(ctr)
    meta: dict[str, Any] = {"name": name, "namespace": ns, "labels": labels}
    if deleted:
        meta["deletionTimestamp"] = t(-5)
    status: dict[str, Any] = {"phase": phase}
    if start is not None:
        status["startTime"] = start
    if ready is not None:
        status["conditions"] = [{"type": "Ready", "status": ready,
                                 "lastTransitionTime": ready_at or (t(-590) if start == T0 else start)}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": {"containers": ctrs}, "status": status}


def podmetrics(name, usage: Any, labels=None, ns=NS, ts: str | None = None, window="30s", app="web") -> dict:
    """PodMetrics; `usage` is a CPU string for one container `app`, or {container: {res: q}}."""
    labels = labels if labels is not None else {"app": app}
    if isinstance(usage, dict):
        containers = [{"name": c, "usage": u} for c, u in usage.items()]
    else:
        containers = [{"name": "app", "usage": {"cpu": usage}}]
    return {"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
            "metadata": {"name": name, "namespace": ns, "labels": labels},
            "timestamp": ts or t(-15), "window": window, "containers": containers}


def cpu_pods(usages, requests="1", prefix="web", app="web", **kw) -> list[dict]:
    """Ready pods `<prefix>-<i>` with CPU usage (milli strings); None = pod without metrics."""
    out = []
    for i, u in enumerate(usages):
        out.append(pod(f"{prefix}-{i}", requests=requests, app=app, **kw))
        if u is not None:
            out.append(podmetrics(f"{prefix}-{i}", u, app=app))
    return out


def custom_list(items: list[dict]) -> dict:
    return {"apiVersion": "custom.metrics.k8s.io/v1beta2", "kind": "MetricValueList", "metadata": {}, "items": items}


def pod_value(pod_name, metric, value, selector_labels=None, ns=NS) -> dict:
    m: dict[str, Any] = {"name": metric}
    if selector_labels:
        m["selector"] = {"matchLabels": selector_labels}
    return {"describedObject": {"kind": "Pod", "namespace": ns, "name": pod_name, "apiVersion": "/v1"},
            "metric": m, "timestamp": t(-15), "windowSeconds": 60, "value": value}


def object_value(kind, name, metric, value, api_version="v1", selector_labels=None, ns=NS) -> dict:
    m: dict[str, Any] = {"name": metric}
    if selector_labels:
        m["selector"] = {"matchLabels": selector_labels}
    return {"describedObject": {"kind": kind, "namespace": ns, "name": name, "apiVersion": api_version},
            "metric": m, "timestamp": t(-15), "windowSeconds": 60, "value": value}


def external_list(items: list[dict], ns: str | None = None) -> dict:
    meta = {"namespace": ns} if ns else {}
    return {"apiVersion": "external.metrics.k8s.io/v1beta1", "kind": "ExternalMetricValueList", "metadata": meta, "items": items}


def ext_item(metric, value, labels=None) -> dict:
    return {"metricName": metric, "metricLabels": labels or {}, "timestamp": t(-15), "window": 60, "value": value}


def state(name, recs=None, up=None, down=None, ns=NS) -> dict:
    """AutoscalerState; recs = [(replicas, time)], up/down = [(change, time, outdated)]; None = omitted."""
    obj: dict[str, Any] = {"apiVersion": "pyhpa.io/v1alpha1", "kind": "AutoscalerState",
                           "metadata": {"namespace": ns, "name": name}}
    if recs is not None:
        obj["recommendations"] = [{"timestamp": ts, "replicas": r} for r, ts in recs]
    for key, evs in (("scaleUpEvents", up), ("scaleDownEvents", down)):
        if evs is not None:
            obj[key] = [{"timestamp": ts, "replicaChange": c, "outdated": o} for c, ts, o in evs]
    return obj


# ----------------------------------------------------------------------------- HPA spec pieces


def cpu_util(target: int) -> dict:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}


def res_util(name: str, target: int) -> dict:
    return {"type": "Resource", "resource": {"name": name, "target": {"type": "Utilization", "averageUtilization": target}}}


def res_avg(name: str, q: str) -> dict:
    return {"type": "Resource", "resource": {"name": name, "target": {"type": "AverageValue", "averageValue": q}}}


def cont_util(name: str, container: str, target: int) -> dict:
    return {"type": "ContainerResource", "containerResource": {
        "name": name, "target": {"type": "Utilization", "averageUtilization": target}, "container": container}}


def cont_avg(name: str, container: str, q: str) -> dict:
    return {"type": "ContainerResource", "containerResource": {
        "name": name, "target": {"type": "AverageValue", "averageValue": q}, "container": container}}


def _ident(metric, selector):
    m: dict[str, Any] = {"name": metric}
    if selector is not None:
        m["selector"] = selector
    return m


def pods_m(metric: str, q: str, selector=None) -> dict:
    return {"type": "Pods", "pods": {"metric": _ident(metric, selector), "target": {"type": "AverageValue", "averageValue": q}}}


def obj_value(kind, name, metric, q, api_version="v1", selector=None) -> dict:
    return {"type": "Object", "object": {"describedObject": {"kind": kind, "name": name, "apiVersion": api_version},
                                         "target": {"type": "Value", "value": q}, "metric": _ident(metric, selector)}}


def obj_avg(kind, name, metric, q, api_version="v1", selector=None) -> dict:
    return {"type": "Object", "object": {"describedObject": {"kind": kind, "name": name, "apiVersion": api_version},
                                         "target": {"type": "AverageValue", "averageValue": q}, "metric": _ident(metric, selector)}}


def ext_value(metric, q, selector=None) -> dict:
    return {"type": "External", "external": {"metric": _ident(metric, selector), "target": {"type": "Value", "value": q}}}


def ext_avg(metric, q, selector=None) -> dict:
    return {"type": "External", "external": {"metric": _ident(metric, selector), "target": {"type": "AverageValue", "averageValue": q}}}


def hpa(name="web", metrics=None, min_r: int | None = 1, max_r=10, target="web", behavior=None, status=None,
        ns=NS, kind="Deployment", api_version="apps/v1", meta_extra=None) -> dict:
    spec: dict[str, Any] = {"scaleTargetRef": {"kind": kind, "name": target}}
    if api_version is not None:
        spec["scaleTargetRef"]["apiVersion"] = api_version
    if min_r is not None:
        spec["minReplicas"] = min_r
    spec["maxReplicas"] = max_r
    if metrics is not None:
        spec["metrics"] = metrics
    if behavior is not None:
        spec["behavior"] = behavior
    meta = {"name": name, "namespace": ns, **(meta_extra or {})}
    obj = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta, "spec": spec}
    if status is not None:
        obj["status"] = status
    return obj


# ----------------------------------------------------------------------------- expected pieces

MSG = {
    "SucceededGetScale": "the HPA controller was able to get the target's current scale",
    "ReadyForNewScale": "recommended size matches current size",
    "ScaleDownStabilized": "recent recommendations were higher than current one, applying the highest recent recommendation",
    "ScaleUpStabilized": "recent recommendations were lower than current one, applying the lowest recent recommendation",
    "ScaleUpLimit": "the desired replica count is increasing faster than the maximum scale rate",
    "ScaleDownLimit": "the desired replica count is decreasing faster than the maximum scale rate",
    "TooManyReplicas": "the desired replica count is more than the maximum replica count",
    "TooFewReplicas": "the desired replica count is less than the minimum replica count",
    "DesiredWithinRange": "the desired count is within the acceptable range",
    "ScalingDisabled": "scaling is disabled since the replica count of the target is zero",
    "ScaledToZero": "the HPA controller scaled the workload to zero",
    "NotScaledToZero": "the HPA controller did not scale the workload to zero",
}

CPU_UTIL = "cpu resource utilization (percentage of request)"


def cond(type_, status_, reason, message=None, ltt=NOW) -> dict:
    return {"type": type_, "status": status_, "lastTransitionTime": ltt, "reason": reason,
            "message": message if message is not None else MSG[reason]}


def able(reason, ltt=NOW) -> dict:
    return cond("AbleToScale", "True", reason, ltt=ltt)


def rescaled(n, ltt=NOW) -> dict:
    return cond("AbleToScale", "True", "SucceededRescale", f"the HPA controller was able to update the target scale to {n}", ltt)


def active(name, ltt=NOW) -> dict:
    return cond("ScalingActive", "True", "ValidMetricFound",
                f"the HPA was able to successfully calculate a replica count from {name}", ltt)


def inactive(reason, err, ltt=NOW) -> dict:
    return cond("ScalingActive", "False", reason, f"the HPA was unable to compute the replica count: {err}", ltt)


def limited(reason, ltt=NOW) -> dict:
    return cond("ScalingLimited", "False" if reason == "DesiredWithinRange" else "True", reason, ltt=ltt)


def stz(flag: bool, ltt=NOW) -> dict:
    return cond("ScaledToZero", "True", "ScaledToZero", ltt=ltt) if flag else cond("ScaledToZero", "False", "NotScaledToZero", ltt=ltt)


def status(current, desired, metrics=None, conds=(), last_scale=None) -> dict:
    out: dict[str, Any] = {}
    if last_scale:
        out["lastScaleTime"] = last_scale
    if current:
        out["currentReplicas"] = current
    out["desiredReplicas"] = desired
    out["currentMetrics"] = metrics
    if conds:
        out["conditions"] = list(conds)
    return out


def s_util(util: int, avg: str, name="cpu") -> dict:
    return {"type": "Resource", "resource": {"name": name, "current": {"averageValue": avg, "averageUtilization": util}}}


def s_avg(avg: str, name="cpu") -> dict:
    return {"type": "Resource", "resource": {"name": name, "current": {"averageValue": avg}}}


def s_cont(container, avg, util=None, name="cpu") -> dict:
    cur: dict[str, Any] = {"averageValue": avg}
    if util is not None:
        cur["averageUtilization"] = util
    return {"type": "ContainerResource", "containerResource": {"name": name, "current": cur, "container": container}}


def s_pods(metric, avg, selector=None) -> dict:
    return {"type": "Pods", "pods": {"metric": _ident(metric, selector), "current": {"averageValue": avg}}}


def s_obj(kind, name, metric, value=None, avg=None, api_version="v1", selector=None) -> dict:
    cur = {"value": value} if value is not None else {"averageValue": avg}
    return {"type": "Object", "object": {"metric": _ident(metric, selector), "current": cur,
                                         "describedObject": {"kind": kind, "name": name, "apiVersion": api_version}}}


def s_ext(metric, value=None, avg=None, selector=None) -> dict:
    cur = {"value": value} if value is not None else {"averageValue": avg}
    return {"type": "External", "external": {"metric": _ident(metric, selector), "current": cur}}


EMPTY_STATUS = {"type": ""}  # upstream's placeholder for a metric that failed


def ev(type_, reason, message, hpa_name="web", ns=NS) -> tuple:
    return (ns, hpa_name, type_, reason, message)


def rescale_ev(n, reason, hpa_name="web", ns=NS) -> tuple:
    return ev("Normal", "SuccessfulRescale", f"New size: {n}; reason: {reason}", hpa_name, ns)


def out_state(name, recs=None, up=None, down=None, ns=NS) -> dict:
    return state(name, recs, up, down, ns)


# ----------------------------------------------------------------------------- API defaulting (oracle)

DEFAULT_UP = {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
              "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]}
DEFAULT_DOWN = {"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}


def defaulted_spec(spec: dict) -> dict:
    """Upstream's autoscaling/v2 defaults.go, written out independently of pyhpa."""
    spec = copy.deepcopy(spec)
    out: dict[str, Any] = {"scaleTargetRef": spec["scaleTargetRef"],
                           "minReplicas": spec.get("minReplicas", 1), "maxReplicas": spec["maxReplicas"]}
    out["metrics"] = spec.get("metrics") or [cpu_util(80)]
    if spec.get("behavior") is not None:
        b = spec["behavior"]
        beh = {}
        for key, base in (("scaleUp", DEFAULT_UP), ("scaleDown", DEFAULT_DOWN)):
            rules = copy.deepcopy(base)
            for k, v in (b.get(key) or {}).items():
                if v is not None:
                    rules[k] = v
            beh[key] = rules
        out["behavior"] = beh
    return out


# ----------------------------------------------------------------------------- writing a case


def event_object(seq: int, ev_: tuple, now: str = NOW) -> dict:
    ns, name, type_, reason, message = ev_
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{name}.{seq}", "namespace": ns},
            "involvedObject": {"kind": "HorizontalPodAutoscaler", "namespace": ns, "name": name, "apiVersion": "autoscaling/v2"},
            "reason": reason, "message": message, "source": {"component": "horizontal-pod-autoscaler"},
            "firstTimestamp": now, "lastTimestamp": now, "count": 1, "type": type_}


def _flatten(docs):
    for d in docs:
        if d.get("kind") == "List" or (d.get("kind", "").endswith("List") and d.get("apiVersion") == "v1"):
            yield from _flatten(d.get("items") or [])
        else:
            yield d


WORKLOAD_KINDS = {"Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"}


def case(name: str, *, about: str, snapshot: list[dict] | None = None, hpas: dict | None = None,
         scaled: dict | None = None, events: list[tuple] = (), states: list[dict] = (), args: str = "",
         spec: dict | None = None, meta: dict | None = None, error: str | None = None,
         snapshot_text: str | None = None, extra_files: dict | None = None, now: str = NOW) -> None:
    """Write tests/offline/cases/<name>/.

    hpas:   {hpa name or (ns, name): expected status} -- every HPA of the snapshot.
    scaled: {workload name: replicas after the pass} (others echo unchanged).
    events: in emission order; states: AutoscalerState per HPA in HPA order.
    spec/meta: {hpa key: expected spec/metadata} where the echo is not just the defaulted input.
    error:  for invalid input: substrings the one-line error must contain ("|"-separated).
    """
    d = CASES / name
    if d.exists():
        shutil.rmtree(d)
    d.mkdir(parents=True)
    (d / "README").write_text(about.strip() + "\n")
    if snapshot_text is not None:
        (d / "snapshot.yaml").write_text(snapshot_text)
    else:
        (d / "snapshot.yaml").write_text(yaml.safe_dump_all(snapshot, sort_keys=False, explicit_start=True))
    for fname, text in (extra_files or {}).items():
        (d / fname).write_text(text)
    if args:
        (d / "args").write_text(args + "\n")
    if error is not None:
        (d / "expected-error").write_text(error + "\n")
        return
    docs = list(_flatten(snapshot or []))
    for fname, text in (extra_files or {}).items():
        if fname.endswith(".yaml"):
            docs += list(_flatten([x for x in yaml.safe_load_all(text) if x]))
    items: list[dict] = []

    def key_of(o):
        return (o["metadata"].get("namespace", ""), o["metadata"]["name"])

    hpa_docs = sorted((o for o in docs if o.get("kind") == "HorizontalPodAutoscaler"), key=key_of)
    hpas = hpas or {}
    for h in hpa_docs:
        k = key_of(h)
        st = hpas.get(k, hpas.get(k[1]))
        assert st is not None, f"{name}: no expected status for {k}"
        sp = (spec or {}).get(k[1]) or defaulted_spec(h["spec"])
        md = (meta or {}).get(k[1]) or h["metadata"]
        items.append({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": md, "spec": sp, "status": st})
    for w in docs:
        if w.get("kind") in WORKLOAD_KINDS:
            w = copy.deepcopy(w)
            if scaled and w["metadata"]["name"] in scaled:
                w.setdefault("spec", {})["replicas"] = scaled[w["metadata"]["name"]]
            items.append(w)
    seqs: dict[tuple, int] = {}
    for e in events:
        seqs[e[:2]] = seqs.get(e[:2], 0) + 1
        items.append(event_object(seqs[e[:2]], e, now))
    assert len(states) == len(hpa_docs), f"{name}: one AutoscalerState per HPA"
    items.extend(states)
    expected = {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": items}
    (d / "expected.yaml").write_text(yaml.safe_dump(expected, sort_keys=False))


def dump_json(obj) -> str:
    return json.dumps(obj, indent=1)
