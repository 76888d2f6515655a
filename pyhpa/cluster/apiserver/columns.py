"""`kubectl get` columns per kind: the cells of the Tables :mod:`.tables` builds.

Why server-side: kubectl prints Table cells verbatim (it does not recompute AGE or TARGETS), so
the server must format them exactly as the real apiserver's printers do. Column names and
formats follow upstream's printers (pkg/printers/internalversion/printers.go).
"""

from __future__ import annotations

from datetime import datetime, timezone
from dataclasses import dataclass
from typing import Any, Callable, TypedDict

import msgspec

from pyhpa.api.timefmt import human_duration

Obj = dict[str, Any]
_NAME_DESC = ("Name must be unique within a namespace. Is required when creating resources, "
              "although some resources may allow a client to request the generation of an "
              "appropriate name automatically. Name is primarily intended for creation "
              "idempotence and configuration definition. Cannot be updated.")
_AGE_DESC = ("CreationTimestamp is a timestamp representing the server time when this object "
             "was created. Clients may not set this value. It is represented in RFC3339 form "
             "and is in UTC.")


@dataclass(frozen=True)
class Column:
    """One ``kubectl get`` column: Table metadata plus how to compute the cell."""

    name: str
    cell: Callable[[dict[str, Any], "TableClock"], Any]
    type: str = "string"
    format: str = ""
    description: str = ""
    priority: int = 0
    since: int = 0  # the minor release whose server first printed this column (0: every one)

    def shown_in(self, minor: int | None) -> bool:
        """Whether the emulated release ``minor`` (None: pyhpa's own, the newest) prints it."""
        return minor is None or minor >= self.since

    def definition(self) -> dict[str, Any]:
        return {"name": self.name, "type": self.type, "format": self.format,
                "description": self.description, "priority": self.priority}


# --------------------------------------------------------------------------- helpers


def _parse_ts(text: str | None) -> float | None:
    """Epoch seconds of an RFC 3339 timestamp, to the second (fractions and zone ignored: the
    API server writes UTC)."""
    if not text or len(text) < 19:
        return None
    try:
        return datetime.fromisoformat(text[:19]).replace(tzinfo=timezone.utc).timestamp()
    except ValueError:
        return None


def age(ts: str | None, now: float) -> str:
    """Human age of an RFC3339 timestamp; ``<unknown>`` when missing (upstream's translateTimestampSince)."""
    start = _parse_ts(ts)
    if start is None:
        return "<unknown>"
    return human_duration(now - start)


class TableClock:
    """The moment one Table is rendered at, for its AGE cells, and the release it is printed
    as (``minor``: an emulated release's minor version, None for pyhpa's own), for the columns
    whose text changed between releases.

    Why it remembers ages: the rows of one Table share ``now``, and objects created together
    share their creation second, so a list of a thousand pods formats a few distinct ages.
    The memory lives as long as the Table being built, never longer.
    """

    __slots__ = ("now", "minor", "_ages")

    def __init__(self, now: float, minor: int | None = None) -> None:
        self.now = now
        self.minor = minor
        self._ages: dict[str | None, str] = {}

    def age(self, ts: str | None) -> str:
        shown = self._ages.get(ts)
        if shown is None:
            shown = self._ages[ts] = age(ts, self.now)
        return shown


def _get(obj: Any, *path: str) -> Any:
    try:  # of the JSON types only a dict has .get: anything else ends the path with None
        for p in path:
            obj = obj.get(p)
    except AttributeError:
        return None
    return obj


def name_cell(o: Obj, now: TableClock) -> Any:
    return _get(o, "metadata", "name") or ""


def age_cell(o: Obj, now: TableClock) -> Any:
    return now.age(_get(o, "metadata", "creationTimestamp"))


def _int(v: Any) -> int:
    return v if isinstance(v, int) else 0


def template_containers(o: Obj, *template_at: str) -> list[Obj]:
    """The containers of the pod template at ``template_at`` (default ``spec.template``)."""
    found = _get(o, *(template_at or ("spec", "template")), "spec", "containers")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def label_selector_string(sel: Any) -> str:
    """Render a LabelSelector dict (or an RC map selector) as a selector string."""
    if not sel or not isinstance(sel, dict):
        return ""
    if "matchLabels" not in sel and "matchExpressions" not in sel:
        return ",".join(f"{k}={v}" for k, v in sorted(sel.items()))
    from pyhpa.api.selectors import SelectorError, selector_from_label_selector
    try:
        return str(selector_from_label_selector(sel))
    except (SelectorError, TypeError, AttributeError):  # stored before selectors were checked
        return ""


def selector_cell(o: Obj, now: TableClock) -> str:
    sel = _get(o, "spec", "selector")
    if not sel:
        return "<none>"
    return label_selector_string(sel) or "<none>"


def _col(name: str, cell: Callable[[Obj, TableClock], Any], *, type: str = "string", fmt: str = "",
         desc: str = "", priority: int = 0) -> Column:
    return Column(name, cell, type, fmt, desc or name, priority)


def dict_field(o: Any, key: str) -> Obj:
    """``o[key]`` when both are mappings, else an empty one."""
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


def list_field(o: Any, key: str) -> list[Any]:
    """``o[key]`` when ``o`` is a mapping and that a list, else an empty one."""
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, list) else []


def name_col() -> Column:
    return _col("Name", name_cell, fmt="name", desc=_NAME_DESC)


def age_col() -> Column:
    return _col("Age", age_cell, desc=_AGE_DESC)


def created_at_col() -> Column:
    """The "Created At" date column of the kinds that print one instead of an age."""
    return _col("Created At", lambda o, n: _get(o, "metadata", "creationTimestamp") or "", type="date",
                desc=_AGE_DESC)


# --------------------------------------------------------------------------- HPA


def _quantity(text: Any) -> str:
    if text is None:
        return "<nil>"
    try:
        from pyhpa.api.quantity import Quantity
        return str(Quantity.parse(text))
    except Exception:  # noqa: BLE001 - show what is stored rather than failing the list
        return str(text)


def hpa_targets(obj: Obj, named: bool = True) -> str:
    """The TARGETS cell (printers.go formatHPAMetrics): spec metric *i* paired with status metric *i*.
    ``named``: a Resource metric's cell starts with its resource (``cpu: 45%/50%``), as from
    1.30 (kubernetes/kubernetes PR #122804); before, it was ``45%/50%``."""
    metrics = _get(obj, "spec", "metrics") or []
    if not metrics:
        return "<none>"
    current = _get(obj, "status", "currentMetrics") or []
    items: list[str] = []
    for i, spec in enumerate(metrics):
        status = current[i] if i < len(current) and isinstance(current[i], dict) else {}
        typ = spec.get("type")
        if typ in ("External", "Object"):
            field = "external" if typ == "External" else "object"
            target = _get(spec, field, "target") or {}
            st = status.get(field)
            if target.get("averageValue") is not None:
                cur = "<unknown>"
                if st is not None and _get(st, "current", "averageValue") is not None:
                    cur = _quantity(_get(st, "current", "averageValue"))
                items.append(f"{cur}/{_quantity(target.get('averageValue'))} (avg)")
            else:
                cur = "<unknown>"
                if st is not None:
                    cur = _quantity(_get(st, "current", "value"))
                items.append(f"{cur}/{_quantity(target.get('value'))}")
        elif typ == "Pods":
            target = _get(spec, "pods", "target") or {}
            st = status.get("pods")
            cur = "<unknown>" if st is None else _quantity(_get(st, "current", "averageValue"))
            items.append(f"{cur}/{_quantity(target.get('averageValue'))}")
        elif typ in ("Resource", "ContainerResource"):
            field = "resource" if typ == "Resource" else "containerResource"
            src = spec.get(field) or {}
            target = src.get("target") or {}
            st = status.get(field)
            prefix = f"{src.get('name', '')}: " if named else ""
            if target.get("averageValue") is not None:
                cur = "<unknown>" if st is None else _quantity(_get(st, "current", "averageValue"))
                items.append(f"{prefix}{cur}/{_quantity(target.get('averageValue'))}")
            else:
                cur = "<unknown>"
                util = _get(st, "current", "averageUtilization") if st is not None else None
                if util is not None:
                    cur = f"{util}%"
                tgt = "<auto>"
                if target.get("averageUtilization") is not None:
                    tgt = f"{target['averageUtilization']}%"
                items.append(f"{prefix}{cur}/{tgt}")
        else:
            items.append("<unknown type>")
    if len(items) > 2:
        return ", ".join(items[:2]) + f" + {len(items) - 2} more..."
    return ", ".join(items)


def _hpa_ref(o: Obj, now: TableClock) -> str:
    ref = _get(o, "spec", "scaleTargetRef") or {}
    return f"{ref.get('kind', '')}/{ref.get('name', '')}"


def _hpa_min(o: Obj, now: TableClock) -> Any:
    v = _get(o, "spec", "minReplicas")
    return "<unset>" if v is None else str(v)


HPA_COLUMNS = (
    name_col(),
    _col("Reference", _hpa_ref, desc="reference to target object"),
    _col("Targets", lambda o, n: hpa_targets(o, n.minor is None or n.minor >= 30),
         desc="the current and target metrics"),
    _col("MinPods", _hpa_min, desc="minimum number of replicas"),
    _col("MaxPods", lambda o, n: _int(_get(o, "spec", "maxReplicas")),
         desc="maximum number of replicas"),
    _col("Replicas", lambda o, n: _int(_get(o, "status", "currentReplicas")),
         desc="current number of replicas"),
    age_col(),
)


# --------------------------------------------------------------------------- workloads


def _ready_of_replicas(o: Obj, now: TableClock) -> str:
    return f"{_int(_get(o, 'status', 'readyReplicas'))}/{_int(_get(o, 'spec', 'replicas'))}"


def template_columns(*template_at: str) -> tuple[Column, Column]:
    """The pod template's wide columns of the workload kinds (upstream's printers repeat them per
    kind), for the template at ``template_at`` (default ``spec.template``)."""
    def joined(field: str) -> Callable[[Obj, TableClock], str]:
        return lambda o, n: ",".join(c.get(field) or "" for c in template_containers(o, *template_at))

    return (_col("Containers", joined("name"), priority=1, desc="Names of each container in the template."),
            _col("Images", joined("image"), priority=1,
                 desc="Images referenced by each container in the template."))


_TEMPLATE_COLUMNS = template_columns()

DEPLOYMENT_COLUMNS = (
    name_col(),
    _col("Ready", _ready_of_replicas, desc="Number of the pod with ready state"),
    _col("Up-to-date", lambda o, n: _int(_get(o, "status", "updatedReplicas")), type="integer",
         desc="Total number of non-terminated pods targeted by this deployment that have the "
              "desired template spec."),
    _col("Available", lambda o, n: _int(_get(o, "status", "availableReplicas")), type="integer",
         desc="Total number of available pods (ready for at least minReadySeconds) targeted by "
              "this deployment."),
    age_col(),
    *_TEMPLATE_COLUMNS,
    _col("Selector", selector_cell, priority=1, desc="Label selector for pods."),
)

_REPLICA_COLUMNS = (
    name_col(),
    _col("Desired", lambda o, n: _int(_get(o, "spec", "replicas")), type="integer",
         desc="Number of desired pods."),
    _col("Current", lambda o, n: _int(_get(o, "status", "replicas")), type="integer",
         desc="Number of actual replicas."),
    _col("Ready", lambda o, n: _int(_get(o, "status", "readyReplicas")), type="integer",
         desc="The number of ready replicas for this replica set."),
    age_col(),
    *_TEMPLATE_COLUMNS,
    _col("Selector", selector_cell, priority=1, desc="Label selector for pods."),
)
REPLICASET_COLUMNS = _REPLICA_COLUMNS
RC_COLUMNS = _REPLICA_COLUMNS

STATEFULSET_COLUMNS = (
    name_col(),
    _col("Ready", _ready_of_replicas, desc="Number of the pod with ready state"),
    age_col(),
    *_TEMPLATE_COLUMNS,
)

SCALABLE_COLUMNS = (
    name_col(),
    _col("Desired", lambda o, n: _int(_get(o, "spec", "replicas")), type="integer",
         desc="spec.replicas"),
    _col("Current", lambda o, n: _int(_get(o, "status", "replicas")), type="integer",
         desc="status.replicas"),
    age_col(),
)


# --------------------------------------------------------------------------- pods, nodes, misc


# The pod cells are read for every row of the lists `kubectl get pods` asks for by the
# thousand: they walk the dicts directly (a field of an unexpected JSON type reads as empty)
# rather than through _get's general paths.


def _container_statuses(o: Obj) -> list[Obj]:
    """The pod's container statuses that are objects (a stored one may hold a null item)."""
    status = o.get("status") if isinstance(o, dict) else None
    found = status.get("containerStatuses") if isinstance(status, dict) else None
    return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []


def _pod_ready(o: Obj, now: TableClock) -> str:
    ready = 0
    for s in _container_statuses(o):
        state = s.get("state")
        if s.get("ready") and isinstance(state, dict) and state.get("running") is not None:
            ready += 1
    return f"{ready}/{len(_get(o, 'spec', 'containers') or [])}"


def _pod_status(o: Obj, now: TableClock) -> str:
    """upstream's printPod: the phase (or status reason), then the last container's waiting or
    terminated reason that has one; Terminating while a deleted pod still runs."""
    status = o.get("status")
    if not isinstance(status, dict):
        status = {}
    phase = status.get("phase") or "Pending"
    reason = status.get("reason") or phase
    for s in reversed(_container_statuses(o)):
        state = s.get("state")
        if not isinstance(state, dict):
            continue
        waiting, ended = state.get("waiting"), state.get("terminated")
        if _get(waiting, "reason"):
            reason = waiting["reason"]
        elif _get(ended, "reason"):
            reason = ended["reason"]
        elif isinstance(ended, dict):
            signal = _int(ended.get("signal"))
            reason = f"Signal:{signal}" if signal else f"ExitCode:{_int(ended.get('exitCode'))}"
    if _get(o, "metadata", "deletionTimestamp") and phase not in ("Succeeded", "Failed"):
        return "Terminating"
    return reason


def _pod_restarts(o: Obj, now: TableClock) -> str:
    """The restarts of the pod's containers, and how long ago the last one ended: ``3 (20s ago)``."""
    restarts = 0
    ended = []
    for s in _container_statuses(o):
        restarts += _int(s.get("restartCount"))
        finished = _get(s.get("lastState"), "terminated", "finishedAt")
        if finished:
            ended.append(finished)
    return f"{restarts} ({now.age(max(ended))} ago)" if restarts and ended else str(restarts)


def _pod_gates(o: Obj, now: TableClock) -> str:
    gates = _get(o, "spec", "readinessGates") or []
    return "<none>" if not gates else ",".join(g.get("conditionType", "") for g in gates)


POD_COLUMNS = (
    name_col(),
    _col("Ready", _pod_ready, desc="The aggregate readiness state of this pod for accepting traffic."),
    _col("Status", _pod_status, desc="The aggregate status of the containers in this pod."),
    _col("Restarts", _pod_restarts, desc="The number of times the containers in this pod have been "
                                          "restarted and when the last container in this pod has "
                                          "restarted."),
    age_col(),
    _col("IP", lambda o, n: _get(o, "status", "podIP") or "<none>", priority=1,
         desc="IP address allocated to the pod."),
    _col("Node", lambda o, n: _get(o, "spec", "nodeName") or "<none>", priority=1,
         desc="Name of the node where the pod is running."),
    _col("Nominated Node", lambda o, n: _get(o, "status", "nominatedNodeName") or "<none>",
         priority=1, desc="Name of the node where the pod is nominated to run."),
    _col("Readiness Gates", _pod_gates, priority=1, desc="Pod readiness gates."),
)



class _PodContainer(TypedDict, total=False):
    name: Any


class _PodContainerStatus(TypedDict, total=False):
    ready: Any
    restartCount: Any
    state: Any
    lastState: Any


class _PodSpecCells(TypedDict, total=False):
    containers: list[_PodContainer]
    nodeName: Any
    readinessGates: Any


class _PodStatusCells(TypedDict, total=False):
    phase: Any
    reason: Any
    podIP: Any
    nominatedNodeName: Any
    containerStatuses: list[_PodContainerStatus]


class PodCells(TypedDict, total=False):
    """What the POD_COLUMNS cells read, and the metadata a row carries left as stored JSON
    (``msgspec.Raw``: a row sends it on unchanged, so its bulk, the managedFields, is neither
    built into dicts nor encoded again): about a third of a running pod's JSON is decoded."""

    metadata: msgspec.Raw
    spec: _PodSpecCells
    status: _PodStatusCells


NAMESPACE_COLUMNS = (
    name_col(),
    _col("Status", lambda o, n: _get(o, "status", "phase") or "Active",
         desc="The status of the namespace"),
    age_col(),
)


def _node_status(o: Obj, now: TableClock) -> str:
    """Ready/NotReady/Unknown, and ``,SchedulingDisabled`` when cordoned (as upstream's)."""
    status = "Unknown"
    for c in _get(o, "status", "conditions") or []:
        if c.get("type") == "Ready":
            status = "Ready" if c.get("status") == "True" else "NotReady"
            break
    return status + (",SchedulingDisabled" if _get(o, "spec", "unschedulable") is True else "")


def _node_roles(o: Obj, now: TableClock) -> str:
    prefix = "node-role.kubernetes.io/"
    roles = sorted(k[len(prefix):] for k in (_get(o, "metadata", "labels") or {})
                   if k.startswith(prefix))
    return ",".join(roles) or "<none>"


def _node_address(o: Obj, kind: str) -> str:
    for a in _get(o, "status", "addresses") or []:
        if isinstance(a, dict) and a.get("type") == kind and a.get("address"):
            return a["address"]
    return "<none>"


NODE_COLUMNS = (
    name_col(),
    _col("Status", _node_status, desc="The status of the node"),
    _col("Roles", _node_roles, desc="The roles of the node"),
    age_col(),
    _col("Version", lambda o, n: _get(o, "status", "nodeInfo", "kubeletVersion") or "",
         desc="Kubelet Version reported by the node."),
    _col("Internal-IP", lambda o, n: _node_address(o, "InternalIP"), priority=1,
         desc="List of internal IPs."),
    _col("External-IP", lambda o, n: _node_address(o, "ExternalIP"), priority=1,
         desc="List of external IPs."),
    _col("OS-Image", lambda o, n: _get(o, "status", "nodeInfo", "osImage") or "<unknown>",
         priority=1, desc="OS image reported by the node."),
    _col("Kernel-Version", lambda o, n: _get(o, "status", "nodeInfo", "kernelVersion")
         or "<unknown>", priority=1, desc="Kernel version reported by the node."),
    _col("Container-Runtime", lambda o, n: _get(o, "status", "nodeInfo", "containerRuntimeVersion")
         or "<unknown>", priority=1, desc="Container runtime reported by the node."),
)


def _ev(o: Obj, core: str, events_v1: str) -> Any:
    """A field of a core/v1 Event, or its events.k8s.io/v1 name when the row is in that form."""
    v = o.get(core)
    return o.get(events_v1) if v is None else v


def _event_last_seen(o: Obj, now: TableClock) -> str:
    ts = (_get(o, "series", "lastObservedTime") or _ev(o, "lastTimestamp", "deprecatedLastTimestamp")
          or o.get("eventTime") or _get(o, "metadata", "creationTimestamp"))
    return now.age(ts)


def _event_object(o: Obj, now: TableClock) -> str:
    ref = _ev(o, "involvedObject", "regarding") or {}
    return f"{(ref.get('kind') or '').lower()}/{ref.get('name', '')}"


def _event_source(o: Obj, now: TableClock) -> str:
    src = _ev(o, "source", "deprecatedSource") or {}
    return src.get("component") or o.get("reportingController") or o.get("reportingComponent") or ""


EVENT_COLUMNS = (
    _col("Last Seen", _event_last_seen, desc="Time when last this event was seen"),
    _col("Type", lambda o, n: o.get("type") or "", desc="Type of this event (Normal, Warning)"),
    _col("Reason", lambda o, n: o.get("reason") or "", desc="Short, machine understandable string"),
    _col("Object", _event_object, desc="The object that this event is about"),
    _col("Subobject", lambda o, n: (_ev(o, "involvedObject", "regarding") or {}).get("fieldPath")
         or "", priority=1, desc="Subobject"),
    _col("Source", _event_source, priority=1, desc="Source of the event"),
    _col("Message", lambda o, n: _ev(o, "message", "note") or "", desc="A human-readable description"),
    _col("First Seen", lambda o, n: n.age(_ev(o, "firstTimestamp", "deprecatedFirstTimestamp")),
         priority=1, desc="Time when this Event was first observed."),
    _col("Count", lambda o, n: _int(_ev(o, "count", "deprecatedCount")), priority=1,
         desc="The number of times this event has occurred."),
    _col("Name", name_cell, fmt="name", priority=1, desc=_NAME_DESC),
)

CRD_COLUMNS = (
    name_col(),
    _col("Created At", lambda o, n: _get(o, "metadata", "creationTimestamp"), type="date",
         desc="When the CustomResourceDefinition was created."),
)

LEASE_COLUMNS = (
    name_col(),
    _col("Holder", lambda o, n: _get(o, "spec", "holderIdentity") or "",
         desc="The holder of the lease"),
    age_col(),
)


# --------------------------------------------------------------------------- Service, Endpoints


def _service_spec(o: Obj) -> Obj:
    return o.get("spec") if isinstance(o.get("spec"), dict) else {}


def _external_ip(o: Obj, now: TableClock) -> str:
    spec = _service_spec(o)
    typ = spec.get("type") or "ClusterIP"
    external = list(spec.get("externalIPs") or [])
    if typ == "ExternalName":
        return spec.get("externalName") or "<none>"
    if typ == "LoadBalancer":
        ingress = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        ips = [i.get("ip") or i.get("hostname") or "" for i in ingress] + external
        return ",".join(ips) if ips else "<pending>"
    return ",".join(external) if external else "<none>"


def _service_ports(o: Obj, now: TableClock) -> str:
    out = []
    for p in _service_spec(o).get("ports") or []:
        if not isinstance(p, dict):
            continue
        node = f":{p['nodePort']}" if p.get("nodePort") else ""
        out.append(f"{p.get('port')}{node}/{p.get('protocol') or 'TCP'}")
    return ",".join(out) or "<none>"


def _endpoints(o: Obj, now: TableClock) -> str:
    addrs = []
    for subset in o.get("subsets") or []:
        ports = [p.get("port") for p in subset.get("ports") or []] or [None]
        for a in subset.get("addresses") or []:
            for port in ports:
                addrs.append(f"{a.get('ip')}:{port}" if port is not None else str(a.get("ip")))
    if not addrs:
        return "<none>"
    shown = ",".join(addrs[:3])
    return shown + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")


SERVICE_COLUMNS = (
    Column("Name", name_cell, format="name", description="Name of the Service."),
    Column("Type", lambda o, n: _service_spec(o).get("type") or "ClusterIP",
           description="The type of the service."),
    Column("Cluster-IP", lambda o, n: _service_spec(o).get("clusterIP") or "<none>",
           description="The cluster IP of the service."),
    Column("External-IP", _external_ip, description="The external IPs of the service."),
    Column("Port(s)", _service_ports, description="The ports exposed by the service."),
    Column("Age", age_cell, description="Time since creation."),
    Column("Selector", selector_cell, priority=1,
           description="Route service traffic to pods with label keys and values matching this "
                       "selector."),
)

ENDPOINTS_COLUMNS = (
    Column("Name", name_cell, format="name", description="Name of the Endpoints object."),
    Column("Endpoints", _endpoints, description="Endpoints of the service."),
    Column("Age", age_cell, description="Time since creation."),
)
