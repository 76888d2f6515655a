"""The data dir is private: 0700, and every file in it (store, WAL, CA, token, kubeconfig) 0600,
whatever the umask of the process that started the cluster; and a cluster started without one
leaves nothing behind."""

from __future__ import annotations

import os
import socket
import stat
import tempfile
from pathlib import Path

import pytest

from pyhpa.adapters.listen import ListenError
from pyhpa.cluster.apiserver import resources as R
from pyhpa.cluster.embedded import EmbeddedCluster


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
        with EmbeddedCluster(data, simulate=False) as c:
            c.store.create(R.NAMESPACES.key, {"metadata": {"name": "private"}})
            modes = _assert_private(data)  # while serving: the WAL and its index exist
            assert {"store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "token",
                    "kubeconfig", "tls/ca.crt", "tls/ca.key", "tls/server.key"} <= set(modes)
        _assert_private(data)
    finally:
        os.umask(old)


def test_files_an_older_version_left_readable_are_tightened_on_start(tmp_path):
    data = tmp_path / "data"
    with EmbeddedCluster(data, simulate=False):
        pass
    for p in [data, *data.rglob("*")]:
        p.chmod(0o755 if p.is_dir() else 0o644)
    with EmbeddedCluster(data, simulate=False):
        _assert_private(data)


def test_without_a_data_dir_a_temporary_one_is_removed_at_the_end_even_of_a_failed_start(
        tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with EmbeddedCluster(simulate=False, temporary_prefix="pyhpa-test-") as c:
        assert c.data_dir.parent == tmp_path and c.data_dir.name.startswith("pyhpa-test-")
        assert (c.data_dir / "store.sqlite").exists()
    assert list(tmp_path.iterdir()) == []
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        with pytest.raises(ListenError):
            with EmbeddedCluster(port=busy.getsockname()[1], simulate=False):
                pass
    assert list(tmp_path.iterdir()) == []
