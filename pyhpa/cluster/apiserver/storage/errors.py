"""The store's errors; the API server turns each into a Kubernetes Status.

Why their own module: the store raises them, and every caller of the store (the API handlers,
the simulated controllers) catches them, without needing the store's machinery.
"""

from __future__ import annotations


class StoreError(Exception):
    """Base of store errors; the server turns each into a Kubernetes Status."""

    code = 500
    reason = "InternalError"

    def __init__(self, key: str, namespace: str, name: str, message: str = "") -> None:
        super().__init__(message or f"{key} {namespace}/{name}")
        self.key, self.namespace, self.name = key, namespace, name


class NotFound(StoreError):
    code, reason = 404, "NotFound"


class AlreadyExists(StoreError):
    code, reason = 409, "AlreadyExists"


class Conflict(StoreError):
    """The caller's resourceVersion (or uid) precondition does not match the stored object."""

    code, reason = 409, "Conflict"


class Expired(StoreError):
    """A watch asked for a resourceVersion older than the kept history (HTTP 410)."""

    code, reason = 410, "Expired"


class BadRequest(StoreError):
    code, reason = 400, "BadRequest"



class TooLarge(StoreError):
    """An object whose encoding passes the store's size limit (etcd's request limit)."""

    code, reason = 413, "RequestEntityTooLarge"
