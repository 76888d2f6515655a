"""`kubectl get` columns of ConfigMaps, Secrets, ServiceAccounts, PodDisruptionBudgets and
Ingresses, as upstream's printers compute them.

Why apart from :mod:`.columns`: these kinds came with the application manifest support
(:mod:`.app_kinds`) and share nothing with the workload columns but the name and age cells.
"""

from __future__ import annotations

from typing import Any

from pyhpa.cluster.apiserver.columns import Column, TableClock, age_cell, name_cell

Obj = dict[str, Any]


def _dict(o: Any, key: str) -> Obj:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


def _list(o: Any, key: str) -> list[Any]:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, list) else []


def _age() -> Column:
    return Column("Age", age_cell, description="CreationTimestamp is a timestamp representing "
                                               "the server time when this object was created.")


def _name() -> Column:
    return Column("Name", name_cell, format="name", description="Name must be unique within a "
                                                                "namespace.")


CONFIGMAP_COLUMNS = (
    _name(),
    Column("Data", lambda o, n: len(_dict(o, "data")) + len(_dict(o, "binaryData")),
           type="integer", description="Number of keys in data and binaryData."),
    _age(),
)

SECRET_COLUMNS = (
    _name(),
    Column("Type", lambda o, n: o.get("type") or "", description="The type of the secret."),
    Column("Data", lambda o, n: len(_dict(o, "data")), type="integer",
           description="Number of keys in data."),
    _age(),
)

SERVICEACCOUNT_COLUMNS = (
    _name(),
    Column("Secrets", lambda o, n: len(_list(o, "secrets")), type="integer",
           description="Number of secrets of the account."),
    _age(),
)


def _int_or_percent(value: Any) -> str:
    return "N/A" if value is None else str(value)


PDB_COLUMNS = (
    _name(),
    Column("Min Available", lambda o, n: _int_or_percent(_dict(o, "spec").get("minAvailable")),
           description="The minimum number or percentage of available pods this budget "
                       "requires."),
    Column("Max Unavailable",
           lambda o, n: _int_or_percent(_dict(o, "spec").get("maxUnavailable")),
           description="The maximum number or percentage of unavailable pods this budget "
                       "requires."),
    Column("Allowed Disruptions",
           lambda o, n: _dict(o, "status").get("disruptionsAllowed") or 0, type="integer",
           description="Calculated number of pods that may be disrupted at this time."),
    _age(),
)


def _hosts(o: Obj, now: TableClock) -> str:
    """Up to three hosts of the rules, then "+ N more..."; ``*`` when no rule names one."""
    rules = _list(_dict(o, "spec"), "rules")
    shown: list[str] = []
    more = False
    for rule in rules:
        if len(shown) == 3:
            more = True  # a rule after the third shown host: the rest are counted
        host = rule.get("host") if isinstance(rule, dict) else None
        if not more and host:
            shown.append(host)
    if not shown:
        return "*"
    return ",".join(shown) + (f" + {len(rules) - 3} more..." if more else "")


def _address(o: Obj, now: TableClock) -> str:
    ingress = _list(_dict(_dict(o, "status"), "loadBalancer"), "ingress")
    addrs = [i.get("ip") or i.get("hostname") or "" for i in ingress if isinstance(i, dict)]
    text = ",".join(a for a in addrs if a)
    return text[:16] + "..." if len(text) > 16 else text


def _ports(o: Obj, now: TableClock) -> str:
    return "80, 443" if _list(_dict(o, "spec"), "tls") else "80"


INGRESS_COLUMNS = (
    _name(),
    Column("Class", lambda o, n: _dict(o, "spec").get("ingressClassName") or "<none>",
           description="The name of the IngressClass resource."),
    Column("Hosts", _hosts, description="Hosts that incoming requests are matched against."),
    Column("Address", _address, description="Address is a list containing ingress points for "
                                            "the load-balancer."),
    Column("Ports", _ports, description="Ports of TLS configurations that open."),
    _age(),
)
