"""Whether the server keeps an HPA status field, from its OpenAPI v3 schema (the decision trace is
written where the server serves status.lastScaleDecision, whatever started the cluster)."""

from __future__ import annotations

from pyhpa.adapters.kube.client import ApiError
from pyhpa.adapters.kube.discovery import serves_status_field

GVK = [{"group": "autoscaling", "version": "v2", "kind": "HorizontalPodAutoscaler"}]


class _Server:
    def __init__(self, doc=None):
        self.doc = doc
        self.paths = []

    async def get(self, path, typ=dict, params=None):
        self.paths.append(path)
        if self.doc is None:
            raise ApiError(404, "NotFound", "not found", path)
        return self.doc


def _doc(status_properties, by_ref=True):
    status = {"properties": dict.fromkeys(status_properties, {"type": "string"})}
    hpa = {"x-kubernetes-group-version-kind": GVK, "properties": {
        "status": {"allOf": [{"$ref": "#/components/schemas/Status"}]} if by_ref else status}}
    return {"components": {"schemas": {"HPA": hpa, "Status": status}}}


async def test_a_served_field_is_found_through_references():
    server = _Server(_doc(["desiredReplicas", "lastScaleDecision"]))
    assert await serves_status_field(server, "autoscaling/v2", "HorizontalPodAutoscaler", "lastScaleDecision")
    assert server.paths == ["/openapi/v3/apis/autoscaling/v2"]
    assert await serves_status_field(_Server(_doc(["lastScaleDecision"], by_ref=False)), "autoscaling/v2",
                                     "HorizontalPodAutoscaler", "lastScaleDecision")


async def test_an_upstream_schema_or_no_schema_means_not_served():
    assert not await serves_status_field(_Server(_doc(["desiredReplicas"])), "autoscaling/v2",
                                         "HorizontalPodAutoscaler", "lastScaleDecision")
    assert not await serves_status_field(_Server(None), "autoscaling/v2", "HorizontalPodAutoscaler", "lastScaleDecision")
    assert not await serves_status_field(_Server(_doc(["lastScaleDecision"])), "pyhpa.io/v1",
                                         "HorizontalPodAutoscaler", "lastScaleDecision")
