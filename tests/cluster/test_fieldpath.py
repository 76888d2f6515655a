"""Server-side apply on keyed lists, without a server: element paths from the schema, merge
order, pruning of what a manager stopped sending, and conflicts named as upstream names them."""

from __future__ import annotations

import pytest

from pyhpa.api.schemas import BuiltinSchemas
from pyhpa.cluster.apiserver import fieldpath as fp
from pyhpa.cluster.apiserver import managed_fields as managed

CONTAINERS = ("spec", "template", "spec", "containers")


@pytest.fixture(scope="module")
def shape():
    return fp.shapes_of(BuiltinSchemas.build(), "Deployment")("apps/v1")


def deployment(*containers: dict) -> dict:
    return {"spec": {"template": {"spec": {"containers": list(containers)}}}}


def names(obj: dict) -> list[str]:
    return [c["name"] for c in obj["spec"]["template"]["spec"]["containers"]]


def applied_by(obj: dict, manager: str, config: dict, shape) -> dict:
    """``obj`` after ``manager`` applies ``config``, its ownership recorded."""
    out = managed.apply(obj, manager, config, shape)
    managed.record(out, manager, "Apply", "apps/v1", fp.leaves(config, shape), replace=True,
                   changed_in=lambda _v: fp.changed_leaves(obj, out, shape))
    return out


def test_element_keys_use_schema_defaults_and_describe_as_upstream(shape):
    port = fp.leaves(deployment({"name": "web", "ports": [{"containerPort": 80}]}), shape)
    key = fp.Item("k", '{"containerPort":80,"protocol":"TCP"}')  # protocol: its default
    web = fp.Item("k", '{"name":"web"}')
    assert CONTAINERS + (web, "ports", key) in port
    assert fp.describe(CONTAINERS + (web, "ports", key, "containerPort")) == \
        '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]' \
        '.containerPort'
    assert fp.describe(("metadata", "finalizers", fp.Item("v", '"x"'))) == \
        '.metadata.finalizers[="x"]'
    assert fp.from_fields_v1(fp.to_fields_v1(port)) == port


def test_duplicate_keys_make_the_list_one_field(shape):
    dup = deployment({"name": "web", "image": "a"}, {"name": "web", "image": "b"})
    assert fp.leaves(dup, shape) == {CONTAINERS}


def test_merge_orders_elements_as_upstream(shape):
    live = deployment({"name": "a"}, {"name": "b"}, {"name": "c"})
    merged = fp.merge(live, deployment({"name": "b", "image": "x"}, {"name": "new"}), shape)
    assert names(merged) == ["a", "b", "c", "new"]
    assert merged["spec"]["template"]["spec"]["containers"][1] == {"name": "b", "image": "x"}
    # elements both lists have come in the applied order; the live-only ones keep their place
    live = deployment({"name": "x"}, {"name": "a"}, {"name": "y"}, {"name": "b"})
    assert names(fp.merge(live, deployment({"name": "b"}, {"name": "a"}), shape)) == \
        ["x", "y", "b", "a"]


def test_an_element_both_managers_own_survives_one_dropping_it(shape):
    web = {"name": "web", "image": "nginx"}
    extra = {"name": "extra", "image": "busybox"}
    obj = applied_by({}, "a", deployment(web, extra), shape)
    obj = applied_by(obj, "b", deployment(extra), shape)  # the same values: co-owned
    obj = applied_by(obj, "a", deployment(web), shape)
    assert names(obj) == ["web", "extra"]
    obj = applied_by(obj, "b", deployment(), shape)  # its last owner lets go
    assert names(obj) == ["web"]


def test_env_vars_of_one_container_are_owned_per_name(shape):
    mine = deployment({"name": "web", "image": "nginx", "env": [{"name": "A", "value": "1"}]})
    obj = applied_by({}, "a", mine, shape)
    obj = applied_by(obj, "b", deployment({"name": "web", "env": [{"name": "B", "value": "2"}]}),
                     shape)
    obj = applied_by(obj, "a", mine, shape)
    env = obj["spec"]["template"]["spec"]["containers"][0]["env"]
    assert [e["name"] for e in env] == ["A", "B"]
    changed = fp.changed_leaves(obj, fp.merge(obj, deployment(
        {"name": "web", "env": [{"name": "B", "value": "3"}]}), shape), shape)
    found = managed.conflicts(obj, "a", lambda _v: changed)
    assert managed.conflict_error(found)[0] == (
        'Apply failed with 1 conflict: conflict with "b": '
        '.spec.template.spec.containers[name="web"].env[name="B"].value')
