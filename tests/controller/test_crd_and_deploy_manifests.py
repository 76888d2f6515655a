"""The committed CRD is exactly what the generator derives from the API model."""

from pathlib import Path

import yaml

from pyhpa.controller.crd import build_crd, render

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def test_committed_crd_matches_generator():
    assert (DEPLOY / "crd-pyhpa.io.yaml").read_text() == render()


def test_crd_schema_is_structural_and_mirrors_the_model():
    crd = build_crd()
    version = crd["spec"]["versions"][0]
    schema = version["schema"]["openAPIV3Schema"]
    text = yaml.safe_dump(schema)
    assert "$ref" not in text
    spec = schema["properties"]["spec"]
    assert spec["required"] == ["scaleTargetRef", "maxReplicas"]
    metric = spec["properties"]["metrics"]["items"]["properties"]
    assert set(metric) == {"type", "object", "pods", "resource", "containerResource", "external"}
    target = metric["resource"]["properties"]["target"]["properties"]
    assert target["averageValue"]["x-kubernetes-int-or-string"] is True
    status = schema["properties"]["status"]
    assert "desiredReplicas" in status["required"]
    assert "currentMetrics" not in status.get("required", [])
    assert version["subresources"] == {"status": {}}


def test_deploy_manifests_parse_and_grant_what_the_controller_uses():
    docs = [d for f in ("rbac.yaml", "deployment.yaml", "namespace.yaml")
            for d in yaml.safe_load_all((DEPLOY / f).read_text())]
    kinds = {d["kind"] for d in docs}
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Deployment", "Namespace"} <= kinds
    role = next(d for d in docs if d["kind"] == "ClusterRole")
    granted = {(g, r) for rule in role["rules"] for g in rule["apiGroups"] for r in rule["resources"]}
    for need in [("autoscaling", "horizontalpodautoscalers/status"), ("*", "*/scale"), ("", "pods"),
                 ("", "events"), ("coordination.k8s.io", "leases"), ("metrics.k8s.io", "pods")]:
        assert need in granted
    dep = next(d for d in docs if d["kind"] == "Deployment")
    assert dep["spec"]["replicas"] == 2
    assert "--leader-elect" in dep["spec"]["template"]["spec"]["containers"][0]["args"]


def _rbac_allows(docs, verb, group, resource, namespace, name=""):
    """Kubernetes RBAC for one ServiceAccount: ClusterRoles bound cluster-wide, Roles in their
    namespace; resourceNames limit a rule to named requests (list/watch by metadata.name too)."""
    roles = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs
             if d["kind"] in ("ClusterRole", "Role")}
    for b in docs:
        if b["kind"] not in ("ClusterRoleBinding", "RoleBinding"):
            continue
        if b["kind"] == "RoleBinding" and b["metadata"]["namespace"] != namespace:
            continue
        ref = b["roleRef"]
        role = roles[(ref["kind"], b["metadata"].get("namespace") if ref["kind"] == "Role" else None, ref["name"])]
        for rule in role["rules"]:
            names = rule.get("resourceNames")
            if (verb in rule["verbs"] and (group in rule["apiGroups"] or "*" in rule["apiGroups"])
                    and (resource in rule["resources"] or (resource.endswith("/scale") and "*/scale" in rule["resources"]))
                    and (not names or name in names)):
                return True
    return False


def test_rbac_grants_exactly_the_lease_access_the_controller_needs():
    from pyhpa.adapters.kube.state import lease_name_for
    from pyhpa.live.runner import RunOptions

    docs = [d for d in yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text())]
    dep = next(yaml.safe_load_all((DEPLOY / "deployment.yaml").read_text()))
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    own_ns = next(a.split("=", 1)[1] for a in args if a.startswith("--leader-elect-resource-namespace="))
    leader = RunOptions().leader_elect_resource_name
    lease = ("coordination.k8s.io", "leases")

    def ok(verb, group_resource, ns, name=""):
        return _rbac_allows(docs, verb, *group_resource, ns, name)

    # leader election: its own Lease in its own namespace (standbys watch it by name)
    for verb in ("get", "update", "list", "watch"):
        assert ok(verb, lease, own_ns, leader)
    assert ok("create", lease, own_ns)
    assert not ok("update", lease, "kube-system", "kube-controller-manager")  # nobody else's lock
    assert not ok("update", lease, "default", leader)  # not outside its namespace
    # the memory: one state Lease per namespace and group, anywhere
    for group in ("autoscaling", "pyhpa.io"):
        name = lease_name_for(group)
        assert ok("list", lease, "", name)  # the cluster-wide load, by name
        for verb in ("get", "update"):
            assert ok(verb, lease, "team-a", name)
        assert ok("create", lease, "team-a")
    assert not ok("get", lease, "team-a", "some-other-lease")
    assert not ok("list", lease, "")  # not every Lease of the cluster
    assert not ok("delete", lease, "team-a", lease_name_for("autoscaling"))
    # events in both groups, HPAs' status in both HPA groups, any scale subresource
    for group in ("", "events.k8s.io"):
        assert ok("create", (group, "events"), "team-a") and ok("patch", (group, "events"), "team-a")
    for group in ("autoscaling", "pyhpa.io"):
        assert ok("update", (group, "horizontalpodautoscalers/status"), "team-a")
        assert not ok("update", (group, "horizontalpodautoscalers"), "team-a")
    assert ok("update", ("apps", "deployments/scale"), "team-a")
    assert not ok("update", ("apps", "deployments"), "team-a")
