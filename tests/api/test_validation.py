"""Validation: every rule of upstream's validation.go with its exact rendered text, plus Status/kubectl output."""

from __future__ import annotations

import copy

import pytest

from pyhpa.api import types as T
from pyhpa.api.codec import from_wire
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.quantity import Quantity
from pyhpa.api.field_errors import FieldError, InvalidError, go_quote
from pyhpa.api.strategy import prepare_for_create, prepare_for_status_update, prepare_for_update
from pyhpa.api.validation import (
    validate_hpa,
    validate_hpa_status_update,
    validate_scale,
)

GATES_OFF = FeatureGates(scale_to_zero=False, configurable_tolerance=False)


def base() -> dict:
    return {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web", "namespace": "default", "resourceVersion": "1"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                 "minReplicas": 1, "maxReplicas": 5,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}]},
    }


def errors(raw: dict, *, old: dict | None = None, gates: FeatureGates = GATES_OFF) -> list[str]:
    hpa = default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))
    old_hpa = default_hpa(from_wire(old, T.HorizontalPodAutoscaler)) if old else None
    return [str(e) for e in validate_hpa(hpa, old=old_hpa, gates=gates)]


def with_spec(**changes) -> dict:
    raw = base()
    raw["spec"].update(changes)
    return raw


def metric(kind: str, source: dict) -> dict:
    key = kind[0].lower() + kind[1:]
    return with_spec(metrics=[{"type": kind, key: source}])


def test_valid_object_has_no_errors():
    assert errors(base()) == []


# --------------------------------------------------------------------------- metadata

@pytest.mark.parametrize("name, expected", [
    ("", ["metadata.name: Required value: name or generateName is required"]),
    ("Web_1", ['metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')']),
    ("a" * 254, ['metadata.name: Invalid value: "' + "a" * 254 + '": must be no more than 253 characters']),
    ("a.b-c", []),
])
def test_metadata_name(name, expected):
    raw = base()
    raw["metadata"]["name"] = name
    assert errors(raw) == expected


def test_metadata_namespace_required_and_label_shaped():
    raw = base()
    del raw["metadata"]["namespace"]
    assert errors(raw) == ["metadata.namespace: Required value"]
    raw["metadata"]["namespace"] = "Bad"
    assert errors(raw) == [
        'metadata.namespace: Invalid value: "Bad": a lowercase RFC 1123 label must consist of lower case alphanumeric '
        "characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_generate_name_tolerates_trailing_dash():
    raw = base()
    raw["metadata"]["generateName"] = "web-"
    assert errors(raw) == []


def test_generate_name_masks_the_last_two_characters_like_upstream():
    from pyhpa.api.meta_validation import mask_trailing_dash

    assert mask_trailing_dash("web-") == "wea" and mask_trailing_dash("a..-") == "a.a"
    assert mask_trailing_dash("-") == "-" and mask_trailing_dash("web") == "web"
    raw = base()
    raw["metadata"]["generateName"] = "a..-"  # upstream checks "a.a": fine
    assert errors(raw) == []


def test_generate_name_is_checked_like_a_name():
    raw = base()
    raw["metadata"]["name"] = ""
    raw["metadata"]["generateName"] = "Web_"
    assert errors(raw) == [
        'metadata.generateName: Invalid value: "Web_": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')',
        "metadata.name: Required value: name or generateName is required"]  # ValidateObjectMeta reports both


def test_labels_and_annotations():
    raw = base()
    raw["metadata"]["labels"] = {"a/b/c": "ok", "good": "bad value"}
    raw["metadata"]["annotations"] = {"Example.com/Key": "x", "/x": "y"}
    assert errors(raw) == [
        "metadata.labels: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
        "metadata.labels: Invalid value: \"bad value\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        'metadata.annotations: Invalid value: "/x": prefix part must be non-empty',
    ]


def test_generation_must_not_be_negative():
    raw = base()
    raw["metadata"]["generation"] = -1
    assert errors(raw) == ["metadata.generation: Invalid value: -1: must be greater than or equal to 0"]


def test_update_metadata_is_immutable():
    old = base()
    new = copy.deepcopy(old)
    new["metadata"]["name"] = "other"
    new["metadata"]["uid"] = "u2"
    assert errors(new, old=old) == [
        'metadata.name: Invalid value: "other": field is immutable',
        'metadata.uid: Invalid value: "u2": field is immutable',
    ]


# --------------------------------------------------------------------------- replicas

def test_min_replicas_lower_bound_and_gate():
    raw = with_spec(minReplicas=0, metrics=[{"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}}}])
    assert errors(raw) == ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
    assert errors(raw, gates=FeatureGates()) == []
    # update: an old object with minReplicas 0 keeps the lower bound at 0 even with the gate off
    assert errors(raw, old=raw) == []
    assert errors(with_spec(minReplicas=-1), gates=FeatureGates()) == [
        "spec.minReplicas: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_scale_to_zero_needs_object_or_external_metric():
    assert errors(with_spec(minReplicas=0), gates=FeatureGates()) == [
        "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas"
    ]


def test_max_replicas_zero_with_default_min_is_the_1_37_pair():
    raw = with_spec(maxReplicas=0)
    del raw["spec"]["minReplicas"]
    assert errors(raw) == [
        "spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`",
        "spec.maxReplicas: Required value",
    ]


def test_max_replicas_missing_entirely():
    raw = base()
    del raw["spec"]["maxReplicas"]
    assert errors(raw)[-1] == "spec.maxReplicas: Required value"


def test_max_replicas_negative_and_below_min():
    assert errors(with_spec(maxReplicas=-2)) == [
        "spec.maxReplicas: Invalid value: -2: must be greater than or equal to `minReplicas`",
        "spec.maxReplicas: Invalid value: -2: must be greater than or equal to 1",
    ]
    assert errors(with_spec(minReplicas=4, maxReplicas=3)) == [
        "spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"
    ]


def test_declarative_errors_come_after_hand_written_ones():
    raw = with_spec(minReplicas=-1, maxReplicas=0, scaleTargetRef={"kind": "", "name": "x", "apiVersion": "apps/v1"})
    assert errors(raw) == [
        "spec.scaleTargetRef.kind: Required value",
        "spec.minReplicas: Invalid value: -1: must be greater than or equal to 1",
        "spec.maxReplicas: Required value",
    ]


def test_unchanged_max_replicas_on_update_is_ratcheted_to_hand_written_text():
    raw = with_spec(maxReplicas=0, minReplicas=None)
    assert errors(raw, old=raw)[0] == "spec.maxReplicas: Required value: must be set and greater than 0"


# --------------------------------------------------------------------------- references

@pytest.mark.parametrize("ref, expected", [
    ({"apiVersion": "apps/v1", "kind": "", "name": ""}, ["spec.scaleTargetRef.kind: Required value", "spec.scaleTargetRef.name: Required value"]),
    ({"apiVersion": "apps/v1", "kind": ".", "name": ".."}, ["spec.scaleTargetRef.kind: Invalid value: \".\": may not be '.'", "spec.scaleTargetRef.name: Invalid value: \"..\": may not be '..'"]),
    ({"apiVersion": "apps/v1", "kind": "D", "name": "a/b%c"}, ["spec.scaleTargetRef.name: Invalid value: \"a/b%c\": may not contain '/'", "spec.scaleTargetRef.name: Invalid value: \"a/b%c\": may not contain '%'"]),
    ({"apiVersion": "v1", "kind": "Deployment", "name": "web"}, ['spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group']),
    ({"kind": "Deployment", "name": "web"}, ['spec.scaleTargetRef.apiVersion: Invalid value: "": apiVersion must specify API group']),
    ({"apiVersion": "a/b/c", "kind": "Deployment", "name": "web"}, ['spec.scaleTargetRef.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']),
    ({"apiVersion": "v1", "kind": "ReplicationController", "name": "web"}, []),
])
def test_scale_target_ref(ref, expected):
    assert errors(with_spec(scaleTargetRef=ref)) == expected


def test_scale_target_ref_api_version_not_rechecked_when_unchanged():
    old = with_spec(scaleTargetRef={"apiVersion": "v1", "kind": "Deployment", "name": "web"})
    new = copy.deepcopy(old)
    new["spec"]["maxReplicas"] = 7
    assert errors(new, old=old) == []
    new["spec"]["scaleTargetRef"]["kind"] = "StatefulSet"
    assert errors(new, old=old) == ['spec.scaleTargetRef.apiVersion: Invalid value: "v1": apiVersion must specify API group']


# --------------------------------------------------------------------------- metrics

SUPPORTED = 'supported values: "ContainerResource", "External", "Object", "Pods", "Resource"'


def test_metric_type_required_and_unsupported():
    assert errors(with_spec(metrics=[{"type": "", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])) == [
        "spec.metrics[0].type: Required value: must specify a metric source type",
        f'spec.metrics[0].type: Unsupported value: "": {SUPPORTED}',
    ]
    assert errors(with_spec(metrics=[{"type": "Foo"}])) == [f'spec.metrics[0].type: Unsupported value: "Foo": {SUPPORTED}']


def test_metric_source_must_match_type_and_be_alone():
    raw = with_spec(metrics=[{"type": "Pods",
                              "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                              "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}}}])
    assert errors(raw) == [
        "spec.metrics[0].pods: Required value: must populate information for the given metric source",
        "spec.metrics[0].external: Forbidden: must populate the given metric source only",
        "spec.metrics[0].resource: Forbidden: must populate the given metric source only",
    ]


def test_a_lone_source_under_another_type_is_only_missing_its_own():
    """Upstream forbids the other sources only when more than one is set."""
    raw = with_spec(metrics=[{"type": "Pods",
                              "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])
    assert errors(raw) == [
        "spec.metrics[0].pods: Required value: must populate information for the given metric source"]


def test_only_first_populated_source_is_validated_in_depth():
    raw = with_spec(metrics=[{"type": "Resource",
                              "external": {"metric": {"name": ""}, "target": {"type": "Value", "value": "1"}},
                              "resource": {"name": "", "target": {"type": "Utilization", "averageUtilization": 0}}}])
    assert errors(raw) == [
        "spec.metrics[0].external.metric.name: Required value: must specify a metric name",
        "spec.metrics[0].external: Forbidden: must populate the given metric source only",
    ]


def test_metric_target_rules():
    raw = metric("Object", {"describedObject": {"kind": "Service", "name": "s", "apiVersion": "v1"}, "metric": {"name": "rps"},
                            "target": {"type": "Bogus", "value": "0", "averageValue": "-1", "averageUtilization": 0}})
    assert errors(raw) == [
        'spec.metrics[0].object.target.type: Invalid value: "Bogus": must be either Utilization, Value, or AverageValue',
        'spec.metrics[0].object.target.value: Invalid value: "0": must be positive',
        'spec.metrics[0].object.target.averageValue: Invalid value: "-1": must be positive',
        "spec.metrics[0].object.target.averageUtilization: Invalid value: 0: must be greater than 0",
    ]
    raw = metric("Object", {"describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "rps"}, "target": {"type": ""}})
    assert errors(raw) == [
        "spec.metrics[0].object.target.type: Required value: must specify a metric target type",
        'spec.metrics[0].object.target.type: Invalid value: "": must be either Utilization, Value, or AverageValue',
        "spec.metrics[0].object.target.averageValue: Required value: must set either a target value or averageValue",
    ]


def test_object_described_object_and_metric_identifier():
    raw = metric("Object", {"describedObject": {"kind": "", "name": "a/b", "apiVersion": "x/y/z"}, "metric": {"name": ".."},
                            "target": {"type": "Value", "value": "1"}})
    assert errors(raw) == [
        "spec.metrics[0].object.describedObject.kind: Required value",
        "spec.metrics[0].object.describedObject.name: Invalid value: \"a/b\": may not contain '/'",
        'spec.metrics[0].object.describedObject.apiVersion: Invalid value: "x/y/z": unexpected GroupVersion string: x/y/z',
        "spec.metrics[0].object.metric.name: Invalid value: \"..\": may not be '..'",
    ]


def test_described_object_api_version_not_rechecked_when_old_object_already_failed_it():
    bad_ref = {"kind": "Service", "name": "q", "apiVersion": "a/b/c"}
    old = metric("Object", {"describedObject": bad_ref, "metric": {"name": "m"}, "target": {"type": "Value", "value": "1"}})
    new = copy.deepcopy(old)
    new["spec"]["maxReplicas"] = 7
    assert errors(new, old=old) == []
    assert errors(new) == ['spec.metrics[0].object.describedObject.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']
    fixed_old = copy.deepcopy(old)
    fixed_old["spec"]["metrics"][0]["object"]["describedObject"]["apiVersion"] = "v1"
    assert errors(new, old=fixed_old) == ['spec.metrics[0].object.describedObject.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c']


def test_external_rules():
    neither = metric("External", {"metric": {"name": "q"}, "target": {"type": "Value"}})
    assert errors(neither) == ["spec.metrics[0].external.target.averageValue: Required value: must set either a target value for metric or a per-pod target"]
    both = metric("External", {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1", "averageValue": "2"}})
    assert errors(both) == ["spec.metrics[0].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target"]


def test_pods_rules():
    raw = metric("Pods", {"metric": {"name": ""}, "target": {"type": "Value", "value": "1"}})
    assert errors(raw) == [
        "spec.metrics[0].pods.metric.name: Required value: must specify a metric name",
        "spec.metrics[0].pods.target.averageValue: Required value: must specify a positive target averageValue",
    ]


def test_resource_rules():
    neither = metric("Resource", {"name": "", "target": {"type": "Utilization"}})
    assert errors(neither) == [
        "spec.metrics[0].resource.name: Required value: must specify a resource name",
        "spec.metrics[0].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
    ]
    both = metric("Resource", {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50, "averageValue": "1"}})
    assert errors(both) == ["spec.metrics[0].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization"]


def test_container_resource_rules():
    raw = metric("ContainerResource", {"name": "", "container": "", "target": {"type": "Utilization", "averageUtilization": 50}})
    assert errors(raw) == [
        "spec.metrics[0].containerResource.name: Required value: must specify a resource name",
        "spec.metrics[0].containerResource.container: Required value: must specify a container",
    ]
    raw = metric("ContainerResource", {"name": "pods", "container": "App_1", "target": {"type": "AverageValue"}})
    assert errors(raw) == [
        'spec.metrics[0].containerResource.name: Invalid value: "pods": must be a standard resource for containers',
        "spec.metrics[0].containerResource.container: Invalid value: \"App_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.metrics[0].containerResource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
    ]
    raw = metric("ContainerResource", {"name": "gpu", "container": "app", "target": {"type": "Utilization", "averageUtilization": 1, "averageValue": "1"}})
    assert errors(raw) == [
        'spec.metrics[0].containerResource.name: Invalid value: "gpu": must be a standard resource type or fully qualified',
        "spec.metrics[0].containerResource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
    ]
    long = "a" * 64
    raw = metric("ContainerResource", {"name": "cpu", "container": long, "target": {"type": "Utilization", "averageUtilization": 50}})
    assert errors(raw) == [f'spec.metrics[0].containerResource.container: Invalid value: "{long}": must be no more than 63 characters']
    ok = metric("ContainerResource", {"name": "hugepages-2Mi", "container": "app", "target": {"type": "AverageValue", "averageValue": "1"}})
    assert errors(ok) == []
    ok = metric("ContainerResource", {"name": "example.com/gpu", "container": "app", "target": {"type": "AverageValue", "averageValue": "1"}})
    assert errors(ok) == []


# --------------------------------------------------------------------------- behavior

def test_behavior_rules():
    raw = with_spec(behavior={"scaleUp": {"stabilizationWindowSeconds": -1, "selectPolicy": "Maximum",
                                          "policies": [{"type": "Nodes", "value": 0, "periodSeconds": 0}]},
                              "scaleDown": {"stabilizationWindowSeconds": 3601, "policies": [{"type": "Pods", "value": -3, "periodSeconds": 1801}],
                                            "tolerance": "-0.1"}})
    assert errors(raw) == [
        "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
        'spec.behavior.scaleUp.selectPolicy: Unsupported value: "Maximum": supported values: "Disabled", "Max", "Min"',
        'spec.behavior.scaleUp.policies[0].type: Unsupported value: "Nodes": supported values: "Percent", "Pods"',
        "spec.behavior.scaleUp.policies[0].value: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleUp.policies[0].periodSeconds: Invalid value: 0: must be greater than zero",
        "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
        "spec.behavior.scaleDown.policies[0].value: Invalid value: -3: must be greater than zero",
        "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
        'spec.behavior.scaleDown.tolerance: Invalid value: "-100m": must be greater than or equal to 0',
    ]


def test_empty_policies_list_fails_even_with_only_tolerance():
    raw = with_spec(behavior={"scaleUp": {"policies": [], "tolerance": "0.1"}})
    assert errors(raw) == ["spec.behavior.scaleUp.policies: Required value: must specify at least one Policy"]


def test_absent_policies_are_defaulted_and_pass():
    assert errors(with_spec(behavior={"scaleUp": {"tolerance": "0.1"}})) == []


# --------------------------------------------------------------------------- rendering and Status

def test_several_errors_render_and_status():
    raw = with_spec(maxReplicas=0)
    del raw["spec"]["minReplicas"]
    hpa = default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))
    err = InvalidError(validate_hpa(hpa, gates=GATES_OFF), name="web")
    assert str(err) == (
        'The HorizontalPodAutoscaler "web" is invalid: \n'
        "* spec.maxReplicas: Invalid value: 0: must be greater than or equal to `minReplicas`\n"
        "* spec.maxReplicas: Required value"
    )
    status = err.status()
    assert status["code"] == 422 and status["reason"] == "Invalid" and status["status"] == "Failure"
    assert status["message"] == (
        'HorizontalPodAutoscaler.autoscaling "web" is invalid: [spec.maxReplicas: Invalid value: 0: must be greater '
        "than or equal to `minReplicas`, spec.maxReplicas: Required value]"
    )
    assert status["details"] == {
        "name": "web", "group": "autoscaling", "kind": "HorizontalPodAutoscaler",
        "causes": [
            {"reason": "FieldValueInvalid", "message": "Invalid value: 0: must be greater than or equal to `minReplicas`", "field": "spec.maxReplicas"},
            {"reason": "FieldValueRequired", "message": "Required value", "field": "spec.maxReplicas"},
        ],
    }
    assert list(status) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]


def test_single_error_renders_on_one_line_and_duplicates_collapse():
    e = FieldError("NotSupported", "spec.metrics[0].type", "Foo", 'supported values: "A"', json_value=True)
    err = InvalidError([e, e], name="web")
    assert str(err) == 'The HorizontalPodAutoscaler "web" is invalid: spec.metrics[0].type: Unsupported value: "Foo": supported values: "A"'
    assert err.message == 'HorizontalPodAutoscaler.autoscaling "web" is invalid: spec.metrics[0].type: Unsupported value: "Foo": supported values: "A"'
    assert len(err.status()["details"]["causes"]) == 1


def test_value_rendering():
    assert str(FieldError("Invalid", "f", 'a"b\n', "d")) == 'f: Invalid value: "a\\"b\\n": d'
    assert str(FieldError("Invalid", "f", "<x>", "d", json_value=True)) == 'f: Invalid value: "\\u003cx\\u003e": d'
    assert str(FieldError("Invalid", "f", Quantity.parse("1.5"), "d")) == 'f: Invalid value: "1500m": d'
    assert str(FieldError("Invalid", "f", True, "")) == "f: Invalid value: true"
    assert str(FieldError("Forbidden", "f", 3, "d")) == "f: Forbidden: d"
    assert go_quote("é\x01") == '"é\\x01"'


# --------------------------------------------------------------------------- status update, scale

def test_status_update_rules():
    old = default_hpa(from_wire(base(), T.HorizontalPodAutoscaler))
    new = from_wire(base(), T.HorizontalPodAutoscaler)
    new.status = T.HorizontalPodAutoscalerStatus(
        current_replicas=-1, desired_replicas=-2, current_metrics=None,
        conditions=[T.HorizontalPodAutoscalerCondition(type="AbleToScale", status="True", last_transition_time=None, observed_generation=-1)],
    )
    new.spec.max_replicas = -5  # spec rules do not apply to /status
    assert [str(e) for e in validate_hpa_status_update(new, old)] == [
        "status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to 0",
        "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
        "status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0",
    ]


def test_scale_rules():
    scale = T.new_scale("web", "default", 1, 1, "app=web")
    scale.spec.replicas = -1
    assert [str(e) for e in validate_scale(scale)] == ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]
    bad = T.new_scale("Web_1", "default", 1, 1, "app=web")
    assert [str(e) for e in validate_scale(bad)] == [
        'metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')']
    err = InvalidError(validate_scale(scale), name="web", kind="Scale")
    assert err.message.startswith('Scale.autoscaling "web" is invalid: spec.replicas')


# --------------------------------------------------------------------------- registry strategy

def _obj(raw):
    return default_hpa(from_wire(raw, T.HorizontalPodAutoscaler))


def test_prepare_for_create_clears_status_sets_generation_and_drops_tolerance():
    raw = with_spec(behavior={"scaleUp": {"tolerance": "0.05"}})
    raw["status"] = {"desiredReplicas": 9, "currentMetrics": None}
    hpa = prepare_for_create(_obj(raw), FeatureGates(configurable_tolerance=False, hpa_generation=True))
    assert hpa.status.desired_replicas == 0
    assert hpa.metadata.generation == 1
    assert hpa.spec.behavior.scale_up.tolerance is None
    kept = prepare_for_create(_obj(raw), FeatureGates())
    assert kept.spec.behavior.scale_up.tolerance == Quantity.parse("50m")
    assert kept.metadata.generation is None


def test_prepare_for_update_keeps_status_and_bumps_generation_on_spec_change():
    old_raw = base()
    old_raw["metadata"]["generation"] = 3
    old_raw["status"] = {"desiredReplicas": 4, "currentMetrics": None}
    old = _obj(old_raw)
    gates = FeatureGates(hpa_generation=True)
    same = _obj(base())
    same.metadata.resource_version = None
    prepare_for_update(same, old, gates)
    assert same.status.desired_replicas == 4 and same.metadata.generation == 3 and same.metadata.resource_version == "1"
    changed = _obj(with_spec(maxReplicas=9))
    prepare_for_update(changed, old, gates)
    assert changed.metadata.generation == 4


def test_tolerance_kept_on_update_when_old_object_uses_it():
    old = _obj(with_spec(behavior={"scaleDown": {"tolerance": "0.2"}}))
    new = _obj(with_spec(behavior={"scaleDown": {"tolerance": "0.3"}}))
    prepare_for_update(new, old, FeatureGates(configurable_tolerance=False))
    assert new.spec.behavior.scale_down.tolerance == Quantity.parse("300m")


def test_prepare_for_status_update_keeps_stored_spec():
    old = _obj(base())
    new = _obj(with_spec(maxReplicas=50))
    new.status.desired_replicas = 3
    prepare_for_status_update(new, old)
    assert new.spec.max_replicas == 5 and new.status.desired_replicas == 3
