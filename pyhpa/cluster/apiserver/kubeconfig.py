"""The kubeconfig that points kubectl (or pyhpa's own client) at the embedded cluster.

It carries the CA inline (``certificate-authority-data``) and the bearer token, so the file works
on its own, wherever it is copied.
"""

from __future__ import annotations

import base64
from pathlib import Path

from pyhpa.api import goyaml

from pyhpa.cluster.apiserver.private_files import write_private

CONTEXT = "pyhpa"


def render(server: str, ca_pem: bytes, token: str, namespace: str = "default") -> str:
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": CONTEXT, "cluster": {
            "server": server,
            "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "users": [{"name": CONTEXT, "user": {"token": token}}],
        "contexts": [{"name": CONTEXT, "context": {
            "cluster": CONTEXT, "user": CONTEXT, "namespace": namespace}}],
        "current-context": CONTEXT,
        "preferences": {},
    }
    return goyaml.dump(doc)


def render_plain(server: str, namespace: str = "default") -> str:
    """A kubeconfig for a plain-http server (no CA to pin, no token to send)."""
    doc = {"apiVersion": "v1", "kind": "Config",
           "clusters": [{"name": CONTEXT, "cluster": {"server": server}}],
           "users": [{"name": CONTEXT, "user": {}}],
           "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT,
                                                      "namespace": namespace}}],
           "current-context": CONTEXT}
    return goyaml.dump(doc)


def write(path: Path, server: str, ca_path: Path, token: str) -> Path:
    return write_private(path, render(server, Path(ca_path).read_bytes(), token).encode())


def write_plain(path: Path, server: str) -> Path:
    return write_private(path, render_plain(server).encode())
