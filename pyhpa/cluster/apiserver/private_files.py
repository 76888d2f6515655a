"""Files only the cluster's user may read: the data dir 0700, every file in it 0600.

Why explicit modes instead of trusting the umask: the data dir holds the CA key, the bearer
token, a kubeconfig carrying that token and every stored object; a umask of 022 (or 000) must
not make them readable by others. Each helper sets the mode after creating, so the umask never
decides it.
"""

from __future__ import annotations

import os
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def private_dir(path: Path) -> Path:
    """``path`` (and missing parents) as a directory only its owner may enter."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, DIR_MODE)
    return path


def private_file(path: Path) -> Path:
    """``path`` created empty if missing, readable and writable by its owner only."""
    path = Path(path)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
    return path


def restrict(path: Path) -> None:
    """Make an existing file owner-only (one written before these rules); absent is fine."""
    try:
        os.chmod(path, FILE_MODE)
    except FileNotFoundError:
        pass


def write_private(path: Path, data: bytes) -> Path:
    """Replace ``path`` atomically with ``data``, owner-only from its first byte."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fh.fileno(), FILE_MODE)
        fh.write(data)
    os.replace(tmp, path)
    return path
