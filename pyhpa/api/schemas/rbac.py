"""Schemas of rbac.authorization.k8s.io/v1: Role, ClusterRole, RoleBinding, ClusterRoleBinding.

Why: application manifests grant their ServiceAccounts rights with these kinds; the embedded
cluster stores them and answers access reviews and impersonated requests from their rules
(``pyhpa.cluster.apiserver.rbac``). Field names, list markers and required fields follow
k8s.io/api rbac/v1 types.go.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    LABEL_SELECTOR, Schema, atomic_list, definition, string, strings, struct, top_level)

RBAC = "io.k8s.api.rbac.v1."
GROUP = "rbac.authorization.k8s.io"


def _role(kind: str, scope: str) -> Schema:
    props = {"rules": atomic_list(f"The PolicyRules of this {kind}.", RBAC + "PolicyRule")}
    if kind == "ClusterRole":
        props["aggregationRule"] = struct(
            RBAC + "AggregationRule", "How to build the rules of this ClusterRole from other "
            "ClusterRoles' (labels); when set, rules are controller-managed.")
    return top_level(f"A set of permissions (PolicyRules) {scope}.", GROUP, "v1", kind, props)


def _binding(kind: str, scope: str) -> Schema:
    return top_level(
        f"Grants the permissions of a role {scope} to a set of subjects.", GROUP, "v1", kind,
        {"subjects": atomic_list("The users, groups and service accounts the role is granted "
                                 "to.", RBAC + "Subject"),
         "roleRef": struct(RBAC + "RoleRef", "The role granted. Immutable: change it by "
                           "deleting and re-creating the binding.", embedded=True)},
        required=("roleRef",))


def definitions() -> dict[str, Schema]:
    return {
        RBAC + "Role": _role("Role", "within a namespace"),
        RBAC + "ClusterRole": _role("ClusterRole", "at the cluster scope"),
        RBAC + "RoleBinding": _binding("RoleBinding", "within the binding's namespace"),
        RBAC + "ClusterRoleBinding": _binding("ClusterRoleBinding", "at the cluster scope"),
        RBAC + "PolicyRule": definition(
            "Actions (verbs) allowed on resources or non-resource URLs.",
            {"verbs": atomic_list("Verbs allowed ('*' for all).", strings()),
             "apiGroups": atomic_list("API groups of the resources ('' is the core group, '*' "
                                      "all).", strings()),
             "resources": atomic_list("Resources ('*' all, 'pods/log' a subresource, "
                                      "'*/scale' a subresource of all).", strings()),
             "resourceNames": atomic_list("Names the rule is limited to (all when empty).",
                                          strings()),
             "nonResourceURLs": atomic_list("Partial URLs ('/healthz', '/apis/*'); only in "
                                            "ClusterRoles.", strings())},
            required=("verbs",)),
        RBAC + "AggregationRule": definition(
            "Which ClusterRoles' rules are aggregated.",
            {"clusterRoleSelectors": atomic_list("Label selectors of the ClusterRoles whose "
                                                 "rules are combined.", LABEL_SELECTOR)}),
        RBAC + "Subject": definition(
            "A user, group or service account a role is granted to.",
            {"kind": string("User, Group or ServiceAccount."),
             "apiGroup": string("rbac.authorization.k8s.io for User and Group, '' for "
                                "ServiceAccount (defaulted)."),
             "name": string("Name of the subject."),
             "namespace": string("Namespace of a ServiceAccount subject.")},
            required=("kind", "name"), atomic=True),
        RBAC + "RoleRef": definition(
            "The role a binding grants.",
            {"apiGroup": string("rbac.authorization.k8s.io."),
             "kind": string("Role or ClusterRole (ClusterRoleBindings: ClusterRole)."),
             "name": string("Name of the role.")},
            required=("apiGroup", "kind", "name"), atomic=True),
    }
