"""Who am I and what may I do: the review kinds behind ``kubectl auth can-i`` and ``auth whoami``.

Why answers without a policy engine: the embedded cluster has one bearer token and it may do
everything, so every access review is allowed and the rules review lists ``*``. The reviews are
create-only and never stored (like upstream's), so they are served as a provider beside the
registry. The user is the kubeconfig's (``pyhpa``) in the groups a cluster admin has.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver.handlers.body import BodyError, decode_json
from pyhpa.cluster.apiserver.handlers.scope import Target
from pyhpa.cluster.apiserver.kubeconfig import CONTEXT
from pyhpa.cluster.apiserver.resources import Resource
from pyhpa.cluster.apiserver.status import APIError, not_found_path

Obj = dict[str, Any]

AUTHZ, AUTHN = "authorization.k8s.io", "authentication.k8s.io"
USERNAME = CONTEXT
GROUPS = ("system:masters", "system:authenticated")
REASON = "the embedded cluster's token may do everything"

_VIRTUAL = MappingProxyType({"virtual": True})  # never stored (the garbage collector skips these)
_CREATE = ("create",)
SELF_SUBJECT_ACCESS_REVIEWS = Resource(AUTHZ, ("v1",), "selfsubjectaccessreviews",
                                       "SelfSubjectAccessReview", namespaced=False, verbs=_CREATE,
                                       extra=_VIRTUAL)
SELF_SUBJECT_RULES_REVIEWS = Resource(AUTHZ, ("v1",), "selfsubjectrulesreviews",
                                      "SelfSubjectRulesReview", namespaced=False, verbs=_CREATE,
                                      extra=_VIRTUAL)
SUBJECT_ACCESS_REVIEWS = Resource(AUTHZ, ("v1",), "subjectaccessreviews", "SubjectAccessReview",
                                  namespaced=False, verbs=_CREATE, extra=_VIRTUAL)
LOCAL_SUBJECT_ACCESS_REVIEWS = Resource(AUTHZ, ("v1",), "localsubjectaccessreviews",
                                        "LocalSubjectAccessReview", verbs=_CREATE, extra=_VIRTUAL)
# kubectl 1.27 asks v1beta1 (then v1alpha1); 1.28+ ask v1 first.
SELF_SUBJECT_REVIEWS = Resource(AUTHN, ("v1", "v1beta1"), "selfsubjectreviews",
                                "SelfSubjectReview", namespaced=False, verbs=_CREATE,
                                extra=_VIRTUAL)


def user_info() -> Obj:
    return {"username": USERNAME, "groups": list(GROUPS)}


def _spec_of(raw: bytes) -> Obj:
    """The request's spec when it is JSON; a protobuf body (kubectl 1.32+) is not needed to
    answer, since the answer does not depend on it."""
    try:
        body = decode_json(raw) if raw.strip() else {}
    except BodyError:
        return {}
    spec = body.get("spec") if isinstance(body, dict) else None
    return spec if isinstance(spec, dict) else {}


def review_status(kind: str) -> Obj:
    """The status every review of ``kind`` gets."""
    if kind == "SelfSubjectReview":
        return {"userInfo": user_info()}
    if kind == "SelfSubjectRulesReview":
        return {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": False}
    return {"allowed": True, "reason": REASON}


class Reviews:
    """The provider handler: POST a review, get it back with its status filled in."""

    async def __call__(self, request: Request, target: Target) -> Response:
        res = target.res
        if res is None or target.name is not None:
            raise not_found_path()
        if request.method != "POST":
            raise APIError(405, "MethodNotAllowed",
                           "the server does not allow this method on the requested resource")
        spec = _spec_of(await request.body())
        if res is LOCAL_SUBJECT_ACCESS_REVIEWS:
            attrs = spec.get("resourceAttributes")
            if isinstance(attrs, dict) and attrs.get("namespace", target.namespace) \
                    != target.namespace:
                raise APIError(400, "BadRequest",
                               "spec.resourceAttributes.namespace must match the namespace of "
                               "the request")
        out = {"kind": res.kind, "apiVersion": res.api_version(target.version),
               "metadata": {"creationTimestamp": None}, "status": review_status(res.kind)}
        if res is not SELF_SUBJECT_REVIEWS:
            out["spec"] = spec
        return Response(json.dumps(out).encode(), status_code=201, media_type="application/json")


# What the server serves with a :class:`Reviews` handler: (group, version, resources).
GROUP_VERSIONS: tuple[tuple[str, str, tuple[Resource, ...]], ...] = (
    (AUTHZ, "v1", (SELF_SUBJECT_ACCESS_REVIEWS, SELF_SUBJECT_RULES_REVIEWS, SUBJECT_ACCESS_REVIEWS,
                   LOCAL_SUBJECT_ACCESS_REVIEWS)),
    (AUTHN, "v1", (SELF_SUBJECT_REVIEWS,)),
    (AUTHN, "v1beta1", ()),
)
