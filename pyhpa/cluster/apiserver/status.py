"""Errors as the API reports them: a ``metav1.Status`` body with code, reason and details.

Why one module low in the package: handlers, strategies, schema validation and the providers
(reviews, the metrics APIs) all raise these, and none of them needs the server to do so.
"""

from __future__ import annotations

from typing import Any

import msgspec
from starlette.responses import Response


Obj = dict[str, Any]
_encode = msgspec.json.Encoder().encode


class APIError(Exception):
    """Raised anywhere in a handler; becomes a metav1.Status response."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details
        self.headers = headers  # of the response (Retry-After)

    def status(self) -> Obj:
        out: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": self.message, "reason": self.reason}
        if self.details is not None:
            out["details"] = self.details
        out["code"] = self.code
        return out


def status_response(status: Obj, headers: dict[str, str] | None = None) -> Response:
    return Response(_encode(status), status_code=status.get("code", 500),
                    media_type="application/json", headers=headers)


def not_found_path() -> APIError:
    return APIError(404, "NotFound", "the server could not find the requested resource", {})


class Invalid(Exception):
    """A 422 Invalid with field causes, rendered like the apiserver's StatusError."""

    def __init__(self, kind: str, group: str, name: str, causes: list[dict[str, str]]) -> None:
        self.kind, self.group, self.name, self.causes = kind, group, name, causes
        qual = f"{kind}.{group}" if group else kind
        parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
        body = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
        self.message = f'{qual} "{name}" is invalid: {body}'
        super().__init__(self.message)

    def status(self) -> Obj:
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": "Invalid",
                "details": {"name": self.name, "group": self.group, "kind": self.kind,
                            "causes": self.causes},
                "code": 422}
