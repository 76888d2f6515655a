"""The apiserver's defaulting of the built-in workload kinds (core/v1 Pod and RC, apps/v1).

Why at write time: upstream fills these in when an object is decoded, so ``kubectl get -o yaml``
shows them, ``kubectl rollout status`` reads them (a StatefulSet's ``updateStrategy``), and a
Deployment's pod template is compared with its ReplicaSets' in the defaulted form. The values
are upstream's (SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_Probe, ...).
"""

from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


def image_pull_policy(image: Any) -> str:
    """``Always`` for an untagged or ``:latest`` image, else ``IfNotPresent`` (digests too)."""
    text = str(image or "")
    if "@" in text:
        return "IfNotPresent"
    tag = text.rsplit("/", 1)[-1].partition(":")[2]
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def _default_probe(probe: Any) -> None:
    if not isinstance(probe, dict):
        return
    probe.setdefault("timeoutSeconds", 1)
    probe.setdefault("periodSeconds", 10)
    probe.setdefault("successThreshold", 1)
    probe.setdefault("failureThreshold", 3)
    http = probe.get("httpGet")
    if isinstance(http, dict):
        http.setdefault("path", "/")
        http.setdefault("scheme", "HTTP")


def _default_container(c: Any) -> None:
    if not isinstance(c, dict):
        return
    c.setdefault("imagePullPolicy", image_pull_policy(c.get("image")))
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    c.setdefault("resources", {})
    for port in c.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
    for env in c.get("env") or []:
        ref = ((env.get("valueFrom") or {}).get("fieldRef")) if isinstance(env, dict) else None
        if isinstance(ref, dict):
            ref.setdefault("apiVersion", "v1")
    for name in ("livenessProbe", "readinessProbe", "startupProbe"):
        _default_probe(c.get(name))


def default_pod_spec(spec: Any) -> None:
    """Fill a PodSpec's defaults in place (pods and every pod template)."""
    if not isinstance(spec, dict):
        return
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            _default_container(c)


# What upstream's DefaultTolerationSeconds admission adds to every pod: it stays bound for 5 min
# to a node that is not ready or unreachable.
NODE_PROBLEM_TAINTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def default_pod(obj: Obj) -> None:
    """A Pod's defaults: its spec's, plus the Pod-only ones (a container's requests default
    to its limits, which upstream does for Pods and not for pod templates), plus what the
    admission plugins of a default cluster add (:func:`_admit_pod_spec`)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    default_pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)
    _admit_pod_spec(spec)
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            limits = res.get("limits") if isinstance(res, dict) else None
            if isinstance(limits, dict) and limits:
                requests = res.get("requests")
                if not isinstance(requests, dict):
                    requests = res["requests"] = {}
                for name, value in limits.items():
                    requests.setdefault(name, value)


def _admit_pod_spec(spec: Obj) -> None:
    """The ServiceAccount (``default``), Priority (0, preempting lower priorities, with no
    PriorityClass named) and DefaultTolerationSeconds admission plugins' changes to a pod:
    what ``kubectl describe pod`` shows as Service Account, Priority and Tolerations."""
    account = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    if isinstance(account, str):
        spec["serviceAccountName"] = spec["serviceAccount"] = account
    if not spec.get("priorityClassName"):
        spec.setdefault("priority", 0)
        spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.get("tolerations")
    if tolerations is not None and not isinstance(tolerations, list):
        return
    tolerations = list(tolerations or [])
    for key in NODE_PROBLEM_TAINTS:
        if not any(_tolerates_no_execute(t, key) for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": 300})
    spec["tolerations"] = tolerations


def _tolerates_no_execute(t: Any, key: str) -> bool:
    if not isinstance(t, dict) or t.get("effect") not in (None, "", "NoExecute"):
        return False
    return t.get("key") == key or (not t.get("key") and t.get("operator") == "Exists")


def default_workload(kind: str, obj: Obj) -> None:
    """Defaults of Deployment, ReplicaSet, StatefulSet and ReplicationController objects."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    spec.setdefault("replicas", 1)
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_spec(template.get("spec"))
    if kind == "ReplicationController" and isinstance(template, dict):
        labels = (template.get("metadata") or {}).get("labels")
        if isinstance(labels, dict) and labels:
            if not spec.get("selector"):
                spec["selector"] = dict(labels)
            meta = obj.setdefault("metadata", {})
            if not meta.get("labels"):
                meta["labels"] = dict(labels)
    elif kind == "Deployment":
        _default_rolling_update(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif kind == "StatefulSet":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        _default_rolling_update(spec, "updateStrategy", {"partition": 0})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy",
                        {"whenDeleted": "Retain", "whenScaled": "Retain"})


def _default_rolling_update(spec: Obj, field: str, rolling: dict[str, Any]) -> None:
    """``spec.<field>``: type RollingUpdate when unset, and then ``rollingUpdate``'s defaults."""
    strategy = spec.setdefault(field, {})
    if isinstance(strategy, dict):
        strategy.setdefault("type", "RollingUpdate")
        if strategy.get("type") == "RollingUpdate":
            ru = strategy.setdefault("rollingUpdate", {})
            if isinstance(ru, dict):
                for name, value in rolling.items():
                    ru.setdefault(name, value)
