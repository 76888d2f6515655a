"""Reading a request: its body (JSON, YAML or protobuf), its object, its query and its Accept.

Why together: every writing verb decodes a body and checks the object in it the same way, and
every reading verb parses the same selectors; upstream's handlers share these as well.
"""

from __future__ import annotations

import asyncio
import json
from types import MappingProxyType
from typing import Any, Awaitable, Callable

from starlette.requests import Request

from pyhpa.api.selectors import Selector
from pyhpa.cluster.apiserver import discovery, patch as patches, protobuf
from pyhpa.cluster.apiserver.connections import body_read_timeout
from pyhpa.cluster.apiserver.field_selectors import FieldSelector, FieldSelectorError
from pyhpa.cluster.apiserver.handlers.body import (BodyError, decode_json, decode_yaml,
                                                   yaml_duplicates)
from pyhpa.cluster.apiserver.handlers.scope import JSON, RequestScope, Target
from pyhpa.cluster.apiserver.status import APIError

Obj = dict[str, Any]
Receive = Callable[[], Awaitable[Obj]]
# upstream's MaxRequestBodyBytes: etcd's 1.5 MiB object limit with room for the encoding
MAX_BODY_BYTES = 3 * 1024 * 1024
# where the body's warnings wait in the request's scope for the server to add to the response
BODY_WARNINGS_KEY = "pyhpa.body_warnings"
# events.k8s.io/v1 field labels -> the stored core/v1 Event's paths
_EVENTS_V1_FIELDS = MappingProxyType({"regarding": ("involvedObject",), "reportingController": ("reportingComponent",)})


def body_too_large() -> APIError:
    return APIError(413, "RequestEntityTooLarge",
                    f"Request entity too large: limit is {MAX_BODY_BYTES}")


def header(request: Request, name: bytes) -> str | None:
    """The first value of the header ``name`` (lower case, as ASGI scopes hold names), read as
    Starlette's ``request.headers`` reads it but without building that (whose misses raise and
    catch a KeyError): for the headers every request is asked for."""
    for key, value in request.scope["headers"]:
        if key == name:
            return value.decode("latin-1")
    return None


def check_content_length(request: Request) -> None:
    """Refuse a body announced larger than :data:`MAX_BODY_BYTES` before reading any of it."""
    length = header(request, b"content-length")
    if length is not None and length.isdigit() and int(length) > MAX_BODY_BYTES:
        raise body_too_large()


def limit_body(receive: Receive) -> Receive:
    """``receive`` that raises a 413 once the body passes :data:`MAX_BODY_BYTES` (a chunked
    body announces no length), whoever reads it: a verb handler, a provider, DeleteOptions;
    and a 408 when the next part of an unfinished body does not come in time."""
    seen = 0
    done = False

    async def limited() -> Obj:
        nonlocal seen, done
        if done:  # the body is in: what remains is the disconnect, which may take hours
            return await receive()
        try:  # a timeout scope, not wait_for: that runs receive() as a task of its own, two
            # more turns of the event loop for a body that is already there
            async with asyncio.timeout(body_read_timeout()):
                message = await receive()
        except TimeoutError:
            raise APIError(408, "Timeout", f"Timeout: the request body did not arrive within "
                                           f"{body_read_timeout():g}s", None,
                           {"Connection": "close"}) from None
        if message.get("type") == "http.request":
            seen += len(message.get("body") or b"")
            if seen > MAX_BODY_BYTES:
                raise body_too_large()
            done = not message.get("more_body")
        else:
            done = True
        return message
    return limited


def wants_table(accept: str | None) -> bool:
    if not accept or "Table" not in accept:  # most requests: no header to parse
        return False
    for mt, params in discovery.parse_accept(accept):
        if params.get("as") == "Table" and params.get("g") == "meta.k8s.io":
            return True
        if mt in ("application/json", "*/*") and not params:
            return False
    return False


_BODY_TYPES = ("application/json", "application/yaml", protobuf.CONTENT_TYPE)


def unknown_format(accepted: tuple[str, ...]) -> APIError:
    return APIError(415, "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types "
                    f"include: {', '.join(accepted)}")


def _summary(raw: bytes) -> str:
    """upstream's summarizeData: the start of the body (as hex unless it is an object)."""
    if not raw:
        return "<empty>"
    head = raw[:30]
    text = head.decode(errors="replace") if raw[:1] == b"{" else head.hex()
    return text + (" ..." if len(raw) > 30 else "")


async def read_body(request: Request, t: Target, *, allow_protobuf: bool = True,
                    patch: bool = False) -> Any:
    """The request body as data, by its Content-Type (JSON when it names none; a ``patch`` names
    a patch type); a Status 400 for bytes that are not a document, 415 for a format the server
    does not read."""
    raw = await request.body()
    ctype = (request.headers.get("content-type") or JSON).split(";")[0].strip().lower()
    if ctype == protobuf.CONTENT_TYPE:
        if not allow_protobuf:
            raise unknown_format(_BODY_TYPES[:2])
        try:
            return protobuf.decode_object(raw)
        except protobuf.ProtobufError as exc:
            if "only supported" in str(exc) or "magic" in str(exc):
                raise APIError(415, "UnsupportedMediaType", str(exc)) from None
            raise APIError(400, "BadRequest", f"unable to decode protobuf body: {exc}") from None
    repeated: list[str] | None = None if patch else []
    try:
        if ctype == ("application/yaml" if not patch else patches.APPLY):
            data = decode_yaml(raw)
            if repeated is not None and data is not None:
                repeated += yaml_duplicates(raw)
        elif ctype == "application/json" or (patch and ctype in patches.PATCH_TYPES):
            data = decode_json(raw, repeated)
        else:
            raise unknown_format(_BODY_TYPES if allow_protobuf else _BODY_TYPES[:2])
    except BodyError as exc:
        kind = t.res.kind if t.res is not None else "object"
        raise APIError(400, "BadRequest", f"the object provided is unrecognized (must be of type "
                                          f"{kind}): {exc} ({_summary(raw)})") from None
    if repeated:
        _report_duplicates(request, t, repeated)
    return data


def _report_duplicates(request: Request, t: Target, repeated: list[str]) -> None:
    """Keys a body sets twice, as upstream's strict decoding reports them: a 400 under
    ``fieldValidation=Strict``, warnings (added to the response by the server) otherwise."""
    mode = request.query_params.get("fieldValidation", "")
    errors = [f'duplicate field "{path}"' for path in repeated]
    if mode == "Strict":
        kind = t.res.kind if t.res is not None else "object"
        raise APIError(400, "BadRequest", f'{kind} in version "{t.version}" cannot be handled '
                                          f"as a {kind}: strict decoding error: "
                                          f"{', '.join(errors)}")
    if mode != "Ignore":
        request.scope[BODY_WARNINGS_KEY] = errors


# upstream's cap on the warnings of one response (their total length)
_MAX_WARNINGS_LENGTH = 4096


def warning_header(messages: list[str]) -> str:
    """A ``Warning`` header of ``299 - "<message>"`` entries, quoted in ASCII (a field name may
    hold any character; a header may not) and cut off at upstream's total length."""
    out: list[str] = []
    total = 0
    for message in messages:
        total += len(message)
        if total > _MAX_WARNINGS_LENGTH:
            break
        out.append("299 - " + json.dumps(message))
    return ", ".join(out)


def decode_object(scope: RequestScope, t: Target, body: Any, mode: str,
                  headers: dict[str, str], *, url_name: str | None = None) -> Obj:
    """``body`` as the object of this URL, read as upstream's decoder reads it.

    Its kind and apiVersion must be this URL's, its values of the types the kind's schema gives
    (else a 400 in Go's words), and its namespace and name the URL's. A field the kind does not
    have is dropped and reported by ``mode`` (``fieldValidation``): a 400 under ``Strict``, a
    ``Warning`` header otherwise, nothing under ``Ignore``.
    """
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
    body, found = scope.strategy(t.res).conform(body, t.version, drop=True)
    if found.error is not None:
        raise APIError(400, "BadRequest", f'{t.res.kind} in version "{t.version}" cannot be '
                                          f"handled as a {t.res.kind}: {found.error}")
    if found.unknown and mode == "Strict":
        fields = ", ".join(f'unknown field "{f}"' for f in found.unknown)
        raise APIError(400, "BadRequest",
                       f'{t.res.kind} in version "{t.version}" cannot be handled as a '
                       f"{t.res.kind}: strict decoding error: {fields}")
    if found.unknown and mode != "Ignore":
        headers["Warning"] = warning_header([f'unknown field "{f}"' for f in found.unknown])
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
