"""The health endpoints ``/livez``, ``/readyz`` and ``/healthz``, as upstream answers them.

Why open without a token: probes (and ``kubectl get --raw /readyz``) ask before they hold
credentials, as upstream allows them to. Why a failed check's reason is withheld from them:
it may carry internal detail (an exception's text); upstream never shows it on these public
endpoints. A request with the token sees it, since it can read everything anyway.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from starlette.requests import Request
from starlette.responses import Response

from pyhpa.cluster.apiserver.status import not_found_path



@dataclass(frozen=True)
class Degraded:
    """What a check answers when parts of what it covers are left out while the rest works
    (objects the simulation cannot handle): each item is listed as a ``[-]`` line of
    ``?verbose``, but the endpoint does not fail, so clients keep using the server."""

    items: tuple[str, ...]


Check = Callable[[], "str | Degraded | None"]  # None when fine, else why not
OPEN_PATHS = frozenset({"/healthz", "/readyz", "/livez"})
_HEALTH_PREFIXES = tuple(p + "/" for p in OPEN_PATHS)


def health_path(path: str) -> tuple[str, str | None] | None:
    """("readyz", None) for /readyz, ("readyz", "ping") for /readyz/ping; None otherwise."""
    if path in OPEN_PATHS:
        return path[1:], None
    if not path.startswith(_HEALTH_PREFIXES):
        return None  # every API request: keep this cheap
    parts = [p for p in path.split("/") if p]
    if parts and "/" + parts[0] in OPEN_PATHS and len(parts) <= 2:
        return parts[0], parts[1] if len(parts) == 2 else None
    return None


def health_response(request: Request, endpoint: str, only: str | None,
                    checks: dict[str, Check], *, reveal: bool = False) -> Response:
    """``ok``, ``?verbose`` lists ``[+]name ok`` per check, ``?exclude=name`` skips one,
    ``/readyz/<name>`` runs one; a failure answers 500. A failed check's reason, and the
    objects a degraded one leaves out, are shown only when ``reveal`` (the caller holds the
    token), else ``reason withheld`` as upstream (and a count of the objects)."""
    if only is not None:
        if only not in checks:
            raise not_found_path()
        checks = {only: checks[only]}
    excluded = set(request.query_params.getlist("exclude"))
    lines, failed = [], False
    for name, check in checks.items():
        if name in excluded:
            lines.append(f"[+]{name} excluded: ok")
            continue
        try:
            reason = check()
        except Exception as exc:  # noqa: BLE001 - a crashing check is a failing check
            reason = repr(exc)
        if isinstance(reason, Degraded):  # object names and fields: only for the token
            lines.extend(f"[-]{name}: {item}" for item in reason.items) if reveal else \
                lines.append(f"[-]{name}: {len(reason.items)} left out (names withheld)")
            continue
        failed = failed or reason is not None
        shown = reason if reveal else "reason withheld"
        lines.append(f"[+]{name} ok" if reason is None else f"[-]{name} failed: {shown}")
    verbose = "verbose" in request.query_params
    if not failed and not verbose:
        return Response(b"ok", media_type="text/plain")
    word = "failed" if failed else "passed"
    label = endpoint if only is None else f"{endpoint}/{only}"
    text = "\n".join(lines) + f"\n{label} check {word}\n"
    return Response(text.encode(), status_code=500 if failed else 200, media_type="text/plain")
