"""The ClusterRoles and ClusterRoleBindings every cluster starts with (a subset of upstream's
plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go).

Why: application manifests bind the user-facing roles (``view``, ``edit``, ``admin``) rather than
spelling rules, and every authenticated user may read discovery and its own identity. The roles
are made once, when absent, and then belong to the user (edits are kept across restarts).
``admin``, ``edit`` and ``view`` carry their rules directly; ClusterRoles labelled
``rbac.authorization.k8s.io/aggregate-to-<role>`` are added to them when rules are evaluated
(:mod:`.rbac`).
"""

from __future__ import annotations

from types import MappingProxyType

from typing import Any

from pyhpa.cluster.apiserver import managed_fields as managed
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.storage import AlreadyExists

Obj = dict[str, Any]
GROUP = "rbac.authorization.k8s.io"
_READ = ("get", "list", "watch")
_WRITE = ("create", "delete", "deletecollection", "patch", "update")

# (api group, resources) the user-facing roles cover
_VIEW = (
    ("", ["configmaps", "endpoints", "persistentvolumeclaims", "persistentvolumeclaims/status",
          "pods", "replicationcontrollers", "replicationcontrollers/scale", "serviceaccounts",
          "services", "services/status", "bindings", "events", "limitranges",
          "namespaces/status", "pods/log", "pods/status", "replicationcontrollers/status",
          "resourcequotas", "resourcequotas/status", "namespaces"]),
    ("apps", ["controllerrevisions", "daemonsets", "daemonsets/status", "deployments",
              "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
              "replicasets/status", "statefulsets", "statefulsets/scale", "statefulsets/status"]),
    ("autoscaling", ["horizontalpodautoscalers", "horizontalpodautoscalers/status"]),
    ("batch", ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
    ("policy", ["poddisruptionbudgets", "poddisruptionbudgets/status"]),
    ("networking.k8s.io", ["ingresses", "ingresses/status", "networkpolicies"]),
    ("discovery.k8s.io", ["endpointslices"]),
)
_EDIT = (
    ("", ["pods", "pods/attach", "pods/exec", "pods/portforward", "pods/proxy", "configmaps",
          "endpoints", "persistentvolumeclaims", "replicationcontrollers",
          "replicationcontrollers/scale", "secrets", "serviceaccounts", "services",
          "services/proxy"]),
    ("apps", ["daemonsets", "deployments", "deployments/rollback", "deployments/scale",
              "replicasets", "replicasets/scale", "statefulsets", "statefulsets/scale"]),
    ("autoscaling", ["horizontalpodautoscalers"]),
    ("batch", ["cronjobs", "jobs"]),
    ("policy", ["poddisruptionbudgets"]),
    ("networking.k8s.io", ["ingresses", "networkpolicies"]),
    ("discovery.k8s.io", ["endpointslices"]),
)


def _rules(table: tuple[tuple[str, list[str]], ...], verbs: tuple[str, ...]) -> list[Obj]:
    return [{"apiGroups": [g], "resources": list(rs), "verbs": list(verbs)} for g, rs in table]


def _view() -> list[Obj]:
    return _rules(_VIEW, _READ)


def _edit() -> list[Obj]:
    return _view() + _rules(_EDIT, _WRITE) + [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": list(_READ)},
        {"apiGroups": [""], "resources": ["pods/eviction", "serviceaccounts/token"],
         "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["serviceaccounts"], "verbs": ["impersonate"]}]


def _admin() -> list[Obj]:
    return _edit() + [
        {"apiGroups": ["authorization.k8s.io"], "resources": ["localsubjectaccessreviews"],
         "verbs": ["create"]},
        {"apiGroups": [GROUP], "resources": ["rolebindings", "roles"],
         "verbs": [*_READ, *_WRITE]}]


_DISCOVERY_URLS = ("/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi",
                   "/openapi/*", "/readyz", "/version", "/version/")


def cluster_roles() -> dict[str, Obj]:
    """name -> (rules, aggregation label or None)."""
    return {
        "cluster-admin": {"rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                                    {"nonResourceURLs": ["*"], "verbs": ["*"]}]},
        "admin": {"rules": _admin(), "aggregate": "admin"},
        "edit": {"rules": _edit(), "aggregate": "edit"},
        "view": {"rules": _view(), "aggregate": "view"},
        "system:discovery": {"rules": [{"nonResourceURLs": _DISCOVERY_URLS, "verbs": ["get"]}]},
        "system:public-info-viewer": {"rules": [{"nonResourceURLs": [
            "/healthz", "/livez", "/readyz", "/version", "/version/"], "verbs": ["get"]}]},
        "system:basic-user": {"rules": [
            {"apiGroups": ["authorization.k8s.io"],
             "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
             "verbs": ["create"]},
            {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
             "verbs": ["create"]}]},
    }


_BINDINGS = MappingProxyType({
    "cluster-admin": ["system:masters"],
    "system:discovery": ["system:authenticated"],
    "system:basic-user": ["system:authenticated"],
    "system:public-info-viewer": ["system:authenticated", "system:unauthenticated"],
})


def _meta(name: str) -> Obj:
    return {"name": name, "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
            "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}}


def _ensure(store: Any, key: str, obj: Obj) -> None:
    if store.try_get(key, "", obj["metadata"]["name"]) is not None:
        return
    managed.record_create(obj, managed.KUBE_APISERVER, f"{GROUP}/v1")
    try:
        store.create(key, obj)
    except AlreadyExists:
        pass


def ensure_bootstrap_policy(store: Any) -> None:
    """Create the default ClusterRoles and ClusterRoleBindings that are missing."""
    for name, spec in cluster_roles().items():
        role: Obj = {"apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "metadata": _meta(name),
                     "rules": spec["rules"]}
        if spec.get("aggregate"):
            label = f"{GROUP}/aggregate-to-{spec['aggregate']}"
            role["aggregationRule"] = {"clusterRoleSelectors": [
                {"matchLabels": {label: "true"}}]}
        _ensure(store, R.CLUSTER_ROLES.key, role)
    for name, groups in _BINDINGS.items():
        _ensure(store, R.CLUSTER_ROLE_BINDINGS.key, {
            "apiVersion": f"{GROUP}/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
            "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": GROUP, "kind": "Group", "name": g} for g in groups]})
