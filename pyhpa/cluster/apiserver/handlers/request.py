"""Reading a request: its body (JSON, YAML or protobuf), its object, its query and its Accept.

Why together: every writing verb decodes a body and checks the object in it the same way, and
every reading verb parses the same selectors; upstream's handlers share these as well.
"""

from __future__ import annotations

import json
from typing import Any, Awaitable, Callable

from starlette.requests import Request

from pyhpa.api import goyaml
from pyhpa.api.selectors import Selector
from pyhpa.cluster.apiserver import discovery, patch as patches, protobuf
from pyhpa.cluster.apiserver.field_selectors import FieldSelector, FieldSelectorError
from pyhpa.cluster.apiserver.handlers.scope import JSON, RequestScope, Target
from pyhpa.cluster.apiserver.status import APIError

Obj = dict[str, Any]
Receive = Callable[[], Awaitable[Obj]]
# upstream's MaxRequestBodyBytes: etcd's 1.5 MiB object limit with room for the encoding
MAX_BODY_BYTES = 3 * 1024 * 1024
# events.k8s.io/v1 field labels -> the stored core/v1 Event's paths
_EVENTS_V1_FIELDS = {"regarding": ("involvedObject",), "reportingController": ("reportingComponent",)}


def body_too_large() -> APIError:
    return APIError(413, "RequestEntityTooLarge",
                    f"Request entity too large: limit is {MAX_BODY_BYTES}")


def check_content_length(request: Request) -> None:
    """Refuse a body announced larger than :data:`MAX_BODY_BYTES` before reading any of it."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise body_too_large()


def limit_body(receive: Receive) -> Receive:
    """``receive`` that raises a 413 once the body passes :data:`MAX_BODY_BYTES` (a chunked
    body announces no length), whoever reads it: a verb handler, a provider, DeleteOptions."""
    seen = 0

    async def limited() -> Obj:
        nonlocal seen
        message = await receive()
        if message.get("type") == "http.request":
            seen += len(message.get("body") or b"")
            if seen > MAX_BODY_BYTES:
                raise body_too_large()
        return message
    return limited


def bool_param(v: str | None) -> bool:
    return (v or "").lower() in ("true", "1")


def wants_table(accept: str | None) -> bool:
    for mt, params in discovery.parse_accept(accept):
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return True
        if mt in ("application/json", "*/*") and not params:
            return False
    return False


def _undecodable(exc: Exception) -> APIError:
    return APIError(400, "BadRequest", f"the body of the request could not be decoded: {exc}")


def parse_yaml_body(raw: bytes) -> Any:
    """A YAML body (``application/yaml``, apply patches) as data, read as the API server's
    sigs.k8s.io/yaml reads it (an unquoted date stays a string); a 400 when it is not YAML."""
    try:
        return goyaml.load(raw.decode() or "null")
    except ValueError as exc:
        raise _undecodable(exc) from None


async def read_body(request: Request, *, allow_protobuf: bool = True) -> Any:
    """The request body as data, by its Content-Type (JSON when it names none)."""
    raw = await request.body()
    ctype = (request.headers.get("content-type") or JSON).split(";")[0].strip().lower()
    if ctype == protobuf.CONTENT_TYPE:
        if not allow_protobuf:
            raise APIError(415, "UnsupportedMediaType",
                           f"the body of the request was in an unknown format - accepted "
                           f"media types include: application/json, application/yaml")
        try:
            return protobuf.decode_object(raw)
        except protobuf.ProtobufError as exc:
            if "only supported" in str(exc) or "magic" in str(exc):
                raise APIError(415, "UnsupportedMediaType", str(exc)) from None
            raise APIError(400, "BadRequest", f"unable to decode protobuf body: {exc}") from None
    if ctype in ("application/yaml", patches.APPLY):
        return parse_yaml_body(raw)
    try:
        return json.loads(raw or b"null")
    except ValueError as exc:
        raise _undecodable(exc) from None


def check_object(t: Target, body: Any, *, url_name: str | None = None) -> Obj:
    """``body`` as the object of this URL: its kind, apiVersion, namespace and name agree."""
    if not isinstance(body, dict):
        raise APIError(400, "BadRequest", "the body of the request must be a JSON object")
    want_av = t.res.api_version(t.version)
    av, kind = body.get("apiVersion"), body.get("kind")
    if (av and av != want_av) or (kind and kind != t.res.kind):
        raise APIError(400, "BadRequest",
                       f"the API version in the data ({av}) does not match the expected API "
                       f"version ({want_av})" if av and av != want_av else
                       f"the kind in the data ({kind}) does not match the expected kind "
                       f"({t.res.kind})")
    meta = body.get("metadata")
    if meta is None:
        meta = body["metadata"] = {}
    if not isinstance(meta, dict):
        raise APIError(400, "BadRequest", "metadata: must be an object")
    if t.res.namespaced:
        ns = meta.get("namespace")
        if ns and ns != t.namespace:
            raise APIError(400, "BadRequest", "the namespace of the provided object does not "
                                              "match the namespace sent on the request")
        meta["namespace"] = t.namespace
    else:
        meta.pop("namespace", None)
    if url_name is not None and meta.get("name") and meta["name"] != url_name:
        raise APIError(400, "BadRequest", f"the name of the object ({meta['name']}) does not "
                                          f"match the name on the URL ({url_name})")
    if url_name is not None:
        meta["name"] = url_name
    return body


def field_validation(scope: RequestScope, request: Request, t: Target, obj: Obj,
                     headers: dict[str, str]) -> None:
    """``fieldValidation``: unknown fields fail the request (Strict), warn (the default) or pass."""
    mode = request.query_params.get("fieldValidation", "")
    if mode.lower() == "ignore":
        return
    unknown = scope.strategy(t.res).unknown_fields(obj, t.version)
    if not unknown:
        return
    if mode.lower() == "strict":
        fields = ", ".join(f'unknown field "{f}"' for f in unknown)
        raise APIError(400, "BadRequest",
                       f'{t.res.kind} in version "{t.version}" cannot be handled as a '
                       f"{t.res.kind}: strict decoding error: {fields}")
    headers["Warning"] = ", ".join(f'299 - "unknown field \\"{f}\\""' for f in unknown)


def selectors(request: Request, t: Target) -> tuple[Any, Any]:
    """The request's ``labelSelector`` and ``fieldSelector`` (None when absent)."""
    q = request.query_params
    ls = q.get("labelSelector") or None
    fs_text = q.get("fieldSelector") or None
    label = None
    if ls:
        try:
            label = Selector.parse(ls)
        except Exception as exc:  # noqa: BLE001 - SelectorError and friends
            raise APIError(400, "BadRequest",
                           f"unable to parse requirement: {exc}") from None
    field = None
    if fs_text:
        try:
            field = FieldSelector.parse(fs_text)
        except FieldSelectorError as exc:
            raise APIError(400, "BadRequest", str(exc)) from None
        allowed = t.res.selectable_fields()
        for term in field.terms:
            name = ".".join(term.path)
            if name not in allowed:
                raise APIError(400, "BadRequest", f"field label not supported: {name}")
        if t.res.group == "events.k8s.io":  # field names of the served version
            field = FieldSelector([type(term)(_EVENTS_V1_FIELDS.get(
                term.path[0], (term.path[0],)) + term.path[1:], term.op, term.value)
                for term in field.terms])
    return label, field


def grace_period(opts: Obj, query: Any) -> int | None:
    """DeleteOptions.gracePeriodSeconds from the body or the query (negative means 1, as upstream)."""
    raw = opts.get("gracePeriodSeconds")
    if raw is None:
        raw = query.get("gracePeriodSeconds")
    if raw is None or raw == "":
        return None
    try:
        grace = int(raw)
    except (TypeError, ValueError):
        raise APIError(400, "BadRequest",
                       f"gracePeriodSeconds: must be an integer, got {raw!r}") from None
    return 1 if grace < 0 else grace
