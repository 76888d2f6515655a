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
    return _write_merged(path, render(server, Path(ca_path).read_bytes(), token))


def write_plain(path: Path, server: str) -> Path:
    return _write_merged(path, render_plain(server))


class KubeconfigError(ValueError):
    """An existing file at the kubeconfig path that is not a kubeconfig to merge into."""


def _write_merged(path: Path, text: str) -> Path:
    """Write our kubeconfig at ``path``; an existing one keeps its other entries, as kind and
    minikube merge theirs: our ``pyhpa`` cluster, user and context replace any of that name,
    and become the current context."""
    path = Path(path)
    try:
        old_text = path.read_text()
    except FileNotFoundError:
        return write_private(path, text.encode())
    except (OSError, UnicodeDecodeError) as exc:
        raise KubeconfigError(f"cannot read the existing kubeconfig {path}: {exc}") from None
    try:
        old = goyaml.load(old_text) if old_text.strip() else {}
    except ValueError as exc:
        raise KubeconfigError(f"refusing to replace {path}: it is not a kubeconfig "
                              f"({exc})") from None
    if old is None:
        old = {}
    if not isinstance(old, dict) or old.get("kind", "Config") != "Config":
        raise KubeconfigError(f"refusing to replace {path}: it is not a kubeconfig "
                              "(kind: Config)")
    ours = goyaml.load(text)
    merged = dict(old)
    for section in ("clusters", "users", "contexts"):
        kept = old.get(section) or []
        if not isinstance(kept, list):
            raise KubeconfigError(f"refusing to replace {path}: its {section} is not a list")
        kept = [e for e in kept if not (isinstance(e, dict) and e.get("name") == CONTEXT)]
        merged[section] = kept + ours[section]
    merged["apiVersion"], merged["kind"] = "v1", "Config"
    merged["current-context"] = CONTEXT
    merged.setdefault("preferences", {})
    return write_private(path, goyaml.dump(merged).encode())
