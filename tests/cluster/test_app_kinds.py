"""ConfigMap/Secret/PDB/Ingress write rules and columns (:mod:`pyhpa.cluster.apiserver.app_kinds`,
:mod:`.app_columns`), and Secret values never reaching the server's output."""

from __future__ import annotations

import base64
import ssl

import httpx
import pytest

from pyhpa.cluster.apiserver import app_columns as cols
from pyhpa.cluster.apiserver import resources as R
from pyhpa.api.names import is_config_map_key
from pyhpa.cluster.apiserver.app_kinds import ConfigMapStrategy, SecretStrategy
from pyhpa.cluster.apiserver.status import APIError
from pyhpa.cluster.embedded import EmbeddedCluster


def test_config_keys_follow_is_config_map_key():
    assert is_config_map_key("app.properties") == []
    assert is_config_map_key("..") == ["must not be '..'"]
    assert is_config_map_key("..x") == ["must not start with '..'"]
    assert "a valid config key" in is_config_map_key("a/b")[0]
    assert is_config_map_key("x" * 254) == ["must be no more than 253 characters"]


def test_secret_string_data_is_merged_and_wins_over_data():
    s = SecretStrategy(R.SECRETS)
    obj = s.to_storage({"metadata": {"name": "s", "namespace": "default"}, "data": {"a": "MQ==", "b": "Mg=="},
                        "stringData": {"b": "two"}}, "v1")
    assert obj["data"] == {"a": "MQ==", "b": base64.b64encode(b"two").decode()}
    assert "stringData" not in obj and obj["type"] == "Opaque"
    with pytest.raises(APIError) as err:
        s.to_storage({"metadata": {"name": "s", "namespace": "default"}, "data": {"a": 5}}, "v1")
    assert "cannot unmarshal number into Go struct field Secret.data of type []uint8" in err.value.message
    old = s.to_storage({"metadata": {"name": "s", "namespace": "default"}, "type": "Opaque", "data": {}}, "v1")
    new = s.to_storage({"metadata": {"name": "s", "namespace": "default"}, "type": "kubernetes.io/tls", "data": {}}, "v1")
    assert [c["message"] for c in s.validate(new, old)] == [
        'Invalid value: "kubernetes.io/tls": field is immutable']


def test_immutable_config_map_data_cannot_change():
    s = ConfigMapStrategy(R.CONFIG_MAPS)
    old = {"metadata": {"name": "c", "namespace": "default"}, "immutable": True, "data": {"a": "1"}}
    new = {"metadata": {"name": "c", "namespace": "default"}, "immutable": True, "data": {"a": "2"}}
    assert [c["field"] for c in s.validate(new, old)] == ["data"]
    dup = {"metadata": {"name": "c", "namespace": "default"}, "data": {"a": "1"}, "binaryData": {"a": "MQ=="}}
    assert "duplicate of key present in binaryData" in s.validate(dup, None)[0]["message"]


def test_ingress_hosts_cell_shows_three_then_counts_the_rest():
    ing = {"spec": {"rules": [{"host": f"h{i}.example"} for i in range(5)]}}
    assert cols._hosts(ing, 0) == "h0.example,h1.example,h2.example + 2 more..."
    assert cols._hosts({"spec": {"rules": [{"http": {}}]}}, 0) == "*"
    assert cols._ports({"spec": {"tls": [{}]}}, 0) == "80, 443"
    lb = {"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}, {"hostname": "lb.example.com"}]}}}
    assert cols._address(lb, 0) == "10.0.0.1,lb.exam..."  # 16 characters, then ...


def test_secret_values_never_reach_the_server_output(tmp_path, capfd, caplog):
    caplog.set_level("DEBUG")
    with EmbeddedCluster(tmp_path) as c, httpx.Client(
            base_url=c.url, verify=ssl.create_default_context(cafile=str(c.ca_path)),
            headers={"Authorization": f"Bearer {c.token}"}, timeout=10) as client:
        url = "/api/v1/namespaces/default/secrets"
        ok = client.post(url, json={"apiVersion": "v1", "kind": "Secret",
                                    "metadata": {"name": "s"},
                                    "stringData": {"pw": "plain-SECRET-value"}})
        assert ok.status_code == 201
        bad = client.post(url, json={"apiVersion": "v1", "kind": "Secret",
                                     "metadata": {"name": "t"},
                                     "data": {"pw": "bad SECRET value"}})
        assert bad.status_code == 400 and "SECRET" not in bad.text
    out, err = capfd.readouterr()
    logged = out + err + caplog.text
    for needle in ("plain-SECRET-value", base64.b64encode(b"plain-SECRET-value").decode(),
                   "bad SECRET value"):
        assert needle not in logged
