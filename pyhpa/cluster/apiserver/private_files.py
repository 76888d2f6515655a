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


# Files only a directory this module made holds: one with any of them is ours to tighten.
_OURS = ("store.sqlite", "token", "ca.crt", "kubeconfig")


class DataDirError(OSError):
    """A directory the cluster may not keep its secrets in (the message says why)."""


def make_dirs(path: Path) -> Path:
    """``path`` and its missing parents, each created owner-only (0700) whatever the umask;
    directories that already exist keep their modes."""
    path = Path(path)
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for made in reversed(missing):
        try:
            made.mkdir(mode=DIR_MODE)
        except FileExistsError:
            continue
        os.chmod(made, DIR_MODE)
    return Path(missing[0]) if missing else path


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner may enter: created 0700 (missing parents too),
    or tightened to 0700 when it already holds this cluster's files. A directory of someone
    else's making keeps its mode (a shared 1777 one must stay so); one that other users may
    write to is refused (:class:`DataDirError`): they could replace what it holds."""
    path = Path(path)
    if not path.exists():
        return make_dirs(path)
    if not path.is_dir():
        raise DataDirError(f"{path} is not a directory")
    if any((path / name).exists() for name in _OURS):
        os.chmod(path, DIR_MODE)
        return path
    mode = path.stat().st_mode & 0o7777
    if mode & 0o022:
        raise DataDirError(f"{path} is writable by other users (mode {mode:o}); the cluster "
                           "keeps its CA key and token there: give a new directory, or one "
                           "only you can write to")
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
    make_dirs(path.parent)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, FILE_MODE)
    with os.fdopen(fd, "wb") as fh:
        os.fchmod(fh.fileno(), FILE_MODE)
        fh.write(data)
    os.replace(tmp, path)
    return path
