"""The kubeconfig that points kubectl (or pyhpa's own client) at the embedded cluster.

It carries the CA inline (``certificate-authority-data``) and the bearer token, so the file works
on its own, wherever it is copied.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from pyhpa.api import goyaml

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


def write(path: Path, server: str, ca_path: Path, token: str) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(render(server, Path(ca_path).read_bytes(), token))
    os.replace(tmp, path)
    return path
