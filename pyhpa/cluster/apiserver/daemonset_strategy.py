"""Write rules of DaemonSets: upstream's defaults (pkg/apis/apps/v1/defaults.go
``SetDefaults_DaemonSet``) and the checks of ``ValidateDaemonSet`` the simulation relies on.

Why its own strategy: a DaemonSet has a pod template but no replicas and no scale subresource,
so the workload rules of Deployments and ReplicaSets do not fit it.
"""

from __future__ import annotations

from typing import Any

from pyhpa.api.selectors import SelectorError, selector_from_label_selector
from pyhpa.api.field_errors import cause
from pyhpa.cluster.apiserver.strategies import Strategy
from pyhpa.cluster.apiserver.workload_defaults import default_pod_spec
from pyhpa.api.workload_validation import (go_string_map, validate_label_selector,
                                                         validate_pod_spec)

Obj = dict[str, Any]


def _d(o: Any, key: str) -> Obj:
    v = o.get(key) if isinstance(o, dict) else None
    return v if isinstance(v, dict) else {}


class DaemonSetStrategy(Strategy):
    def _default(self, obj: Obj) -> None:
        spec = obj.get("spec")
        if not isinstance(spec, dict):
            return
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            strategy.setdefault("type", "RollingUpdate")
            if strategy["type"] == "RollingUpdate":
                ru = strategy.setdefault("rollingUpdate", {})
                if isinstance(ru, dict):
                    ru.setdefault("maxUnavailable", 1)
                    ru.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        template = spec.get("template")
        if isinstance(template, dict):
            default_pod_spec(template.get("spec"))

    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        causes = super().validate(obj, old)
        spec = _d(obj, "spec")
        selector = _d(spec, "selector")
        template = _d(spec, "template")
        labels = _d(template, "metadata").get("labels") or {}
        if not selector:
            causes.append(cause("spec.selector", "Required"))
        else:
            causes += validate_label_selector(selector, "spec.selector")
            try:
                matches = selector_from_label_selector(selector).matches(labels)
            except SelectorError:
                matches = True  # reported above
            if not matches:
                causes.append(cause("spec.template.metadata.labels", "Invalid",
                                    shown=go_string_map(labels),
                                    detail="`selector` does not match template `labels`"))
        policy = _d(template, "spec").get("restartPolicy")
        if policy != "Always":
            causes.append({"reason": "FieldValueNotSupported",
                           "field": "spec.template.spec.restartPolicy",
                           "message": f'Unsupported value: "{policy or ""}": supported values: '
                                      '"Always"'})
        causes += validate_pod_spec(_d(template, "spec"), "spec.template.spec")
        kind = _d(spec, "updateStrategy").get("type")
        if kind not in ("RollingUpdate", "OnDelete"):
            causes.append({"reason": "FieldValueNotSupported", "field": "spec.updateStrategy.type",
                           "message": f'Unsupported value: "{kind or ""}": supported values: '
                                      '"OnDelete", "RollingUpdate"'})
        if old is not None and _d(old, "spec").get("selector") != spec.get("selector"):
            causes.append(cause("spec.selector", "Invalid", shown="v1.LabelSelector{...}",
                                detail="field is immutable"))
        return causes
