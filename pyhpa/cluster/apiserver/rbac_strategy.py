"""Write rules of Roles, ClusterRoles and their bindings: upstream's defaults and validation
(pkg/apis/rbac/v1/defaults.go, pkg/apis/rbac/validation/validation.go), with its messages.

Why: a binding with a ``roleRef`` of the wrong kind, or a rule without verbs, is refused by a
real cluster at ``kubectl apply`` time; accepting it here would let a manifest pass that fails
in production.
"""

from __future__ import annotations


from typing import Any

from pyhpa.cluster.apiserver.object_meta import path_segment_name
from pyhpa.api.field_errors import cause
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]
Cause = dict[str, str]
GROUP = "rbac.authorization.k8s.io"


def _not_supported(field: str, value: Any, allowed: tuple[str, ...]) -> Cause:
    shown = ", ".join(f'"{a}"' for a in allowed)
    return {"reason": "FieldValueNotSupported", "field": field,
            "message": f'Unsupported value: "{value}": supported values: {shown}'}


def _go_list(values: Any) -> str:
    return "[]string{" + ", ".join(f'"{v}"' for v in values) + "}"


def rule_causes(rule: Any, at: str, namespaced: bool) -> list[Cause]:
    """validation.go ``ValidatePolicyRule``."""
    if not isinstance(rule, dict):
        return []
    out: list[Cause] = []
    if not rule.get("verbs"):
        out.append(cause(f"{at}.verbs", "Required",
                         detail="verbs must contain at least one value"))
    urls = rule.get("nonResourceURLs") or []
    if urls:
        if namespaced:
            out.append(cause(f"{at}.nonResourceURLs", "Invalid", shown=_go_list(urls),
                             detail="namespaced rules cannot apply to non-resource URLs"))
        if rule.get("apiGroups") or rule.get("resources") or rule.get("resourceNames"):
            out.append(cause(f"{at}.nonResourceURLs", "Invalid", shown=_go_list(urls),
                             detail="rules cannot apply to both regular resources and "
                                    "non-resource URLs"))
        return out
    if not rule.get("apiGroups"):
        out.append(cause(f"{at}.apiGroups", "Required",
                         detail="resource rules must supply at least one api group"))
    if not rule.get("resources"):
        out.append(cause(f"{at}.resources", "Required",
                         detail="resource rules must supply at least one resource"))
    return out


def subject_causes(subject: Any, at: str, namespaced: bool) -> list[Cause]:
    """validation.go ``ValidateRoleBindingSubject``."""
    if not isinstance(subject, dict):
        return []
    out: list[Cause] = []
    name, kind = subject.get("name") or "", subject.get("kind") or ""
    if not name:
        out.append(cause(f"{at}.name", "Required"))
    if kind == "ServiceAccount":
        if name:
            out += [cause(f"{at}.name", "Invalid", name, m) for m in path_segment_name(name)]
        if subject.get("apiGroup"):
            out.append(_not_supported(f"{at}.apiGroup", subject["apiGroup"], ("",)))
        if not namespaced and not subject.get("namespace"):
            out.append(cause(f"{at}.namespace", "Required"))
    elif kind in ("User", "Group"):
        if subject.get("apiGroup") != GROUP:
            out.append(_not_supported(f"{at}.apiGroup", subject.get("apiGroup") or "",
                                      (GROUP,)))
    else:
        out.append(_not_supported(f"{at}.kind", kind, ("ServiceAccount", "User", "Group")))
    return out


class RoleStrategy(Strategy):
    """Role and ClusterRole (no status; ``rules`` checked rule by rule)."""

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        rules = obj.get("rules")
        for i, rule in enumerate(rules if isinstance(rules, list) else []):
            causes += rule_causes(rule, f"rules[{i}]", self.res.namespaced)
        agg = obj.get("aggregationRule")
        if isinstance(agg, dict) and not agg.get("clusterRoleSelectors"):
            causes.append(cause("aggregationRule.clusterRoleSelectors", "Required",
                                detail="at least one clusterRoleSelector required if "
                                       "aggregationRule is non-nil"))
        return causes


class BindingStrategy(Strategy):
    """RoleBinding and ClusterRoleBinding: apiGroups defaulted, roleRef checked and immutable."""

    def _default(self, obj: Obj) -> None:
        ref = obj.get("roleRef")
        if isinstance(ref, dict) and not ref.get("apiGroup"):
            ref["apiGroup"] = GROUP
        subjects = obj.get("subjects")
        for s in subjects if isinstance(subjects, list) else []:
            if isinstance(s, dict) and not s.get("apiGroup") and s.get("kind") in ("User",
                                                                                "Group"):
                s["apiGroup"] = GROUP

    def validate(self, obj: Obj, old: Obj | None) -> list[Cause]:
        causes = super().validate(obj, old)
        ref = obj.get("roleRef") if isinstance(obj.get("roleRef"), dict) else {}
        if ref.get("apiGroup") != GROUP:
            causes.append(_not_supported("roleRef.apiGroup", ref.get("apiGroup") or "", (GROUP,)))
        kinds = ("Role", "ClusterRole") if self.res.namespaced else ("ClusterRole",)
        if ref.get("kind") not in kinds:
            causes.append(_not_supported("roleRef.kind", ref.get("kind") or "", kinds))
        if not ref.get("name"):
            causes.append(cause("roleRef.name", "Required"))
        else:
            causes += [cause("roleRef.name", "Invalid", ref["name"], m)
                       for m in path_segment_name(ref["name"])]
        subjects = obj.get("subjects")
        for i, s in enumerate(subjects if isinstance(subjects, list) else []):
            causes += subject_causes(s, f"subjects[{i}]", self.res.namespaced)
        if old is not None and isinstance(old.get("roleRef"), dict) and old["roleRef"] != ref:
            shown = (f'rbac.RoleRef{{APIGroup:"{ref.get("apiGroup", "")}", '
                     f'Kind:"{ref.get("kind", "")}", Name:"{ref.get("name", "")}"}}')
            causes.append(cause("roleRef", "Invalid", shown=shown, detail="cannot change roleRef"))
        return causes
