"""Who may do what: the RBAC authorizer over the stored Roles, ClusterRoles and their bindings.

Why: ``kubectl auth can-i --as=bob``, access reviews and requests made with impersonation
headers (``kubectl get pods --as=system:serviceaccount:app:web``) must answer from the rules an
application's manifest granted, as a real cluster's RBAC authorizer does
(plugin/pkg/auth/authorizer/rbac/rbac.go ``Authorize``, ``RulesFor``; rbac/v1 helpers
``VerbMatches``, ``ResourceMatches``...). The cluster's own token is not subject to it: its user
is in ``system:masters``, which a real cluster lets do everything before RBAC is asked
(docs/cluster.md#access-control).

The identity of a request comes from the impersonation headers (``Impersonate-User``,
``Impersonate-Group``), as upstream's impersonation filter builds it: a service account user gets
its ``system:serviceaccounts`` groups, every non-anonymous user ``system:authenticated``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from pyhpa.api.selectors import SelectorError, selector_from_label_selector
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.status import APIError

Obj = dict[str, Any]

GROUP = "rbac.authorization.k8s.io"
MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
SA_PREFIX = "system:serviceaccount:"

ROLES, CLUSTER_ROLES = R.ROLES, R.CLUSTER_ROLES
ROLE_BINDINGS, CLUSTER_ROLE_BINDINGS = R.ROLE_BINDINGS, R.CLUSTER_ROLE_BINDINGS


@dataclass(frozen=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def privileged(self) -> bool:
        return MASTERS in self.groups


@dataclass(frozen=True)
class Attributes:
    """What a request (or an access review) asks to do."""

    verb: str
    resource: str = ""
    group: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    path: str = ""  # non-resource requests only
    resource_request: bool = True


def service_account_groups(namespace: str) -> tuple[str, ...]:
    return ("system:serviceaccounts", f"system:serviceaccounts:{namespace}")


def impersonated(headers: Mapping[str, str], raw: Iterable[tuple[bytes, bytes]]) -> UserInfo | None:
    """The identity impersonation headers ask for, or None without them
    (staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go)."""
    user = headers.get("impersonate-user")
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for key, value in raw:
        name = key.decode("latin-1").lower()
        if name == "impersonate-group":
            groups.append(value.decode())
        elif name.startswith("impersonate-extra-"):
            extra.setdefault(name[len("impersonate-extra-"):], []).append(value.decode())
    if user is None:
        if groups or extra:
            raise APIError(400, "BadRequest", "Impersonate-Group and Impersonate-Extra-* "
                           "need Impersonate-User: requested groups without impersonating a "
                           "user")
        return None
    if user.startswith(SA_PREFIX):
        parts = user[len(SA_PREFIX):].split(":")
        if len(parts) == 2 and all(parts):
            groups = list(service_account_groups(parts[0])) + groups
    if user != "system:anonymous" and AUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    return UserInfo(user, tuple(groups), {k: tuple(v) for k, v in extra.items()})


# --------------------------------------------------------------------------- rule matching


def _verb_matches(rule: Obj, verb: str) -> bool:
    return any(v in ("*", verb) for v in rule.get("verbs") or ())


def _group_matches(rule: Obj, group: str) -> bool:
    return any(g in ("*", group) for g in rule.get("apiGroups") or ())


def _resource_matches(rule: Obj, combined: str, sub: str) -> bool:
    for r in rule.get("resources") or ():
        if r in ("*", combined):
            return True
        if sub and r == "*/" + sub:
            return True
    return False


def _name_matches(rule: Obj, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def _url_matches(rule: Obj, path: str) -> bool:
    for url in rule.get("nonResourceURLs") or ():
        if url in ("*", path) or (url.endswith("*") and path.startswith(url[:-1])):
            return True
    return False


def rule_allows(attrs: Attributes, rule: Obj) -> bool:
    """rbac.go ``RuleAllows``."""
    if not isinstance(rule, dict) or not _verb_matches(rule, attrs.verb):
        return False
    if not attrs.resource_request:
        return _url_matches(rule, attrs.path)
    combined = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    return (_group_matches(rule, attrs.group)
            and _resource_matches(rule, combined, attrs.subresource)
            and _name_matches(rule, attrs.name))


def _subject_matches(subject: Obj, user: UserInfo, binding_ns: str) -> bool:
    """rbac.go ``appliesToUser``."""
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return user.name == name
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return bool(ns) and user.name == f"{SA_PREFIX}{ns}:{name}"
    return False


def _describe_subject(subject: Obj, binding_ns: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or binding_ns}"'
    return f'{kind} "{name}"'


@dataclass
class Decision:
    allowed: bool
    reason: str = ""


class Authorizer:
    """Reads the bindings and roles from the store on every question (no cache to go stale)."""

    def __init__(self, store: Any) -> None:
        self.store = store

    def _role_rules(self, ref: Obj, namespace: str) -> list[Obj]:
        if not isinstance(ref, dict):
            return []
        kind, name = ref.get("kind"), ref.get("name") or ""
        if kind == "ClusterRole":
            role = self.store.try_get(CLUSTER_ROLES.key, "", name)
        elif kind == "Role" and namespace:
            role = self.store.try_get(ROLES.key, namespace, name)
        else:
            role = None
        return self._aggregated(role) if role is not None else []

    def _aggregated(self, role: Obj, depth: int = 0) -> list[Obj]:
        """The role's rules, plus those of the ClusterRoles its aggregationRule selects (what
        the clusterrole-aggregation controller writes into it upstream)."""
        rules = role.get("rules")
        out = [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []
        agg = role.get("aggregationRule")
        if not isinstance(agg, dict) or depth > 2:
            return out
        name = role.get("metadata", {}).get("name")
        for sel in agg.get("clusterRoleSelectors") or ():
            try:
                selector = selector_from_label_selector(sel)
            except (SelectorError, TypeError):
                continue
            for other in self.store.list(CLUSTER_ROLES.key).items:
                labels = other.get("metadata", {}).get("labels") or {}
                if other.get("metadata", {}).get("name") != name and selector.matches(labels):
                    out += self._aggregated(other, depth + 1)
        return out

    def _grants(self, user: UserInfo, namespace: str):
        """(description, rules) of every binding that applies to ``user``: the cluster's
        bindings, then the namespace's (rbac.go ``VisitRulesFor``)."""
        for binding in self.store.list(CLUSTER_ROLE_BINDINGS.key).items:
            yield from self._from_binding(binding, user, "", "ClusterRoleBinding")
        if namespace:
            for binding in self.store.list(ROLE_BINDINGS.key, namespace=namespace).items:
                yield from self._from_binding(binding, user, namespace, "RoleBinding")

    def _from_binding(self, binding: Obj, user: UserInfo, namespace: str, kind: str):
        ref = binding.get("roleRef") or {}
        name = binding.get("metadata", {}).get("name", "")
        for subject in binding.get("subjects") or ():
            if isinstance(subject, dict) and _subject_matches(subject, user, namespace):
                shown = f"{name}/{namespace}" if namespace else name
                where = (f'{kind} "{shown}" of {ref.get("kind")} "{ref.get("name")}" to '
                         f"{_describe_subject(subject, namespace)}")
                yield where, self._role_rules(ref, namespace)
                break

    def authorize(self, user: UserInfo, attrs: Attributes) -> Decision:
        if user.privileged:
            return Decision(True, "")
        for where, rules in self._grants(user, attrs.namespace):
            for rule in rules:
                if rule_allows(attrs, rule):
                    return Decision(True, f"RBAC: allowed by {where}")
        return Decision(False, "")

    def rules_for(self, user: UserInfo, namespace: str) -> tuple[list[Obj], list[Obj]]:
        """(resource rules, non-resource rules) ``user`` has in ``namespace`` (a
        SelfSubjectRulesReview)."""
        if user.privileged:
            return ([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    [{"verbs": ["*"], "nonResourceURLs": ["*"]}])
        resource: list[Obj] = []
        non_resource: list[Obj] = []
        for _, rules in self._grants(user, namespace):
            for rule in rules:
                if rule.get("nonResourceURLs"):
                    non_resource.append({"verbs": list(rule.get("verbs") or ()),
                                         "nonResourceURLs": list(rule["nonResourceURLs"])})
                else:
                    resource.append({k: list(rule[k]) for k in
                                     ("verbs", "apiGroups", "resources", "resourceNames")
                                     if rule.get(k)})
        return resource, non_resource


def forbidden(user: UserInfo, attrs: Attributes, kind: str = "") -> APIError:
    """The 403 upstream's authorization filter answers (responsewriters.Forbidden)."""
    if not attrs.resource_request:
        return APIError(403, "Forbidden", f'forbidden: User "{user.name}" cannot '
                        f'{attrs.verb} path "{attrs.path}"', {})
    resource = f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    qualified = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    subject = f'{qualified} "{attrs.name}"' if attrs.name else qualified
    scope = (f'in the namespace "{attrs.namespace}"' if attrs.namespace
             else "at the cluster scope")
    message = (f'{subject} is forbidden: User "{user.name}" cannot {attrs.verb} resource '
               f'"{resource}" in API group "{attrs.group}" {scope}')
    details: Obj = {"group": attrs.group, "kind": attrs.resource}
    if attrs.name:
        details = {"name": attrs.name, **details}
    return APIError(403, "Forbidden", message, details)
