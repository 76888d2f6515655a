"""Real kubectl (1.33 and 1.27): every writer lands in managedFields, so `kubectl apply
--server-side` conflicts on `.spec.replicas` after a scale, as on a real cluster (issue #16, 4)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os

import pytest

from pyhpa.adapters.kube.client import CONTROLLER_MANAGER, KubeClient, load_config
from tests.cluster.conftest import make_kubectl

pytestmark = [pytest.mark.kubectl, pytest.mark.slow]

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx
        resources:
          requests: {cpu: 100m}
"""
_numbers = itertools.count()


@pytest.fixture(params=[33, 27], ids=["kubectl-1.33", "kubectl-1.27"])
def k(request, cluster_proc, kube_home, tmp_path):
    run = make_kubectl(request.param, cluster_proc, kube_home)
    run.ns = f"mf-{request.param}-{next(_numbers)}"  # type: ignore[attr-defined]
    # kubectl names itself after its binary (kubectl.1.33/v1.33.1 ...): that is the manager
    # of a write that sends no fieldManager, such as `kubectl scale`
    run.name = os.path.basename(run.binary)  # type: ignore[attr-defined]
    run("create", "namespace", run.ns)
    manifest = tmp_path / "web.yaml"
    manifest.write_text(DEPLOYMENT)
    run.manifest = str(manifest)  # type: ignore[attr-defined]
    yield run
    run("delete", "namespace", run.ns, "--wait=false", check=False)


def managed_fields(k, *what: str) -> list[dict]:
    out = k("-n", k.ns, "get", *what, "-o", "json", "--show-managed-fields")
    return json.loads(out.stdout)["metadata"]["managedFields"]


def conflict_help(stderr: str) -> bool:
    return "--force-conflicts" in stderr


def test_server_side_apply_conflicts_after_kubectl_scale(k):
    out = k("-n", k.ns, "apply", "--server-side", "-f", k.manifest)
    assert "serverside-applied" in out.stdout
    k("-n", k.ns, "scale", "deployment", "web", "--replicas=5")
    scaled = [e for e in managed_fields(k, "deployment", "web") if e.get("subresource") == "scale"]
    assert [(e["manager"], e["operation"], e["apiVersion"], e["fieldsV1"]) for e in scaled] == \
        [(k.name, "Update", "apps/v1", {"f:spec": {"f:replicas": {}}})]
    clash = k("-n", k.ns, "apply", "--server-side", "-f", k.manifest, check=False)
    assert clash.returncode != 0
    assert (f'error: Apply failed with 1 conflict: conflict with "{k.name}" with subresource '
            f'"scale" using apps/v1: .spec.replicas') in clash.stderr
    assert conflict_help(clash.stderr)
    got = k("-n", k.ns, "get", "deployment", "web", "-o", "jsonpath={.spec.replicas}")
    assert got.stdout == "5"
    forced = k("-n", k.ns, "apply", "--server-side", "--force-conflicts", "-f", k.manifest)
    assert "serverside-applied" in forced.stdout
    assert k("-n", k.ns, "get", "deployment", "web", "-o",
             "jsonpath={.spec.replicas}").stdout == "2"
    entries = managed_fields(k, "deployment", "web")
    assert not [e for e in entries if e.get("subresource") == "scale"]
    [applier] = [e for e in entries if e["operation"] == "Apply"]
    assert applier["manager"] == "kubectl" and "f:replicas" in applier["fieldsV1"]["f:spec"]


def test_server_side_apply_conflicts_after_the_hpa_controller_scaled(k, cluster_proc):
    k("-n", k.ns, "apply", "--server-side", "-f", k.manifest)

    async def hpa_scales_to(replicas: int) -> None:
        """The write the live HPA controller makes, with the name it has on the embedded
        cluster (upstream's: kube-controller-manager)."""
        kube = KubeClient.from_config(load_config(str(cluster_proc.kubeconfig)), qps=0,
                                      manager=CONTROLLER_MANAGER)
        path = f"/apis/apps/v1/namespaces/{k.ns}/deployments/web/scale"
        try:
            scale = await kube.get(path)
            scale["spec"]["replicas"] = replicas
            await kube.put(path, scale)
        finally:
            await kube.close()

    asyncio.run(hpa_scales_to(8))
    shown = k("-n", k.ns, "get", "deployment", "web", "-o", "yaml", "--show-managed-fields")
    assert "manager: kube-controller-manager" in shown.stdout
    assert "subresource: scale" in shown.stdout
    clash = k("-n", k.ns, "apply", "--server-side", "-f", k.manifest, check=False)
    assert clash.returncode != 0
    assert ('error: Apply failed with 1 conflict: conflict with "kube-controller-manager" with '
            'subresource "scale" using apps/v1: .spec.replicas') in clash.stderr
    assert k("-n", k.ns, "get", "deployment", "web", "-o",
             "jsonpath={.spec.replicas}").stdout == "8"
    # an apply that leaves replicas out does not conflict: the HPA keeps them
    without = DEPLOYMENT.replace("  replicas: 2\n", "")
    out = k("-n", k.ns, "apply", "--server-side", "-f", "-", input=without)
    assert "serverside-applied" in out.stdout
    assert k("-n", k.ns, "get", "deployment", "web", "-o",
             "jsonpath={.spec.replicas}").stdout == "8"


def test_autoscale_is_recorded_in_the_version_kubectl_wrote(k):
    k("-n", k.ns, "apply", "--server-side", "-f", k.manifest)
    k("-n", k.ns, "autoscale", "deployment", "web", "--cpu-percent=80", "--min=1", "--max=5")
    [entry] = managed_fields(k, "hpa", "web")
    assert (entry["manager"], entry["operation"]) == ("kubectl-autoscale", "Update")
    spec = entry["fieldsV1"]["f:spec"]
    if k.binary.endswith("1.27"):  # 1.27 posts an autoscaling/v1 HPA: owned in v1 terms
        assert entry["apiVersion"] == "autoscaling/v1"
        assert "f:targetCPUUtilizationPercentage" in spec and "f:metrics" not in spec
    else:  # 1.33 posts autoscaling/v2
        assert entry["apiVersion"] == "autoscaling/v2"
        assert "f:metrics" in spec and "f:targetCPUUtilizationPercentage" not in spec
