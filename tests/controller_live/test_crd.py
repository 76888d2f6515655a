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
