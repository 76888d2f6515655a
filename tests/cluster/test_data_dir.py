"""The data dir is private: 0700, and every file in it (store, WAL, CA, token, kubeconfig) 0600,
whatever the umask of the process that started the cluster."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.embedded import ThreadedCluster


def _modes(root: Path) -> dict[str, int]:
    out = {".": stat.S_IMODE(root.stat().st_mode)}
    for p in root.rglob("*"):
        out[str(p.relative_to(root))] = stat.S_IMODE(p.stat().st_mode)
    return out


def _assert_private(root: Path) -> dict[str, int]:
    modes = _modes(root)
    wrong = {name: oct(mode) for name, mode in modes.items()
             if mode != (0o700 if (root / name).is_dir() else 0o600)}
    assert not wrong, wrong
    return modes


def test_data_dir_and_its_files_are_owner_only_under_a_permissive_umask(tmp_path):
    data = tmp_path / "data"
    old = os.umask(0)
    try:
        with ThreadedCluster(data, simulate=False) as c:
            c.store.create(R.NAMESPACES.key, {"metadata": {"name": "private"}})
            modes = _assert_private(data)  # while serving: the WAL and its index exist
            assert {"store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "token",
                    "kubeconfig", "tls/ca.crt", "tls/ca.key", "tls/server.key"} <= set(modes)
        _assert_private(data)
    finally:
        os.umask(old)


def test_files_an_older_version_left_readable_are_tightened_on_start(tmp_path):
    data = tmp_path / "data"
    with ThreadedCluster(data, simulate=False):
        pass
    for p in [data, *data.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    with ThreadedCluster(data, simulate=False):
        _assert_private(data)
