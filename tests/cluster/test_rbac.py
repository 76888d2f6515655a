"""RBAC in the embedded cluster: Role/ClusterRole/bindings validated with upstream's messages,
the authorizer's rule matching, impersonated requests and access reviews answered from the
stored rules, and the cluster's own token keeping every right (:mod:`pyhpa.cluster.apiserver.rbac`)."""

from __future__ import annotations

import ssl

import httpx
import pytest

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.apiserver.rbac import Attributes, UserInfo, impersonated, rule_allows
from pyhpa.cluster.apiserver.rbac_strategy import BindingStrategy, RoleStrategy
from pyhpa.cluster.embedded import EmbeddedCluster

RBAC = "rbac.authorization.k8s.io"


def test_rules_match_verbs_groups_subresources_names_and_urls():
    rule = {"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments", "*/scale"],
            "resourceNames": ["web"]}
    assert rule_allows(Attributes("get", "deployments", "apps", name="web"), rule)
    assert not rule_allows(Attributes("get", "deployments", "apps", name="api"), rule)
    assert not rule_allows(Attributes("list", "deployments", "apps"), rule)
    assert not rule_allows(Attributes("get", "deployments", "", name="web"), rule)
    assert rule_allows(Attributes("get", "statefulsets", "apps", "scale", name="web"), rule)
    assert not rule_allows(Attributes("get", "deployments", "apps", "status", name="web"), rule)
    urls = {"verbs": ["get"], "nonResourceURLs": ["/apis/*", "/version"]}
    assert rule_allows(Attributes("get", path="/apis/apps", resource_request=False), urls)
    assert not rule_allows(Attributes("get", path="/api", resource_request=False), urls)


def test_impersonation_headers_give_service_accounts_their_groups():
    sa = impersonated({"impersonate-user": "system:serviceaccount:app:web"}, [])
    assert sa.groups == ("system:serviceaccounts", "system:serviceaccounts:app",
                         "system:authenticated")
    bob = impersonated({"impersonate-user": "bob"}, [(b"Impersonate-Group", b"devs")])
    assert bob == UserInfo("bob", ("devs", "system:authenticated"))
    assert impersonated({}, []) is None


def _messages(causes):
    return [f"{c['field']}: {c['message']}" for c in causes]


def test_role_and_binding_validation_use_upstream_messages():
    role = {"metadata": {"name": "r", "namespace": "default"},
            "rules": [{"apiGroups": [""]}, {"verbs": ["get"], "nonResourceURLs": ["/x"]}]}
    assert _messages(RoleStrategy(R.ROLES).validate(role, None)) == [
        "rules[0].verbs: Required value: verbs must contain at least one value",
        "rules[0].resources: Required value: resource rules must supply at least one resource",
        'rules[1].nonResourceURLs: Invalid value: []string{"/x"}: namespaced rules cannot '
        "apply to non-resource URLs"]
    s = BindingStrategy(R.CLUSTER_ROLE_BINDINGS)
    crb = {"metadata": {"name": "system:b"}, "roleRef": {"kind": "Role", "name": "r"},
           "subjects": [{"kind": "ServiceAccount", "name": "web"}, {"kind": "Robot", "name": "x"},
                        {"kind": "User", "name": "bob"}]}
    s.prepare_create(crb)
    assert crb["roleRef"]["apiGroup"] == RBAC and crb["subjects"][2]["apiGroup"] == RBAC
    assert _messages(s.validate(crb, None)) == [
        'roleRef.kind: Unsupported value: "Role": supported values: "ClusterRole"',
        "subjects[0].namespace: Required value",
        'subjects[1].kind: Unsupported value: "Robot": supported values: "ServiceAccount", '
        '"User", "Group"']
    changed = dict(crb, roleRef={"apiGroup": RBAC, "kind": "ClusterRole", "name": "view"})
    old = dict(crb, roleRef={"apiGroup": RBAC, "kind": "ClusterRole", "name": "edit"})
    assert any("roleRef: Invalid value: " in m and m.endswith("cannot change roleRef")
               for m in _messages(s.validate(changed, old)))


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("rbac")) as c, httpx.Client(
            base_url=c.url, verify=ssl.create_default_context(cafile=str(c.ca_path)),
            headers={"Authorization": f"Bearer {c.token}"}, timeout=10) as client:
        yield client


def _review(api, attrs, **headers):
    body = {"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": attrs}}
    r = api.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json=body,
                 headers=headers)
    assert r.status_code == 201, r.text
    return r.json()["status"]


def test_impersonated_requests_and_reviews_follow_the_stored_rules(api):
    base = f"/apis/{RBAC}/v1"
    assert api.post(f"{base}/namespaces/default/roles", json={
        "apiVersion": f"{RBAC}/v1", "kind": "Role", "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}
    ).status_code == 201
    assert api.post(f"{base}/namespaces/default/rolebindings", json={
        "apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "read-pods"},
        "roleRef": {"kind": "Role", "name": "pod-reader", "apiGroup": RBAC},
        "subjects": [{"kind": "ServiceAccount", "name": "web", "namespace": "default"}]}
    ).status_code == 201
    sa = {"Impersonate-User": "system:serviceaccount:default:web"}
    assert api.get("/api/v1/namespaces/default/pods", headers=sa).status_code == 200
    denied = api.get("/api/v1/namespaces/kube-system/pods", headers=sa)
    assert denied.status_code == 403
    assert denied.json()["message"] == (
        'pods is forbidden: User "system:serviceaccount:default:web" cannot list resource '
        '"pods" in API group "" in the namespace "kube-system"')
    named = api.delete("/api/v1/namespaces/default/pods/x", headers=sa)
    assert named.status_code == 403 and named.json()["details"] == {
        "name": "x", "group": "", "kind": "pods"}
    # discovery stays readable for every authenticated user (system:discovery)
    assert api.get("/apis", headers=sa).status_code == 200
    allowed = _review(api, {"namespace": "default", "verb": "list", "resource": "pods"}, **sa)
    assert allowed == {"allowed": True, "reason": 'RBAC: allowed by RoleBinding '
                       '"read-pods/default" of Role "pod-reader" to ServiceAccount '
                       '"web/default"'}
    assert _review(api, {"namespace": "default", "verb": "delete", "resource": "pods"},
                   **sa) == {"allowed": False}
    # the cluster's own token may do everything
    assert _review(api, {"namespace": "x", "verb": "delete", "resource": "nodes"})["allowed"]
    sar = api.post("/apis/authorization.k8s.io/v1/subjectaccessreviews", json={
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "system:serviceaccount:default:web",
                 "groups": ["system:serviceaccounts"],
                 "resourceAttributes": {"namespace": "default", "verb": "get",
                                        "resource": "pods"}}})
    assert sar.json()["status"]["allowed"] is True


def test_bad_bindings_are_one_invalid_status(api):
    r = api.post(f"/apis/{RBAC}/v1/namespaces/default/rolebindings", json={
        "apiVersion": f"{RBAC}/v1", "kind": "RoleBinding", "metadata": {"name": "bad"},
        "roleRef": {"kind": "Secret", "name": "x"}, "subjects": [{"kind": "User"}]})
    assert r.status_code == 422
    assert r.json()["message"] == (
        'RoleBinding.rbac.authorization.k8s.io "bad" is invalid: [roleRef.kind: Unsupported '
        'value: "Secret": supported values: "Role", "ClusterRole", subjects[0].name: Required '
        "value]")


@pytest.mark.kubectl
@pytest.mark.slow
@pytest.mark.parametrize("minor", [33, 27])
def test_kubectl_auth_can_i_as_users_and_service_accounts(minor, cluster_proc, kube_home):
    from tests.cluster.conftest import make_kubectl

    k = make_kubectl(minor, cluster_proc, kube_home)
    ns = f"rbac-{minor}"
    k("create", "namespace", ns)
    k("-n", ns, "create", "role", "pod-reader", "--verb=get,list", "--resource=pods")
    k("-n", ns, "create", "rolebinding", "bob-reads", "--role=pod-reader", "--user=bob")
    k("-n", ns, "create", "rolebinding", "web-views", "--clusterrole=view",
      f"--serviceaccount={ns}:web")

    def can(*args):
        out = k("auth", "can-i", *args, check=False)
        return out.stdout.strip()

    assert can("list", "pods", "-n", ns, "--as=bob") == "yes"
    assert can("delete", "pods", "-n", ns, "--as=bob") == "no"
    assert can("list", "pods", "-n", "default", "--as=bob") == "no"
    assert can("list", "deployments.apps", "-n", ns, f"--as=system:serviceaccount:{ns}:web") \
        == "yes"
    assert can("create", "deployments.apps", "-n", ns,
               f"--as=system:serviceaccount:{ns}:web") == "no"
    assert can("delete", "nodes") == "yes"  # the cluster's own token
    denied = k("get", "pods", "-n", "default", "--as=bob", check=False)
    assert denied.returncode == 1 and 'User "bob" cannot list resource "pods" in API group ""' \
        ' in the namespace "default"' in denied.stderr
    wide = k("-n", ns, "get", "rolebindings", "-o", "wide").stdout
    assert "Role/pod-reader" in wide and f"{ns}/web" in wide
    k("delete", "namespace", ns, "--wait=false")
