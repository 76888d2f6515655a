"""`kubectl get` columns of ControllerRevisions and the RBAC and batch kinds, as upstream's
printers compute them (pkg/printers/internalversion/printers.go ``printControllerRevision``,
``printRoleBinding``, ``printJob``, ``printCronJob``).

Why apart from :mod:`.columns` and :mod:`.app_columns`: these kinds came with the whole
application support and share nothing with the others but the name and age cells.
"""

from __future__ import annotations

from typing import Any

from pyhpa.api.timefmt import human_duration
from pyhpa.cluster.apiserver.columns import (Column, TableClock, _parse_ts, age_col, created_at_col, dict_field,
                                             list_field, name_col, template_columns)

Obj = dict[str, Any]


# --------------------------------------------------------------------------- apps


def _controller(o: Obj, now: TableClock) -> str:
    """printers.go ``printControllerRevision``: the controller as ``kind.group/name``."""
    for ref in list_field(dict_field(o, "metadata"), "ownerReferences"):
        if isinstance(ref, dict) and ref.get("controller"):
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            kind = str(ref.get("kind") or "")
            return f"{(kind + '.' + group) if group else kind}".lower() + f"/{ref.get('name') or ''}"
    return "<none>"


CONTROLLERREVISION_COLUMNS = (
    name_col(),
    Column("Controller", _controller, description="Controller of the object"),
    Column("Revision", lambda o, n: o.get("revision") if isinstance(o.get("revision"), int) else 0,
           description="Revision indicates the revision of the state represented by Data."),
    age_col(),
)


# --------------------------------------------------------------------------- RBAC

ROLE_COLUMNS = (
    name_col(),
    created_at_col(),
)


def _subjects(kind: str):
    def cell(o: Obj, now: TableClock) -> str:
        names = []
        for s in list_field(o, "subjects"):
            if isinstance(s, dict) and s.get("kind") == kind:
                names.append(f"{s.get('namespace') or ''}/{s.get('name') or ''}"
                             if kind == "ServiceAccount" else s.get("name") or "")
        return ", ".join(names)
    return cell


BINDING_COLUMNS = (
    name_col(),
    Column("Role", lambda o, n: f"{dict_field(o, 'roleRef').get('kind') or ''}/"
                                f"{dict_field(o, 'roleRef').get('name') or ''}",
           description="RoleRef can reference a Role in the current namespace or a ClusterRole "
                       "in the global namespace."),
    age_col(),
    Column("Users", _subjects("User"), priority=1, description="Users in the roleBinding"),
    Column("Groups", _subjects("Group"), priority=1, description="Groups in the roleBinding"),
    Column("ServiceAccounts", _subjects("ServiceAccount"), priority=1,
           description="ServiceAccounts in the roleBinding"),
)


# --------------------------------------------------------------------------- batch


def _job_status(o: Obj, now: TableClock) -> str:
    """printers.go ``printJob``'s STATUS: the terminal condition, Terminating, else the
    conditions that come before a terminal one, else Running."""
    conds = {c.get("type"): c.get("status") for c in list_field(dict_field(o, "status"), "conditions")
             if isinstance(c, dict)}
    if conds.get("Complete") == "True":
        return "Complete"
    if conds.get("Failed") == "True":
        return "Failed"
    if dict_field(o, "metadata").get("deletionTimestamp"):
        return "Terminating"
    if conds.get("Suspended") == "True":
        return "Suspended"
    if conds.get("FailureTarget") == "True":
        return "FailureTarget"
    if conds.get("SuccessCriteriaMet") == "True":
        return "SuccessCriteriaMet"
    return "Running"


def _completions(o: Obj, now: TableClock) -> str:
    spec, status = dict_field(o, "spec"), dict_field(o, "status")
    succeeded = status.get("succeeded") or 0
    completions = spec.get("completions")
    if completions is not None:
        return f"{succeeded}/{completions}"
    parallelism = spec.get("parallelism")
    if parallelism is not None and parallelism > 1:
        return f"{succeeded}/1 of {parallelism}"
    return f"{succeeded}/1"


def _job_duration(o: Obj, now: TableClock) -> str:
    status = dict_field(o, "status")
    start = _parse_ts(status.get("startTime"))
    if start is None:
        return ""
    end = _parse_ts(status.get("completionTime"))
    return human_duration((end if end is not None else now.now) - start)


def _selector(o: Obj, now: TableClock) -> str:
    sel = dict_field(dict_field(o, "spec"), "selector")
    parts = [f"{k}={v}" for k, v in sorted(dict_field(sel, "matchLabels").items())]
    for e in list_field(sel, "matchExpressions"):
        if isinstance(e, dict):
            op = str(e.get("operator", "")).lower()
            vals = ",".join(str(v) for v in e.get("values") or ())
            parts.append(f"{e.get('key')} {op} ({vals})" if vals else
                         (e.get("key") if op == "exists" else f"!{e.get('key')}"))
    return ",".join(parts) if parts else "<none>"


JOB_COLUMNS = (
    name_col(),
    # kubernetes/kubernetes#123226 (1.30) added the Status column.
    Column("Status", _job_status, description="Status of the job.", since=30),
    Column("Completions", _completions, description="The desired number of successfully "
                                                    "finished pods the job should be run with."),
    Column("Duration", _job_duration, description="Time required to complete the job."),
    age_col(),
    *template_columns(),
    Column("Selector", _selector, priority=1, description="A label query over pods that "
                                                          "should match the pod count."),
)


def _last_schedule(o: Obj, now: TableClock) -> str:
    return now.age(dict_field(o, "status").get("lastScheduleTime")) \
        if dict_field(o, "status").get("lastScheduleTime") else "<none>"


CRONJOB_COLUMNS = (
    name_col(),
    Column("Schedule", lambda o, n: dict_field(o, "spec").get("schedule") or "",
           description="The schedule in Cron format."),
    # kubernetes/kubernetes#122231 (1.30) added the TimeZone column.
    Column("TimeZone", lambda o, n: dict_field(o, "spec").get("timeZone") or "<none>",
           description="The time zone name for the given schedule.", since=30),
    Column("Suspend", lambda o, n: bool(dict_field(o, "spec").get("suspend")), type="boolean",
           description="Whether subsequent executions are suspended."),
    Column("Active", lambda o, n: len(list_field(dict_field(o, "status"), "active")), type="integer",
           description="A list of pointers to currently running jobs."),
    Column("Last Schedule", _last_schedule, description="Information when was the last time "
                                                        "the job was successfully scheduled."),
    age_col(),
    *template_columns("spec", "jobTemplate", "spec", "template"),
    Column("Selector", lambda o, n: "<none>", priority=1,
           description="A label query over pods that should match the pod count."),
)


# --------------------------------------------------------------------------- apps


def _status_int(field: str):
    def cell(o: Obj, now: TableClock) -> int:
        v = dict_field(o, "status").get(field)
        return v if isinstance(v, int) else 0
    return cell


def _node_selector(o: Obj, now: TableClock) -> str:
    sel = dict_field(dict_field(dict_field(dict_field(o, "spec"), "template"), "spec"), "nodeSelector")
    return ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>"


DAEMONSET_COLUMNS = (
    name_col(),
    Column("Desired", _status_int("desiredNumberScheduled"), type="integer",
           description="The total number of nodes that should be running the daemon pod."),
    Column("Current", _status_int("currentNumberScheduled"), type="integer",
           description="The number of nodes that are running at least 1 daemon pod and are "
                       "supposed to run the daemon pod."),
    Column("Ready", _status_int("numberReady"), type="integer",
           description="The number of nodes that should be running the daemon pod and have one "
                       "or more of the daemon pod running and ready."),
    Column("Up-to-date", _status_int("updatedNumberScheduled"), type="integer",
           description="The total number of nodes that are running updated daemon pod"),
    Column("Available", _status_int("numberAvailable"), type="integer",
           description="The number of nodes that should be running the daemon pod and have one "
                       "or more of the daemon pod running and available (ready for at least "
                       "spec.minReadySeconds)"),
    Column("Node Selector", _node_selector, description="NodeSelector is a selector which must "
                                                        "be true for the pod to fit on a node."),
    age_col(),
    *template_columns(),
    Column("Selector", _selector, priority=1, description="A label query over pods that are "
                                                          "managed by the daemon set."),
)


# --------------------------------------------------------------------------- discovery


def _slice_ports(o: Obj, now: TableClock) -> str:
    ports = [str(p.get("port")) for p in list_field(o, "ports") if isinstance(p, dict)
             and p.get("port") is not None]
    return ",".join(ports) if ports else "<unset>"


def _slice_endpoints(o: Obj, now: TableClock) -> str:
    addrs = [a for e in list_field(o, "endpoints") if isinstance(e, dict)
             for a in e.get("addresses") or []]
    if not addrs:
        return "<unset>"
    return ",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")


ENDPOINTSLICE_COLUMNS = (
    name_col(),
    Column("AddressType", lambda o, n: o.get("addressType") or "",
           description="Type of address carried by this EndpointSlice."),
    Column("Ports", _slice_ports, description="Ports allowed by the EndpointSlice."),
    Column("Endpoints", _slice_endpoints, description="Endpoints of the EndpointSlice."),
    age_col(),
)
