"""Server-side apply never answers 409 for a race it lost itself: it re-reads and re-applies, as
kube-apiserver's patcher does; a 409 comes only from a precondition the client sent (a
resourceVersion in the applied object) or from field ownership. Through the official
`kubernetes` Python client, with 200 concurrent appliers and another writer in between."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

kubernetes = pytest.importorskip("kubernetes")

from kubernetes import client as k8s  # noqa: E402
from kubernetes import config as k8s_config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from pyhpa.cluster.apiserver import resources as R  # noqa: E402
from pyhpa.cluster.embedded import EmbeddedCluster  # noqa: E402
from tests import builders  # noqa: E402

pytestmark = pytest.mark.slow

NS = "default"
APPLY = "application/apply-patch+yaml"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    with EmbeddedCluster(tmp_path_factory.mktemp("ssa"), simulate=False) as c:
        cfg = k8s.Configuration()
        k8s_config.load_kube_config(config_file=str(c.kubeconfig_path), client_configuration=cfg)
        cfg.connection_pool_maxsize = 32
        with k8s.ApiClient(cfg) as api:
            yield c, k8s.AppsV1Api(api)


def manifest(name: str, image: str, **meta) -> dict:
    dep = builders.deployment(name, 1, namespace=None,
                              containers=[builders.container("web", image=image)])
    dep["metadata"].update(meta)
    return dep


def test_200_concurrent_forced_applies_get_no_conflict(cluster):
    c, apps = cluster
    apps.create_namespaced_deployment(NS, manifest("busy", "nginx:0"))
    stop = threading.Event()
    bumps = [0]

    def other_writer() -> None:
        """Another component writing the object every few milliseconds (a controller's
        status writes, much more often than any controller does)."""
        while not stop.wait(0.005):
            def bump(o):
                o["metadata"].setdefault("annotations", {})["bumped"] = str(bumps[0])
            c.store.guaranteed_update(R.DEPLOYMENTS.key, NS, "busy", bump)
            bumps[0] += 1

    def apply(i: int) -> int:
        try:
            apps.patch_namespaced_deployment("busy", NS, manifest("busy", f"nginx:{i}"),
                                             field_manager=f"applier-{i % 7}", force=True,
                                             _content_type=APPLY)
            return 200
        except ApiException as exc:
            return exc.status

    writer = threading.Thread(target=other_writer)
    writer.start()
    try:
        with ThreadPoolExecutor(max_workers=24) as pool:
            codes = list(pool.map(apply, range(200)))
    finally:
        stop.set()
        writer.join()
    assert bumps[0] > 0  # the other writer did write meanwhile
    assert codes.count(409) == 0 and set(codes) == {200}
    final = apps.read_namespaced_deployment("busy", NS)
    assert final.spec.template.spec.containers[0].image.startswith("nginx:")


def test_an_applied_resource_version_is_a_precondition(cluster):
    _c, apps = cluster
    created = apps.create_namespaced_deployment(NS, manifest("pinned", "nginx:1"))
    stale = created.metadata.resource_version
    apps.patch_namespaced_deployment("pinned", NS, manifest("pinned", "nginx:2"),
                                     field_manager="a", force=True, _content_type=APPLY)
    with pytest.raises(ApiException) as err:
        apps.patch_namespaced_deployment("pinned", NS,
                                         manifest("pinned", "nginx:3", resourceVersion=stale),
                                         field_manager="a", force=True, _content_type=APPLY)
    assert err.value.status == 409
    assert "the object has been modified" in err.value.body
    current = apps.read_namespaced_deployment("pinned", NS).metadata.resource_version
    done = apps.patch_namespaced_deployment("pinned", NS,
                                            manifest("pinned", "nginx:4", resourceVersion=current),
                                            field_manager="a", force=True, _content_type=APPLY)
    assert done.spec.template.spec.containers[0].image == "nginx:4"


def test_concurrent_applies_that_create_the_object_do_not_conflict(cluster):
    _c, apps = cluster

    def apply(i: int) -> int:
        try:
            apps.patch_namespaced_deployment("born", NS, manifest("born", f"nginx:{i}"),
                                             field_manager="creator", force=True,
                                             _content_type=APPLY)
            return 200
        except ApiException as exc:
            return exc.status

    with ThreadPoolExecutor(max_workers=16) as pool:
        codes = list(pool.map(apply, range(32)))
    assert set(codes) == {200}
