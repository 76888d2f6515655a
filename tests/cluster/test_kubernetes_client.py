"""The official `kubernetes` Python client against the embedded API server: a second client,
independent of kubectl and of ours (list, watch resumed from a resourceVersion, the three patch
types, server-side apply with its conflicts, the scale subresource)."""

from __future__ import annotations

import json

import pytest

kubernetes = pytest.importorskip("kubernetes")

from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes import watch as k8s_watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from pyhpa.cluster.embedded import EmbeddedCluster  # noqa: E402
from tests import builders  # noqa: E402

NS = "default"
APPLY = "application/apply-patch+yaml"


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    """An ApiClient configured from the kubeconfig the embedded cluster writes (CA + token)."""
    with EmbeddedCluster(tmp_path_factory.mktemp("k8s"), simulate=False) as cluster:
        cfg = k8s.Configuration()
        k8s_config.load_kube_config(config_file=str(cluster.kubeconfig_path),
                                    client_configuration=cfg)
        with k8s.ApiClient(cfg) as api_client:
            yield api_client


@pytest.fixture()
def apps(api):
    return k8s.AppsV1Api(api)


def deployment(name: str, replicas: int = 1, **labels: str) -> dict:
    """Two containers (web, side), so patches have a list to merge; ``labels`` go on the object."""
    return builders.deployment(name, replicas, namespace=None, labels={"app": name, **labels},
                               containers=[builders.container("web", image="nginx:1"),
                                           builders.container("side", image="busybox:1")])


def images(dep) -> dict[str, str]:
    return {c.name: c.image for c in dep.spec.template.spec.containers}


def test_list_with_selectors_and_typed_models(api, apps):
    apps.create_namespaced_deployment(NS, deployment("l1", tier="a"))
    apps.create_namespaced_deployment(NS, deployment("l2", tier="b"))
    listed = apps.list_namespaced_deployment(NS, label_selector="tier=a")
    assert isinstance(listed, k8s.V1DeploymentList)
    assert [d.metadata.name for d in listed.items] == ["l1"]
    assert listed.metadata.resource_version
    names = {n.metadata.name for n in k8s.CoreV1Api(api).list_namespace().items}
    assert NS in names
    one = apps.read_namespaced_deployment("l2", NS)
    assert one.spec.replicas == 1 and one.metadata.labels["tier"] == "b"
    # the server's defaults come back as the models' fields
    assert one.spec.strategy.type == "RollingUpdate" and one.spec.revision_history_limit == 10
    # the page of a chunked list continues with its token
    page = apps.list_namespaced_deployment(NS, limit=1)
    assert len(page.items) == 1 and page.metadata._continue
    rest = apps.list_namespaced_deployment(NS, limit=10, _continue=page.metadata._continue)
    assert page.items[0].metadata.name not in [d.metadata.name for d in rest.items]


def watch_two(apps, resource_version: str) -> tuple[list[tuple[str, str]], str]:
    """The first two (type, name) events of group=w Deployments after ``resource_version``, and
    the version the watch ended at."""
    w = k8s_watch.Watch()
    seen = []
    for ev in w.stream(apps.list_namespaced_deployment, NS, label_selector="group=w",
                       resource_version=resource_version, timeout_seconds=10):
        seen.append((ev["type"], ev["object"].metadata.name))
        if len(seen) == 2:
            w.stop()
            break
    return seen, w.resource_version


def test_watch_resumes_from_a_resource_version(apps):
    apps.create_namespaced_deployment(NS, deployment("w1", group="w"))
    rv = apps.list_namespaced_deployment(NS, label_selector="group=w").metadata.resource_version
    apps.create_namespaced_deployment(NS, deployment("w2", group="w"))
    apps.create_namespaced_deployment(NS, deployment("w3", group="w"))
    seen, resume = watch_two(apps, rv)
    # only what happened after the listed version: w1 is not replayed
    assert seen == [("ADDED", "w2"), ("ADDED", "w3")]
    apps.patch_namespaced_deployment("w2", NS, {"spec": {"replicas": 3}})
    apps.delete_namespaced_deployment("w3", NS)
    later, _ = watch_two(apps, resume)
    assert later == [("MODIFIED", "w2"), ("DELETED", "w3")]


def test_strategic_merge_and_json_patches(apps):
    apps.create_namespaced_deployment(NS, deployment("p"))
    # a dict body is a strategic merge patch: containers merge by name
    out = apps.patch_namespaced_deployment(
        "p", NS, {"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:2"}]}}}})
    assert images(out) == {"web": "nginx:2", "side": "busybox:1"}
    # a merge patch replaces the whole list
    out = apps.patch_namespaced_deployment(
        "p", NS, {"spec": {"template": {"spec": {"containers": [
            {"name": "web", "image": "nginx:3"}]}}}},
        _content_type="application/merge-patch+json")
    assert images(out) == {"web": "nginx:3"}
    # a list body is a JSON patch
    out = apps.patch_namespaced_deployment(
        "p", NS, [{"op": "replace", "path": "/spec/replicas", "value": 4},
                  {"op": "add", "path": "/metadata/labels/patched", "value": "yes"}])
    assert out.spec.replicas == 4 and out.metadata.labels["patched"] == "yes"
    with pytest.raises(ApiException) as bad:
        apps.patch_namespaced_deployment(
            "p", NS, [{"op": "test", "path": "/spec/replicas", "value": 9}])
    assert bad.value.status == 422


def test_server_side_apply_and_its_conflicts(apps):
    created = apps.patch_namespaced_deployment("ssa", NS, deployment("ssa", 2),
                                               field_manager="py-ssa", _content_type=APPLY)
    assert created.spec.replicas == 2
    [mine] = created.metadata.managed_fields
    assert (mine.manager, mine.operation, mine.api_version) == ("py-ssa", "Apply", "apps/v1")
    assert "f:replicas" in mine.fields_v1["f:spec"]
    # the client scales through the subresource, naming no manager: it is named by its
    # User-Agent's product, as upstream names it ("OpenAPI-Generator/<version>/python")
    scale = apps.read_namespaced_deployment_scale("ssa", NS)
    scale.spec.replicas = 7
    apps.replace_namespaced_deployment_scale("ssa", NS, scale)
    with pytest.raises(ApiException) as clash:
        apps.patch_namespaced_deployment("ssa", NS, deployment("ssa", 2),
                                         field_manager="py-ssa", _content_type=APPLY)
    assert clash.value.status == 409
    assert json.loads(clash.value.body)["message"] == (
        'Apply failed with 1 conflict: conflict with "OpenAPI-Generator" with subresource '
        '"scale" using apps/v1: .spec.replicas')
    forced = apps.patch_namespaced_deployment("ssa", NS, deployment("ssa", 2),
                                              field_manager="py-ssa", force=True,
                                              _content_type=APPLY)
    assert forced.spec.replicas == 2
    assert [e.manager for e in forced.metadata.managed_fields] == ["py-ssa"]
    # dropping a field from the applied config removes it
    smaller = deployment("ssa", 2)
    del smaller["metadata"]["labels"]
    out = apps.patch_namespaced_deployment("ssa", NS, smaller, field_manager="py-ssa",
                                           _content_type=APPLY)
    assert not (out.metadata.labels or {})


def test_scale_subresource(api, apps):
    apps.create_namespaced_deployment(NS, deployment("sc", 1))
    scale = apps.read_namespaced_deployment_scale("sc", NS)
    assert isinstance(scale, k8s.V1Scale)
    assert (scale.spec.replicas, scale.status.replicas, scale.status.selector) == (1, 0, "app=sc")
    scale.spec.replicas = 4
    out = apps.replace_namespaced_deployment_scale("sc", NS, scale)
    assert out.spec.replicas == 4
    assert apps.read_namespaced_deployment("sc", NS).spec.replicas == 4
    out = apps.patch_namespaced_deployment_scale("sc", NS, {"spec": {"replicas": 2}})
    assert out.spec.replicas == 2
    # a replace with a stale resourceVersion is refused
    with pytest.raises(ApiException) as stale:
        apps.replace_namespaced_deployment_scale("sc", NS, scale)
    assert stale.value.status == 409
    # an HPA created through autoscaling/v1 reads as v2, with its v1 managed fields
    v1 = k8s.AutoscalingV1Api(api).create_namespaced_horizontal_pod_autoscaler(NS, {
        "apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "sc"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "sc"},
                 "maxReplicas": 5, "targetCPUUtilizationPercentage": 70}},
        field_manager="py-autoscale")
    assert v1.spec.target_cpu_utilization_percentage == 70
    v2 = k8s.AutoscalingV2Api(api).read_namespaced_horizontal_pod_autoscaler("sc", NS)
    assert v2.spec.metrics[0].resource.target.average_utilization == 70
    [owner] = v2.metadata.managed_fields
    assert owner.api_version == "autoscaling/v1"
    assert "f:targetCPUUtilizationPercentage" in owner.fields_v1["f:spec"]
