"""Which write strategy serves each kind, and one server's instances of them.

Why apart from :mod:`.strategies`: the generic strategy is the base the kind-specific ones
(:mod:`.hpa_strategy`, :mod:`.services`, :mod:`.crd`, :mod:`.external_metric`) build on, so the
choice among them sits above all of them.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

from pyhpa.cluster.apiserver import external_metric
from pyhpa.cluster.apiserver.app_kinds import (ConfigMapStrategy, IngressStrategy, PodDisruptionBudgetStrategy,
                                              SecretStrategy)
from pyhpa.cluster.apiserver.batch_strategy import CronJobStrategy, JobStrategy
from pyhpa.cluster.apiserver.daemonset_strategy import DaemonSetStrategy
from pyhpa.cluster.apiserver.crd import CRDStrategy, CustomResourceStrategy
from pyhpa.cluster.apiserver.history_strategy import ControllerRevisionStrategy
from pyhpa.cluster.apiserver.hpa_strategy import HPAStrategy
from pyhpa.cluster.apiserver.policy_strategy import (LimitRangeStrategy, NetworkPolicyStrategy, PersistentVolumeClaimStrategy,
                                                    PersistentVolumeStrategy, PriorityClassStrategy,
                                                    ResourceQuotaStrategy, StorageClassStrategy)
from pyhpa.cluster.apiserver.rbac_strategy import BindingStrategy, RoleStrategy
from pyhpa.cluster.apiserver.resources import Resource
from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.api.schemas.build import ref
from pyhpa.api.schemas.conform import METADATA_ONLY, Conformed, conform
from pyhpa.cluster.apiserver.services import ServiceStrategy
from pyhpa.cluster.apiserver.storage import Store
from pyhpa.cluster.apiserver.strategies import EventStrategy, Strategy

Obj = dict[str, Any]


class ExternalMetricStrategy(Strategy):
    """The generic rules plus :func:`.external_metric.validate`."""

    def conform(self, obj: Obj, version: str, *, drop: bool) -> tuple[Obj, Conformed]:
        """Upstream's metadata types; the spec's values are named by
        :func:`.external_metric.validate` (a 422 naming the field, as a CRD's schema would)."""
        obj, found = super().conform(obj, version, drop=drop)
        if found.error is None or self.schemas is None:
            return obj, found
        obj, found = conform(obj, METADATA_ONLY, self.schemas.definitions, drop=drop)
        if found.error is not None:
            return obj, found
        name = self.schemas.of_kind(self.res.group, version, self.res.kind)
        return conform(obj, ref(name) if name else METADATA_ONLY, self.schemas.definitions,
                       drop=drop, types=False)

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        return super().validate(obj, old) + external_metric.validate(obj)


# Resource.strategy -> the strategy class of the kinds that name it (None or another name: the
# generic Strategy). The batch kinds' defaults differ by emulated release: they get the profile.
STRATEGIES: Mapping[str, type[Strategy]] = MappingProxyType({
    "event": EventStrategy, "crd": CRDStrategy, "custom": CustomResourceStrategy,
    "service": ServiceStrategy, "externalmetric": ExternalMetricStrategy, "daemonset": DaemonSetStrategy,
    "configmap": ConfigMapStrategy, "secret": SecretStrategy, "pdb": PodDisruptionBudgetStrategy,
    "ingress": IngressStrategy,
    "rbac-role": RoleStrategy, "rbac-binding": BindingStrategy,
    "job": JobStrategy, "cronjob": CronJobStrategy,
    "networkpolicy": NetworkPolicyStrategy, "priorityclass": PriorityClassStrategy,
    "limitrange": LimitRangeStrategy, "resourcequota": ResourceQuotaStrategy,
    "storageclass": StorageClassStrategy, "pv": PersistentVolumeStrategy, "pvc": PersistentVolumeClaimStrategy,
    "controllerrevision": ControllerRevisionStrategy,
})
_WITH_PROFILE = frozenset({"job", "cronjob"})


def strategy_for(res: Resource, profile: Any = None) -> Strategy:
    """A new strategy for ``res``, chosen by its ``strategy`` name (None: the generic one)."""
    if res.strategy == "hpa":
        return HPAStrategy(res, profile)
    strategy = STRATEGIES.get(res.strategy or "", Strategy)(res)
    if res.strategy in _WITH_PROFILE:
        strategy.profile = profile  # type: ignore[attr-defined]
    return strategy


class KindStrategies:
    """The strategy of every served kind, built on first use.

    Kept by resource name with the Resource it was built for: a kind a CRD redefines is a new
    Resource under the same name, and gets a new strategy.
    """

    def __init__(self, store: Store, schemas: BuiltinSchemas, profile: Any = None) -> None:
        self.store = store
        self.schemas = schemas
        self.profile = profile
        self._built: dict[tuple[str, str, tuple[str, ...]], tuple[Resource, Strategy]] = {}

    def get(self, res: Resource) -> Strategy:
        name = (res.group, res.resource, res.versions)  # a CRD's versions are one Resource each
        built = self._built.get(name)
        if built is None or built[0] != res or built[0].extra != res.extra:  # a CRD's schema is in extra
            strategy = strategy_for(res, self.profile)
            strategy.store = self.store
            strategy.schemas = self.schemas
            built = self._built[name] = (res, strategy)
        return built[1]

    def clear(self) -> None:
        """Forget every strategy (after kinds came or went)."""
        self._built = {}
