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
def test_a_shared_directory_keeps_its_mode_and_is_refused(tmp_path):
    """A directory of someone else's making is never chmod-ed; one others may write to is
    refused, saying why (a 1777 one stayed 1777, the cluster did not start in it)."""
    from pyhpa.cluster.apiserver.private_files import DataDirError, private_dir

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    try:
        private_dir(shared)
    except DataDirError as exc:
        assert "writable by other users (mode 1777)" in str(exc)
    else:
        raise AssertionError("a world-writable data dir was accepted")
    assert stat.S_IMODE(shared.stat().st_mode) == 0o1777
    readable = tmp_path / "readable"
    readable.mkdir()
    readable.chmod(0o755)
    assert private_dir(readable) == readable
    assert stat.S_IMODE(readable.stat().st_mode) == 0o755


def test_created_directories_are_owner_only_under_a_permissive_umask(tmp_path):
    from pyhpa.cluster.apiserver.private_files import private_dir, write_private

    old = os.umask(0)
    try:
        private_dir(tmp_path / "a" / "b" / "data")
        write_private(tmp_path / "k" / "l" / "kubeconfig", b"x")
    finally:
        os.umask(old)
    for d in ("a", "a/b", "a/b/data", "k", "k/l"):
        assert stat.S_IMODE((tmp_path / d).stat().st_mode) == 0o700, d


def test_kubeconfig_merges_into_an_existing_one(tmp_path):
    """As kind and minikube do: our cluster, user and context added (replacing old pyhpa
    ones), the user's other entries kept, ours the current context."""
    import yaml

    from pyhpa.cluster.apiserver.kubeconfig import KubeconfigError, write_plain

    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "prod",
        "clusters": [{"name": "prod", "cluster": {"server": "https://prod:6443"}},
                     {"name": "pyhpa", "cluster": {"server": "https://old:1"}}],
        "users": [{"name": "admin", "user": {"token": "t"}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "admin"}}]}))
    write_plain(path, "http://127.0.0.1:8080")
    doc = yaml.safe_load(path.read_text())
    assert doc["current-context"] == "pyhpa"
    assert [c["name"] for c in doc["clusters"]] == ["prod", "pyhpa"]
    assert doc["clusters"][1]["cluster"]["server"] == "http://127.0.0.1:8080"
    assert [u["name"] for u in doc["users"]] == ["admin", "pyhpa"]
    assert [c["name"] for c in doc["contexts"]] == ["prod", "pyhpa"]
    not_config = tmp_path / "notes.txt"
    not_config.write_text("- just\n- a list\n")
    try:
        write_plain(not_config, "http://127.0.0.1:8080")
    except KubeconfigError as exc:
        assert "not a kubeconfig" in str(exc)
    else:
        raise AssertionError("a file that is no kubeconfig was replaced")
    assert not_config.read_text() == "- just\n- a list\n"
