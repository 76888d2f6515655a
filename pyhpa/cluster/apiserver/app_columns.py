"""`kubectl get` columns of ConfigMaps, Secrets, ServiceAccounts, PodDisruptionBudgets and
Ingresses, as upstream's printers compute them.

Why apart from :mod:`.columns`: these kinds came with the application manifest support
(:mod:`.app_kinds`) and share nothing with the workload columns but the name and age cells.
"""

from __future__ import annotations

from typing import Any

from pyhpa.cluster.apiserver.columns import Column, TableClock, age_col, dict_field, list_field, name_col

Obj = dict[str, Any]


CONFIGMAP_COLUMNS = (
    name_col(),
    Column("Data", lambda o, n: len(dict_field(o, "data")) + len(dict_field(o, "binaryData")),
           type="integer", description="Number of keys in data and binaryData."),
    age_col(),
)

SECRET_COLUMNS = (
    name_col(),
    Column("Type", lambda o, n: o.get("type") or "", description="The type of the secret."),
    Column("Data", lambda o, n: len(dict_field(o, "data")), type="integer",
           description="Number of keys in data."),
    age_col(),
)

SERVICEACCOUNT_COLUMNS = (
    name_col(),
    Column("Secrets", lambda o, n: len(list_field(o, "secrets")), type="integer",
           description="Number of secrets of the account."),
    age_col(),
)


def _int_or_percent(value: Any) -> str:
    return "N/A" if value is None else str(value)


PDB_COLUMNS = (
    name_col(),
    Column("Min Available", lambda o, n: _int_or_percent(dict_field(o, "spec").get("minAvailable")),
           description="The minimum number or percentage of available pods this budget "
                       "requires."),
    Column("Max Unavailable",
           lambda o, n: _int_or_percent(dict_field(o, "spec").get("maxUnavailable")),
           description="The maximum number or percentage of unavailable pods this budget "
                       "requires."),
    Column("Allowed Disruptions",
           lambda o, n: dict_field(o, "status").get("disruptionsAllowed") or 0, type="integer",
           description="Calculated number of pods that may be disrupted at this time."),
    age_col(),
)


def _hosts(o: Obj, now: TableClock) -> str:
    """Up to three hosts of the rules, then "+ N more..."; ``*`` when no rule names one."""
    rules = list_field(dict_field(o, "spec"), "rules")
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
    ingress = list_field(dict_field(dict_field(o, "status"), "loadBalancer"), "ingress")
    addrs = [i.get("ip") or i.get("hostname") or "" for i in ingress if isinstance(i, dict)]
    text = ",".join(a for a in addrs if a)
    return text[:16] + "..." if len(text) > 16 else text


def _ports(o: Obj, now: TableClock) -> str:
    return "80, 443" if list_field(dict_field(o, "spec"), "tls") else "80"


INGRESS_COLUMNS = (
    name_col(),
    Column("Class", lambda o, n: dict_field(o, "spec").get("ingressClassName") or "<none>",
           description="The name of the IngressClass resource."),
    Column("Hosts", _hosts, description="Hosts that incoming requests are matched against."),
    Column("Address", _address, description="Address is a list containing ingress points for "
                                            "the load-balancer."),
    Column("Ports", _ports, description="Ports of TLS configurations that open."),
    age_col(),
)
