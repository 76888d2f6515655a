"""Real kubectl (1.33 and 1.27): every writer lands in managedFields, so `kubectl apply
--server-side` conflicts on `.spec.replicas` after a scale, as on a real cluster (issue #16, 4)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os

import pytest

from pyhpa.adapters.kube.client import CONTROLLER_MANAGER, ApiError, KubeClient, load_config
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
    run("delete", "namespace", run.ns, "--timeout=50s", check=False)  # Terminating until empty


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
            for _attempt in range(5):  # the deployment controller may write in between: re-read
                scale = await kube.get(path)
                scale["spec"]["replicas"] = replicas
                try:
                    await kube.put(path, scale)
                    return
                except ApiError as exc:
                    if not exc.is_conflict:
                        raise
            raise AssertionError("the scale write kept conflicting")
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


WEB = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n"
       "  selector: {matchLabels: {app: web}}\n"
       "  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n")
CONTAINER = ("      - name: {name}\n        image: {image}\n        command: [sh]\n"
             "        ports: [{{containerPort: 80}}]\n        env: [{{name: A, value: '1'}}]\n")
SIDECAR = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n"
           "    spec:\n      containers:\n      - {name: log, image: busybox}\n")


def web(*names: str, image: str = "nginx") -> str:
    return WEB + "".join(CONTAINER.format(name=n, image=image) for n in names)


def containers(k) -> list[str]:
    out = k("-n", k.ns, "get", "deployment", "web", "-o",
            "jsonpath={.spec.template.spec.containers[*].name}")
    return out.stdout.split()


def owned_containers(k, manager: str) -> dict:
    [entry] = [e for e in managed_fields(k, "deployment", "web") if e["manager"] == manager]
    return entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]


def test_keyed_lists_are_owned_per_element_by_each_applier(k):
    k("-n", k.ns, "apply", "--server-side", "-f", "-", input=web("web"))
    k("-n", k.ns, "apply", "--server-side", "--field-manager=sidecar", "-f", "-", input=SIDECAR)
    assert containers(k) == ["web", "log"]
    mine = owned_containers(k, "kubectl")
    assert list(mine) == ['k:{"name":"web"}']
    assert mine['k:{"name":"web"}'] == {
        ".": {}, "f:command": {}, "f:image": {}, "f:name": {},  # command: an atomic list
        "f:env": {'k:{"name":"A"}': {".": {}, "f:name": {}, "f:value": {}}},
        "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}}}
    assert owned_containers(k, "sidecar") == {
        'k:{"name":"log"}': {".": {}, "f:image": {}, "f:name": {}}}
    # re-applying, and dropping an element it added, leaves the other manager's container
    k("-n", k.ns, "apply", "--server-side", "-f", "-", input=web("web", "extra"))
    assert containers(k) == ["web", "log", "extra"]
    k("-n", k.ns, "apply", "--server-side", "-f", "-", input=web("web"))
    assert containers(k) == ["web", "log"]


def test_an_element_changed_by_an_update_conflicts_by_its_key(k):
    k("-n", k.ns, "apply", "--server-side", "-f", "-", input=web("web"))
    k("-n", k.ns, "set", "image", "deployment/web", "web=nginx:2")
    assert owned_containers(k, "kubectl-set") == {'k:{"name":"web"}': {"f:image": {}}}
    clash = k("-n", k.ns, "apply", "--server-side", "-f", "-", input=web("web"), check=False)
    assert clash.returncode != 0
    assert ('error: Apply failed with 1 conflict: conflict with "kubectl-set" using apps/v1: '
            '.spec.template.spec.containers[name="web"].image') in clash.stderr
    k("-n", k.ns, "apply", "--server-side", "--force-conflicts", "-f", "-", input=web("web"))
    assert k("-n", k.ns, "get", "deployment", "web", "-o",
             "jsonpath={.spec.template.spec.containers[0].image}").stdout == "nginx"
    assert not [e for e in managed_fields(k, "deployment", "web") if e["manager"] == "kubectl-set"]
