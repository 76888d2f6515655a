"""Who am I and what may I do: the review kinds behind ``kubectl auth can-i`` and ``auth whoami``.

The embedded cluster has one bearer token and it may do everything: its user is the kubeconfig's
(``pyhpa``) in the groups a cluster admin has, so its own reviews are allowed and its rules
review lists ``*``. A review made with impersonation headers (``kubectl auth can-i --as=bob``),
and a SubjectAccessReview about another user, are answered by the RBAC authorizer from the
stored roles and bindings (:mod:`.rbac`). The reviews are create-only and never stored (like
upstream's), so they are served as a provider beside the registry.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver.handlers.body import BodyError, decode_json
from pyhpa.cluster.apiserver import protobuf
from pyhpa.cluster.apiserver.handlers.scope import Target
from pyhpa.cluster.apiserver.kubeconfig import CONTEXT
from pyhpa.cluster.apiserver.rbac import Attributes, Authorizer, UserInfo
from pyhpa.cluster.apiserver.resources import Resource
from pyhpa.cluster.apiserver.status import APIError, not_found_path

Obj = dict[str, Any]

AUTHZ, AUTHN = "authorization.k8s.io", "authentication.k8s.io"
USERNAME = CONTEXT
GROUPS = ("system:masters", "system:authenticated")
REASON = "the embedded cluster's token may do everything"
USER_SCOPE_KEY = "pyhpa.user"  # the impersonated UserInfo the server put in the request scope

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


ADMIN = UserInfo(USERNAME, GROUPS)


def user_info(user: UserInfo = ADMIN) -> Obj:
    out: Obj = {"username": user.name, "groups": list(user.groups)}
    if user.extra:
        out["extra"] = {k: list(v) for k, v in user.extra.items()}
    return out


def _spec_of(raw: bytes) -> Obj:
    """The request's spec, from JSON or from the protobuf body kubectl 1.32+ sends."""
    try:
        if raw.startswith(protobuf.MAGIC):
            body: Any = protobuf.decode_object(raw)
        else:
            body = decode_json(raw) if raw.strip() else {}
    except (BodyError, protobuf.ProtobufError) as exc:
        raise APIError(400, "BadRequest", f"the review's body cannot be read: {exc}") from None
    spec = body.get("spec") if isinstance(body, dict) else None
    return spec if isinstance(spec, dict) else {}


def _attributes(spec: Obj) -> Attributes | None:
    res = spec.get("resourceAttributes")
    if isinstance(res, dict):
        return Attributes(str(res.get("verb") or ""), str(res.get("resource") or ""),
                          str(res.get("group") or ""), str(res.get("subresource") or ""),
                          str(res.get("namespace") or ""), str(res.get("name") or ""))
    non = spec.get("nonResourceAttributes")
    if isinstance(non, dict):
        return Attributes(str(non.get("verb") or ""), path=str(non.get("path") or ""),
                          resource_request=False)
    return None


def review_status(kind: str, user: UserInfo = ADMIN, spec: Obj | None = None,
                  authorizer: Authorizer | None = None) -> Obj:
    """The status of a review of ``kind`` by (or, for a SubjectAccessReview, about) ``user``."""
    if kind == "SelfSubjectReview":
        return {"userInfo": user_info(user)}
    if user == ADMIN or authorizer is None:
        if kind == "SelfSubjectRulesReview":
            return {"resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    "incomplete": False}
        return {"allowed": True, "reason": REASON}
    if kind == "SelfSubjectRulesReview":
        resource, non_resource = authorizer.rules_for(user, str((spec or {}).get("namespace")
                                                                or ""))
        return {"resourceRules": resource, "nonResourceRules": non_resource,
                "incomplete": False}
    attrs = _attributes(spec or {})
    if attrs is None:
        raise APIError(422, "Invalid", f'{kind}.authorization.k8s.io "" is invalid: '
                       "spec.resourceAttributes: Invalid value: \"null\": exactly one of "
                       "nonResourceAttributes or resourceAttributes must be specified")
    decision = authorizer.authorize(user, attrs)
    out: Obj = {"allowed": decision.allowed}
    if decision.reason:
        out["reason"] = decision.reason
    return out


def _subject(spec: Obj) -> UserInfo:
    """The user a SubjectAccessReview asks about."""
    groups = spec.get("groups")
    extra = spec.get("extra") if isinstance(spec.get("extra"), dict) else {}
    return UserInfo(str(spec.get("user") or ""),
                    tuple(str(g) for g in groups) if isinstance(groups, list) else (),
                    {str(k): tuple(v) for k, v in extra.items() if isinstance(v, list)})


class Reviews:
    """The provider handler: POST a review, get it back with its status filled in."""

    def __init__(self, authorizer: Authorizer | None = None) -> None:
        self.authorizer = authorizer

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
        user = request.scope.get(USER_SCOPE_KEY) or ADMIN
        if res in (SUBJECT_ACCESS_REVIEWS, LOCAL_SUBJECT_ACCESS_REVIEWS):
            subject = _subject(spec)
            user = ADMIN if subject == ADMIN else subject
        status = review_status(res.kind, user, spec, self.authorizer)
        out = {"kind": res.kind, "apiVersion": res.api_version(target.version),
               "metadata": {"creationTimestamp": None}, "status": status}
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
