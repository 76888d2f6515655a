"""The kinds the embedded cluster serves: one table row per resource.

Why one table: discovery (aggregated and legacy), routing, OpenAPI operations, Table output, the
scale subresource and the store key all derive from the same facts, so they cannot drift apart.

Each :class:`Resource` names its group, served versions (**preferred first**; the first is also
the storage version, so its ``key`` - e.g. ``"autoscaling/v2/horizontalpodautoscalers"`` - is
what :class:`~pyhpa.cluster.apiserver.storage.Store` files it under), kind, scope, short names,
categories, subresources, verbs, ``kubectl get`` columns and, for scalable kinds, where the scale
subresource finds replicas and the selector. Components use the module constants (``PODS.key``,
``DEPLOYMENTS.key``...) rather than spelling keys by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pyhpa.cluster.apiserver import app_columns as app
from pyhpa.cluster.apiserver import columns as t
from pyhpa.cluster.apiserver import kind_columns as k
from pyhpa.cluster.apiserver import policy_columns as pc
from pyhpa.cluster.apiserver.columns import Column
from pyhpa.cluster.apiserver.external_metric import EXTERNAL_METRIC_COLUMNS

_KUBE_VERSION = re.compile(r"^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$")
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
SUB_VERBS = ("get", "patch", "update")


@dataclass(frozen=True)
class Subresource:
    name: str  # "status" | "scale" | "eviction" (pods)
    group: str = ""  # response kind's group/version/kind (scale speaks autoscaling/v1 Scale)
    version: str = ""
    kind: str = ""
    verbs: tuple[str, ...] = SUB_VERBS


@dataclass(frozen=True)
class ScalePaths:
    """Where the scale subresource reads and writes, as CRD ``subresources.scale`` paths.

    ``label_selector`` names a string field; ``selector_from_spec`` instead renders the
    ``spec.selector`` LabelSelector (apps kinds) or map (ReplicationController).
    """

    spec_replicas: str = ".spec.replicas"
    status_replicas: str = ".status.replicas"
    label_selector: str | None = None
    selector_from_spec: bool = True


@dataclass(frozen=True)
class Resource:
    group: str
    versions: tuple[str, ...]
    resource: str
    kind: str
    namespaced: bool = True
    singular: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    subresources: tuple[Subresource, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    columns: tuple[Column, ...] = ()
    scale: ScalePaths | None = None
    # Name of the write strategy (:mod:`.kind_strategies`: "hpa", "event"...); None = generic.
    strategy: str | None = None
    # Field selector labels beyond metadata.name (and metadata.namespace when namespaced).
    field_labels: tuple[str, ...] = ()
    # Custom resources (.crd): one Resource per served version, all stored under
    # ``store_key`` in the CRD's ``storage`` version.
    storage: str = ""
    store_key: str = ""
    description: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def storage_version(self) -> str:
        return self.storage or self.versions[0]

    @property
    def key(self) -> str:
        """The store key: ``<group>/<storage version>/<resource>`` (``v1/pods`` for core)."""
        return self.store_key or f"{self.api_version(self.storage_version)}/{self.resource}"

    @property
    def group_resource(self) -> str:
        """``resource.group`` as used in error messages (``deployments.apps``, ``pods``)."""
        return f"{self.resource}.{self.group}" if self.group else self.resource

    @property
    def list_kind(self) -> str:
        return self.extra.get("list_kind") or self.kind + "List"

    @property
    def singular_name(self) -> str:
        return self.singular or self.kind.lower()

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}" if self.group else version

    def subresource(self, name: str) -> Subresource | None:
        for s in self.subresources:
            if s.name == name:
                return s
        return None

    def has_status(self) -> bool:
        return self.subresource("status") is not None

    def selectable_fields(self) -> frozenset[str]:
        """The field labels a fieldSelector may use (others are a 400, as upstream)."""
        base = ("metadata.name", "metadata.namespace") if self.namespaced else ("metadata.name",)
        return frozenset(base + self.field_labels)


def _status() -> Subresource:
    return Subresource("status")


def _scale() -> Subresource:
    return Subresource("scale", "autoscaling", "v1", "Scale")


_EVENT_FIELDS = ("reason", "reportingComponent", "source", "type")
_INVOLVED = ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")

NAMESPACES = Resource(
    "", ("v1",), "namespaces", "Namespace", namespaced=False, short_names=("ns",),
    subresources=(_status(),), columns=t.NAMESPACE_COLUMNS, field_labels=("status.phase",),
    verbs=("create", "delete", "get", "list", "patch", "update", "watch"))
NODES = Resource(
    "", ("v1",), "nodes", "Node", namespaced=False, short_names=("no",),
    subresources=(_status(),), columns=t.NODE_COLUMNS, field_labels=("spec.unschedulable",))
PODS = Resource(
    "", ("v1",), "pods", "Pod", short_names=("po",), categories=("all",),
    subresources=(_status(), Subresource("eviction", "policy", "v1", "Eviction", ("create",))),
    columns=t.POD_COLUMNS,
    field_labels=("spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                  "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP",
                  "status.nominatedNodeName"))
EVENTS = Resource(
    "", ("v1",), "events", "Event", short_names=("ev",), columns=t.EVENT_COLUMNS,
    strategy="event", field_labels=_EVENT_FIELDS + tuple(f"involvedObject.{f}" for f in _INVOLVED))
# events.k8s.io/v1 is another view of the same stored core Events (converted per request).
EVENTS_V1 = Resource(
    "events.k8s.io", ("v1",), "events", "Event", short_names=("ev",),
    columns=t.EVENT_COLUMNS, strategy="event", extra={"storage": EVENTS},
    field_labels=("reason", "reportingController", "type")
    + tuple(f"regarding.{f}" for f in _INVOLVED))
REPLICATION_CONTROLLERS = Resource(
    "", ("v1",), "replicationcontrollers", "ReplicationController", short_names=("rc",),
    categories=("all",), subresources=(_scale(), _status()), columns=t.RC_COLUMNS,
    scale=ScalePaths(), field_labels=("status.replicas",))
DEPLOYMENTS = Resource(
    "apps", ("v1",), "deployments", "Deployment", short_names=("deploy",), categories=("all",),
    subresources=(_scale(), _status()), columns=t.DEPLOYMENT_COLUMNS, scale=ScalePaths())
REPLICA_SETS = Resource(
    "apps", ("v1",), "replicasets", "ReplicaSet", short_names=("rs",), categories=("all",),
    subresources=(_scale(), _status()), columns=t.REPLICASET_COLUMNS, scale=ScalePaths(),
    field_labels=("status.replicas",))
STATEFUL_SETS = Resource(
    "apps", ("v1",), "statefulsets", "StatefulSet", short_names=("sts",), categories=("all",),
    subresources=(_scale(), _status()), columns=t.STATEFULSET_COLUMNS, scale=ScalePaths())
DAEMON_SETS = Resource(
    "apps", ("v1",), "daemonsets", "DaemonSet", short_names=("ds",), categories=("all",),
    subresources=(_status(),), columns=k.DAEMONSET_COLUMNS, strategy="daemonset")
# the template snapshots of DaemonSets and StatefulSets (controllers/history.py)
CONTROLLER_REVISIONS = Resource(
    "apps", ("v1",), "controllerrevisions", "ControllerRevision",
    columns=k.CONTROLLERREVISION_COLUMNS, strategy="controllerrevision")
HPAS = Resource(
    "autoscaling", ("v2", "v1"), "horizontalpodautoscalers", "HorizontalPodAutoscaler",
    short_names=("hpa",), categories=("all",), subresources=(_status(),),
    columns=t.HPA_COLUMNS, strategy="hpa")
LEASES = Resource(
    "coordination.k8s.io", ("v1",), "leases", "Lease", columns=t.LEASE_COLUMNS)
# Our own CRD-style kind: anything with a scale subresource can be autoscaled.
SCALABLES = Resource(
    "demo.pyhpa.io", ("v1",), "scalables", "Scalable", short_names=("scl",),
    categories=("all",), subresources=(_scale(), _status()), columns=t.SCALABLE_COLUMNS,
    scale=ScalePaths(".spec.replicas", ".status.replicas", ".status.selector",
                     selector_from_spec=False),
    description="A custom scalable workload; its scale subresource follows CRD "
                "subresources.scale paths (.spec.replicas, .status.replicas, .status.selector).")

SERVICES = Resource(
    "", ("v1",), "services", "Service", short_names=("svc",), categories=("all",),
    subresources=(_status(),), columns=t.SERVICE_COLUMNS, strategy="service",
    field_labels=("spec.clusterIP", "spec.type"))
ENDPOINTS = Resource(
    "", ("v1",), "endpoints", "Endpoints", singular="endpoints", short_names=("ep",),
    columns=t.ENDPOINTS_COLUMNS)

# kept from each Service's pods by the simulation (controllers/endpoints.py)
ENDPOINT_SLICES = Resource(
    "discovery.k8s.io", ("v1",), "endpointslices", "EndpointSlice",
    columns=k.ENDPOINTSLICE_COLUMNS)

# What a typical application manifest carries beside its workload (.app_kinds).
CONFIG_MAPS = Resource(
    "", ("v1",), "configmaps", "ConfigMap", short_names=("cm",),
    columns=app.CONFIGMAP_COLUMNS, strategy="configmap")
SECRETS = Resource(
    "", ("v1",), "secrets", "Secret", columns=app.SECRET_COLUMNS, strategy="secret",
    field_labels=("type",))
SERVICE_ACCOUNTS = Resource(
    "", ("v1",), "serviceaccounts", "ServiceAccount", short_names=("sa",),
    columns=app.SERVICEACCOUNT_COLUMNS)
PDBS = Resource(
    "policy", ("v1",), "poddisruptionbudgets", "PodDisruptionBudget", short_names=("pdb",),
    subresources=(_status(),), columns=app.PDB_COLUMNS, strategy="pdb")
INGRESSES = Resource(
    "networking.k8s.io", ("v1",), "ingresses", "Ingress", short_names=("ing",),
    subresources=(_status(),), columns=app.INGRESS_COLUMNS, strategy="ingress")

# RBAC: stored, and the rules access reviews and impersonated requests answer from (.rbac).
_RBAC = "rbac.authorization.k8s.io"
ROLES = Resource(_RBAC, ("v1",), "roles", "Role", columns=k.ROLE_COLUMNS, strategy="rbac-role")
CLUSTER_ROLES = Resource(_RBAC, ("v1",), "clusterroles", "ClusterRole", namespaced=False,
                         columns=k.ROLE_COLUMNS, strategy="rbac-role")
ROLE_BINDINGS = Resource(_RBAC, ("v1",), "rolebindings", "RoleBinding",
                         columns=k.BINDING_COLUMNS, strategy="rbac-binding")
CLUSTER_ROLE_BINDINGS = Resource(_RBAC, ("v1",), "clusterrolebindings", "ClusterRoleBinding",
                                 namespaced=False, columns=k.BINDING_COLUMNS,
                                 strategy="rbac-binding")

# batch: run to completion by the simulation (controllers/job.py, cronjob.py).
JOBS = Resource("batch", ("v1",), "jobs", "Job", categories=("all",),
                subresources=(_status(),), columns=k.JOB_COLUMNS, strategy="job",
                field_labels=("status.successful",))
CRONJOBS = Resource("batch", ("v1",), "cronjobs", "CronJob", short_names=("cj",),
                    categories=("all",), subresources=(_status(),), columns=k.CRONJOB_COLUMNS,
                    strategy="cronjob")

# Policy kinds: stored and checked, acting at admission (.admission) or through the volume
# binder and the quota controller (controllers/volume.py, resourcequota.py).
NETWORK_POLICIES = Resource("networking.k8s.io", ("v1",), "networkpolicies", "NetworkPolicy",
                            short_names=("netpol",), columns=pc.NETWORKPOLICY_COLUMNS,
                            strategy="networkpolicy")
INGRESS_CLASSES = Resource("networking.k8s.io", ("v1",), "ingressclasses", "IngressClass",
                           namespaced=False, columns=pc.INGRESSCLASS_COLUMNS)
PRIORITY_CLASSES = Resource("scheduling.k8s.io", ("v1",), "priorityclasses", "PriorityClass",
                            namespaced=False, short_names=("pc",),
                            columns=pc.PRIORITYCLASS_COLUMNS, strategy="priorityclass")
LIMIT_RANGES = Resource("", ("v1",), "limitranges", "LimitRange", short_names=("limits",),
                        columns=pc.LIMITRANGE_COLUMNS, strategy="limitrange")
RESOURCE_QUOTAS = Resource("", ("v1",), "resourcequotas", "ResourceQuota",
                           short_names=("quota",), subresources=(_status(),),
                           columns=pc.RESOURCEQUOTA_COLUMNS, strategy="resourcequota")
STORAGE_CLASSES = Resource("storage.k8s.io", ("v1",), "storageclasses", "StorageClass",
                           namespaced=False, short_names=("sc",),
                           columns=pc.STORAGECLASS_COLUMNS, strategy="storageclass")
PERSISTENT_VOLUMES = Resource("", ("v1",), "persistentvolumes", "PersistentVolume",
                              namespaced=False, short_names=("pv",), subresources=(_status(),),
                              columns=pc.PV_COLUMNS, strategy="pv")
PERSISTENT_VOLUME_CLAIMS = Resource("", ("v1",), "persistentvolumeclaims",
                                    "PersistentVolumeClaim", short_names=("pvc",),
                                    subresources=(_status(),), columns=pc.PVC_COLUMNS,
                                    strategy="pvc")

# Our own kind: external metric series users set with kubectl (.external_metric).
EXTERNAL_METRIC_OBJECTS = Resource(
    "pyhpa.io", ("v1alpha1",), "externalmetrics", "ExternalMetric", short_names=("em",),
    columns=EXTERNAL_METRIC_COLUMNS, strategy="externalmetric",
    description="An external metric series (spec.name, spec.labels, spec.value) served by "
                "external.metrics.k8s.io/v1beta1.")

# CustomResourceDefinitions: the kinds they define are added while serving (.crd).
CRDS = Resource(
    "apiextensions.k8s.io", ("v1",), "customresourcedefinitions", "CustomResourceDefinition",
    namespaced=False, short_names=("crd", "crds"), categories=("api-extensions",),
    subresources=(_status(),), columns=t.CRD_COLUMNS, strategy="crd")

RESOURCES: tuple[Resource, ...] = (
    NAMESPACES, NODES, PODS, EVENTS, REPLICATION_CONTROLLERS, SERVICES, ENDPOINTS,
    CONFIG_MAPS, SECRETS, SERVICE_ACCOUNTS,
    DEPLOYMENTS, REPLICA_SETS, STATEFUL_SETS, DAEMON_SETS, HPAS, LEASES, PDBS, INGRESSES,
    EVENTS_V1, SCALABLES,
    EXTERNAL_METRIC_OBJECTS, CRDS,
    CLUSTER_ROLE_BINDINGS, CLUSTER_ROLES, ROLE_BINDINGS, ROLES, JOBS, CRONJOBS,
    NETWORK_POLICIES, INGRESS_CLASSES, PRIORITY_CLASSES, LIMIT_RANGES, RESOURCE_QUOTAS,
    STORAGE_CLASSES, PERSISTENT_VOLUMES, PERSISTENT_VOLUME_CLAIMS, ENDPOINT_SLICES,
    CONTROLLER_REVISIONS,
)


def storage_of(res: Resource) -> Resource:
    """The resource whose key stores ``res`` (events.k8s.io Events live with core Events)."""
    return res.extra.get("storage", res)


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Sort key putting Kubernetes-like versions first: GA, then beta, then alpha, higher
    numbers first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1); others after, alphabetically."""
    m = _KUBE_VERSION.match(version)
    if m is None:
        return (3, 0, 0, version)
    major, stage, minor = int(m.group(1)), m.group(2) or "", int(m.group(3) or 0)
    rank = {"": 0, "beta": 1, "alpha": 2}[stage]
    return (rank, -major, -minor, version)


class Registry:
    """Lookup of served resources by (group, version, resource) and by kind.

    Resources come and go while serving (CustomResourceDefinitions), so every change builds new
    lists and maps and swaps them in: readers on other threads never see one half-updated.
    """

    def __init__(self, resources: tuple[Resource, ...] = RESOURCES) -> None:
        self.resources: list[Resource] = []
        self._by_gvr: dict[tuple[str, str, str], Resource] = {}
        self._by_kind: dict[tuple[str, str], Resource] = {}
        self._replace(list(resources))

    def _replace(self, resources: list[Resource]) -> None:
        by_gvr: dict[tuple[str, str, str], Resource] = {}
        by_kind: dict[tuple[str, str], Resource] = {}
        for r in resources:
            for v in r.versions:
                by_gvr[(r.group, v, r.resource)] = r
            by_kind.setdefault((r.group, r.kind), r)
        self.resources, self._by_gvr, self._by_kind = resources, by_gvr, by_kind

    def add(self, r: Resource) -> None:
        """Register another kind (a provider's, or a CRD-style workload)."""
        self._replace([*self.resources, r])

    def swap(self, old: list[Resource], new: list[Resource]) -> None:
        """Replace the resources ``old`` (matched by value) with ``new``, in one step."""
        self._replace([r for r in self.resources if r not in old] + list(new))

    def lookup(self, group: str, version: str, resource: str) -> Resource | None:
        return self._by_gvr.get((group, version, resource))

    def by_kind(self, group: str, kind: str) -> Resource | None:
        return self._by_kind.get((group, kind))

    def by_api_version_kind(self, api_version: str, kind: str) -> Resource | None:
        group = api_version.rpartition("/")[0] if "/" in api_version else ""
        return self.by_kind(group, kind)

    def groups(self) -> list[tuple[str, list[str]]]:
        """(group, versions preferred first) in registration order, core group "" first."""
        order: list[str] = []
        versions: dict[str, list[str]] = {}
        for r in self.resources:
            if r.group not in versions:
                order.append(r.group)
                versions[r.group] = []
            for v in r.versions:
                if v not in versions[r.group]:
                    versions[r.group].append(v)
        order.sort(key=lambda g: g != "")
        return [(g, sorted(versions[g], key=version_priority)) for g in order]

    def in_group_version(self, group: str, version: str) -> list[Resource]:
        return [r for r in self.resources if r.group == group and version in r.versions]
