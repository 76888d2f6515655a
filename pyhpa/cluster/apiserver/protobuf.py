"""The few protobuf messages kubectl exchanges with us, with a small hand-written wire codec.

Why not a protobuf library: we need to *decode* one family of messages (the HPA that
``kubectl autoscale`` 1.32/1.33 POSTs, wrapped in ``runtime.Unknown`` after the ``k8s\\0`` magic)
and *encode* the gnostic OpenAPI v2 document (:mod:`.gnostic` builds it from the
field helpers here). Generated classes for the Kubernetes and gnostic schemas would pull in
thousands of lines for the few messages involved; a varint/length-delimited codec plus field
tables (from k8s.io/api's generated.proto and gnostic's OpenAPIv2.proto) is small and has no version coupling to the protobuf
runtime.
"""

from __future__ import annotations

import base64
from types import MappingProxyType
from typing import Any, Mapping

from pyhpa.api.timefmt import format_epoch

MAGIC = b"k8s\x00"
CONTENT_TYPE = "application/vnd.kubernetes.protobuf"


class ProtobufError(ValueError):
    """A body that is not a well-formed Kubernetes protobuf message."""


# --------------------------------------------------------------------------- wire level


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf):
            raise ProtobufError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ProtobufError("varint too long")


def parse_fields(buf: bytes) -> list[tuple[int, int | bytes]]:
    """(field number, value) pairs in wire order; varints as int, length-delimited as bytes."""
    out: list[tuple[int, int | bytes]] = []
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        num, wt = tag >> 3, tag & 7
        if wt == 0:
            val, pos = _varint(buf, pos)
            out.append((num, val))
        elif wt == 2:
            n, pos = _varint(buf, pos)
            if pos + n > len(buf):
                raise ProtobufError(f"field {num}: truncated length-delimited value")
            out.append((num, buf[pos:pos + n]))
            pos += n
        elif wt == 1:
            out.append((num, int.from_bytes(buf[pos:pos + 8], "little")))
            pos += 8
        elif wt == 5:
            out.append((num, int.from_bytes(buf[pos:pos + 4], "little")))
            pos += 4
        else:
            raise ProtobufError(f"field {num}: unsupported wire type {wt}")
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def encode_varint(v: int) -> bytes:
    if v < 0:
        v += 1 << 64
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_bytes(num: int, data: bytes | str) -> bytes:
    if isinstance(data, str):
        data = data.encode()
    return encode_varint(num << 3 | 2) + encode_varint(len(data)) + data


def field_varint(num: int, v: int) -> bytes:
    return encode_varint(num << 3) + encode_varint(v)


# --------------------------------------------------------------------------- schemas
# Each schema maps field number -> (json name, type). Types: "str", "int", "bool", "time",
# "map" (string map entries), "qty" (resource.Quantity), a schema name, or "[...]" for repeated.

SCHEMAS: Mapping[str, dict[int, tuple[str, str]]] = MappingProxyType({
    # the body of a typed client's delete (`kubectl drain` deleting pods), in any group version
    "DeleteOptions": {1: ("gracePeriodSeconds", "int"), 2: ("preconditions", "Preconditions"),
                      3: ("orphanDependents", "bool"), 4: ("propagationPolicy", "str"),
                      5: ("dryRun", "[str]")},
    "Preconditions": {1: ("uid", "str"), 2: ("resourceVersion", "str")},
    "Eviction": {1: ("metadata", "ObjectMeta"), 2: ("deleteOptions", "DeleteOptions")},
    # `kubectl create configmap|secret|serviceaccount|pdb` (1.32+)
    "ConfigMap": {1: ("metadata", "ObjectMeta"), 2: ("data", "map"), 3: ("binaryData", "bytesmap"),
                  4: ("immutable", "bool")},
    "Secret": {1: ("metadata", "ObjectMeta"), 2: ("data", "bytesmap"), 3: ("type", "str"),
               4: ("stringData", "map"), 5: ("immutable", "bool")},
    "ServiceAccount": {1: ("metadata", "ObjectMeta"), 4: ("automountServiceAccountToken", "bool")},
    "PodDisruptionBudget": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PDBSpec")},
    "PDBSpec": {1: ("minAvailable", "intstr"), 2: ("selector", "LabelSelector"),
                3: ("maxUnavailable", "intstr"), 4: ("unhealthyPodEvictionPolicy", "str")},
    # `kubectl create ingress`; an IngressRule's ingressRuleValue is inline in JSON ("")
    "Ingress": {1: ("metadata", "ObjectMeta"), 2: ("spec", "IngressSpec")},
    "IngressSpec": {1: ("defaultBackend", "IngressBackend"), 2: ("tls", "[IngressTLS]"),
                    3: ("rules", "[IngressRule]"), 4: ("ingressClassName", "str")},
    "IngressBackend": {3: ("resource", "TypedLocalObjectReference"),
                       4: ("service", "IngressServiceBackend")},
    "TypedLocalObjectReference": {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")},
    "IngressServiceBackend": {1: ("name", "str"), 2: ("port", "ServiceBackendPort")},
    "ServiceBackendPort": {1: ("name", "str"), 2: ("number", "int?")},
    "IngressTLS": {1: ("hosts", "[str]"), 2: ("secretName", "str")},
    "IngressRule": {1: ("host", "str"), 2: ("", "IngressRuleValue")},
    "IngressRuleValue": {1: ("http", "HTTPIngressRuleValue")},
    "HTTPIngressRuleValue": {1: ("paths", "[HTTPIngressPath]")},
    "HTTPIngressPath": {1: ("path", "str"), 2: ("backend", "IngressBackend"),
                        3: ("pathType", "str")},
    "ObjectMeta": {1: ("name", "str"), 2: ("generateName", "str"), 3: ("namespace", "str"),
                   4: ("selfLink", "str"), 5: ("uid", "str"), 6: ("resourceVersion", "str"),
                   7: ("generation", "int"), 8: ("creationTimestamp", "time"),
                   9: ("deletionTimestamp", "time"), 10: ("deletionGracePeriodSeconds", "int"),
                   11: ("labels", "map"), 12: ("annotations", "map"),
                   13: ("ownerReferences", "[OwnerReference]"), 14: ("finalizers", "[str]")},
    "OwnerReference": {1: ("kind", "str"), 3: ("name", "str"), 4: ("uid", "str"),
                       5: ("apiVersion", "str"), 6: ("controller", "bool"),
                       7: ("blockOwnerDeletion", "bool")},
    "CrossVersionObjectReference": {1: ("kind", "str"), 2: ("name", "str"),
                                    3: ("apiVersion", "str")},
    "HPAv1": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SpecV1"), 3: ("status", "StatusV1")},
    "SpecV1": {1: ("scaleTargetRef", "CrossVersionObjectReference"), 2: ("minReplicas", "int"),
               3: ("maxReplicas", "int"), 4: ("targetCPUUtilizationPercentage", "int")},
    "StatusV1": {1: ("observedGeneration", "int"), 2: ("lastScaleTime", "time"),
                 3: ("currentReplicas", "int"), 4: ("desiredReplicas", "int"),
                 5: ("currentCPUUtilizationPercentage", "int")},
    "HPAv2": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SpecV2"), 3: ("status", "StatusV2")},
    "SpecV2": {1: ("scaleTargetRef", "CrossVersionObjectReference"), 2: ("minReplicas", "int"),
               3: ("maxReplicas", "int"), 4: ("metrics", "[MetricSpec]"),
               5: ("behavior", "Behavior")},
    "StatusV2": {1: ("observedGeneration", "int"), 2: ("lastScaleTime", "time"),
                 3: ("currentReplicas", "int"), 4: ("desiredReplicas", "int"),
                 5: ("currentMetrics", "[MetricStatus]"), 6: ("conditions", "[Condition]")},
    "MetricSpec": {1: ("type", "str"), 2: ("object", "ObjectSource"), 3: ("pods", "PodsSource"),
                   4: ("resource", "ResourceSource"), 5: ("external", "PodsSource"),
                   7: ("containerResource", "ContainerResourceSource")},
    "ResourceSource": {1: ("name", "str"), 2: ("target", "MetricTarget")},
    "ContainerResourceSource": {1: ("name", "str"), 2: ("target", "MetricTarget"),
                                3: ("container", "str")},
    "PodsSource": {1: ("metric", "MetricIdentifier"), 2: ("target", "MetricTarget")},
    "ObjectSource": {1: ("describedObject", "CrossVersionObjectReference"),
                     2: ("target", "MetricTarget"), 3: ("metric", "MetricIdentifier")},
    "MetricIdentifier": {1: ("name", "str"), 2: ("selector", "LabelSelector")},
    "LabelSelector": {1: ("matchLabels", "map"), 2: ("matchExpressions", "[LabelSelectorReq]")},
    "LabelSelectorReq": {1: ("key", "str"), 2: ("operator", "str"), 3: ("values", "[str]")},
    "MetricTarget": {1: ("type", "str"), 2: ("value", "qty"), 3: ("averageValue", "qty"),
                     4: ("averageUtilization", "int")},
    "Behavior": {1: ("scaleUp", "Rules"), 2: ("scaleDown", "Rules")},
    "Rules": {1: ("selectPolicy", "str"), 2: ("policies", "[Policy]"),
              3: ("stabilizationWindowSeconds", "int"), 4: ("tolerance", "qty")},
    "Policy": {1: ("type", "str"), 2: ("value", "int"), 3: ("periodSeconds", "int")},
    # Typed-client creates from kubectl 1.32+ (`create namespace`, `create deployment`, `run`).
    # "int?"/"bool?" are Go value fields (zero means unset); "int" keeps zeros (pointers).
    "Namespace": {1: ("metadata", "ObjectMeta"), 2: ("spec", "NamespaceSpec")},
    "NamespaceSpec": {1: ("finalizers", "[str]")},
    "Deployment": {1: ("metadata", "ObjectMeta"), 2: ("spec", "DeploymentSpec")},
    "DeploymentSpec": {1: ("replicas", "int"), 2: ("selector", "LabelSelector"),
                       3: ("template", "PodTemplateSpec"), 4: ("strategy", "DeploymentStrategy"),
                       5: ("minReadySeconds", "int?"), 6: ("revisionHistoryLimit", "int"),
                       7: ("paused", "bool?"), 9: ("progressDeadlineSeconds", "int")},
    "DeploymentStrategy": {1: ("type", "str")},
    "PodTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "Pod": {1: ("metadata", "ObjectMeta"), 2: ("spec", "PodSpec")},
    "PodSpec": {2: ("containers", "[Container]"), 3: ("restartPolicy", "str"),
                4: ("terminationGracePeriodSeconds", "int"), 6: ("dnsPolicy", "str"),
                7: ("nodeSelector", "map"), 8: ("serviceAccountName", "str"),
                10: ("nodeName", "str"), 19: ("schedulerName", "str"),
                20: ("initContainers", "[Container]"), 22: ("priorityClassName", "str")},
    "Container": {1: ("name", "str"), 2: ("image", "str"), 3: ("command", "[str]"),
                  4: ("args", "[str]"), 5: ("workingDir", "str"), 6: ("ports", "[ContainerPort]"),
                  7: ("env", "[EnvVar]"), 8: ("resources", "ResourceRequirements"),
                  13: ("terminationMessagePath", "str"), 14: ("imagePullPolicy", "str"),
                  16: ("stdin", "bool?"), 17: ("stdinOnce", "bool?"), 18: ("tty", "bool?"),
                  20: ("terminationMessagePolicy", "str")},
    "ContainerPort": {1: ("name", "str"), 2: ("hostPort", "int?"), 3: ("containerPort", "int"),
                      4: ("protocol", "str"), 5: ("hostIP", "str")},
    "EnvVar": {1: ("name", "str"), 2: ("value", "str")},
    "ResourceRequirements": {1: ("limits", "qtymap"), 2: ("requests", "qtymap")},
    # `kubectl create service clusterip|nodeport|loadbalancer|externalname` (1.32+).
    "Service": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ServiceSpec")},
    "ServiceSpec": {1: ("ports", "[ServicePort]"), 2: ("selector", "map"), 3: ("clusterIP", "str"),
                    4: ("type", "str"), 5: ("externalIPs", "[str]"),
                    7: ("sessionAffinity", "str"), 8: ("loadBalancerIP", "str"),
                    10: ("externalName", "str"), 11: ("externalTrafficPolicy", "str"),
                    12: ("healthCheckNodePort", "int?"), 13: ("publishNotReadyAddresses", "bool?"),
                    17: ("ipFamilyPolicy", "str"), 18: ("clusterIPs", "[str]"),
                    19: ("ipFamilies", "[str]"), 20: ("allocateLoadBalancerNodePorts", "bool"),
                    21: ("loadBalancerClass", "str"), 22: ("internalTrafficPolicy", "str")},
    "ServicePort": {1: ("name", "str"), 2: ("protocol", "str"), 3: ("port", "int?"),
                    4: ("targetPort", "intstr"), 5: ("nodePort", "int?"),
                    6: ("appProtocol", "str")},
    # `kubectl auth can-i` (1.32+): the access reviews
    "SelfSubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SARSpec")},
    "SubjectAccessReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SARSpec")},
    "SARSpec": {1: ("resourceAttributes", "ResourceAttributes"),
                2: ("nonResourceAttributes", "NonResourceAttributes"), 3: ("user", "str"),
                4: ("groups", "[str]"), 6: ("uid", "str")},
    "ResourceAttributes": {1: ("namespace", "str"), 2: ("verb", "str"), 3: ("group", "str"),
                           4: ("version", "str"), 5: ("resource", "str"),
                           6: ("subresource", "str"), 7: ("name", "str")},
    "NonResourceAttributes": {1: ("path", "str"), 2: ("verb", "str")},
    "SelfSubjectRulesReview": {1: ("metadata", "ObjectMeta"), 2: ("spec", "SSRRSpec")},
    "SSRRSpec": {1: ("namespace", "str")},
    "SelfSubjectReview": {1: ("metadata", "ObjectMeta")},
    # `kubectl create role|clusterrole|rolebinding|clusterrolebinding` (1.32+)
    "Role": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[PolicyRule]")},
    "ClusterRole": {1: ("metadata", "ObjectMeta"), 2: ("rules", "[PolicyRule]"),
                    3: ("aggregationRule", "AggregationRule")},
    "PolicyRule": {1: ("verbs", "[str]"), 2: ("apiGroups", "[str]"), 3: ("resources", "[str]"),
                   4: ("resourceNames", "[str]"), 5: ("nonResourceURLs", "[str]")},
    "AggregationRule": {1: ("clusterRoleSelectors", "[LabelSelector]")},
    "RoleBinding": {1: ("metadata", "ObjectMeta"), 2: ("subjects", "[Subject]"),
                    3: ("roleRef", "RoleRef")},
    "Subject": {1: ("kind", "str"), 2: ("apiGroup", "str"), 3: ("name", "str"),
                4: ("namespace", "str")},
    "RoleRef": {1: ("apiGroup", "str"), 2: ("kind", "str"), 3: ("name", "str")},
    # `kubectl create job|cronjob` and `create job --from=cronjob/x` (1.32+)
    "Job": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    "JobSpec": {1: ("parallelism", "int"), 2: ("completions", "int"),
                3: ("activeDeadlineSeconds", "int"), 4: ("selector", "LabelSelector"),
                5: ("manualSelector", "bool"), 6: ("template", "PodTemplateSpec"),
                7: ("backoffLimit", "int"), 8: ("ttlSecondsAfterFinished", "int"),
                9: ("completionMode", "str"), 10: ("suspend", "bool"),
                12: ("backoffLimitPerIndex", "int"), 13: ("maxFailedIndexes", "int"),
                14: ("podReplacementPolicy", "str")},
    "CronJob": {1: ("metadata", "ObjectMeta"), 2: ("spec", "CronJobSpec")},
    "CronJobSpec": {1: ("schedule", "str"), 2: ("startingDeadlineSeconds", "int"),
                    3: ("concurrencyPolicy", "str"), 4: ("suspend", "bool"),
                    5: ("jobTemplate", "JobTemplateSpec"),
                    6: ("successfulJobsHistoryLimit", "int"),
                    7: ("failedJobsHistoryLimit", "int"), 8: ("timeZone", "str")},
    "JobTemplateSpec": {1: ("metadata", "ObjectMeta"), 2: ("spec", "JobSpec")},
    # `kubectl create priorityclass|quota` (1.32+)
    "PriorityClass": {1: ("metadata", "ObjectMeta"), 2: ("value", "int"),
                      3: ("globalDefault", "bool?"), 4: ("description", "str"),
                      5: ("preemptionPolicy", "str")},
    "ResourceQuota": {1: ("metadata", "ObjectMeta"), 2: ("spec", "ResourceQuotaSpec")},
    "ResourceQuotaSpec": {1: ("hard", "qtymap"), 2: ("scopes", "[str]")},
    # Status pieces are decoded for completeness; create ignores status anyway.
    "MetricStatus": {1: ("type", "str")},
    "Condition": {1: ("type", "str"), 2: ("status", "str"), 3: ("lastTransitionTime", "time"),
                  4: ("reason", "str"), 5: ("message", "str")},
})

# proto2 "non-pointer" fields arrive even when unset; these zero values mean "absent".
_DROP_EMPTY_META = frozenset({"name", "generateName", "namespace", "selfLink", "uid", "resourceVersion"})


def _decode_time(buf: bytes) -> str | None:
    secs = 0
    for num, val in parse_fields(buf):
        if num == 1 and isinstance(val, int):
            secs = _signed(val)
    if secs == 0:
        return None
    return format_epoch(secs)


def _decode_map_entry(buf: bytes, typ: str = "map") -> tuple[str, str]:
    """A map entry: string values ("map"), quantities ("qtymap") or bytes, which JSON shows in
    base64 ("bytesmap": a Secret's data)."""
    key = value = ""
    for num, val in parse_fields(buf):
        if isinstance(val, bytes):
            if num == 1:
                key = val.decode()
            elif num == 2:
                value = _decode_scalar("qty", val, key) if typ == "qtymap" else \
                    base64.b64encode(val).decode() if typ == "bytesmap" else val.decode()
    return key, value


def _decode_scalar(typ: str, val: int | bytes, path: str) -> Any:
    if typ == "str":
        if not isinstance(val, bytes):
            raise ProtobufError(f"{path}: expected a string")
        return val.decode()
    if typ == "int":
        if not isinstance(val, int):
            raise ProtobufError(f"{path}: expected a varint")
        return _signed(val)
    if typ == "bool":
        if not isinstance(val, int):
            raise ProtobufError(f"{path}: expected a varint")
        return bool(val)
    if not isinstance(val, bytes):
        raise ProtobufError(f"{path}: expected a length-delimited value")
    if typ == "time":
        return _decode_time(val)
    if typ == "qty":
        for num, v in parse_fields(val):
            if num == 1 and isinstance(v, bytes):
                return v.decode()
        return None
    if typ == "intstr":  # IntOrString: type=1 (0 int, 1 string), intVal=2, strVal=3
        kind, ival, sval = 0, 0, ""
        for num, v in parse_fields(val):
            if num == 1 and isinstance(v, int):
                kind = v
            elif num == 2 and isinstance(v, int):
                ival = _signed(v)
            elif num == 3 and isinstance(v, bytes):
                sval = v.decode()
        return sval if kind == 1 else ival
    return decode_message(typ, val, path)


def decode_message(schema: str, buf: bytes, path: str = "") -> dict[str, Any]:
    fields = SCHEMAS[schema]
    out: dict[str, Any] = {}
    for num, val in parse_fields(buf):
        spec = fields.get(num)
        if spec is None:
            continue  # unknown field: ignore, as proto does
        name, typ = spec
        sub = f"{path}.{name}" if path else name
        if typ in ("map", "qtymap", "bytesmap"):
            if not isinstance(val, bytes):
                raise ProtobufError(f"{sub}: expected a map entry")
            k, v = _decode_map_entry(val, typ)
            out.setdefault(name, {})[k] = v
        elif typ in ("int?", "bool?"):
            v = _decode_scalar(typ[:-1], val, sub)
            if v:
                out[name] = v
        elif typ == "str" and schema not in ("ObjectMeta",):
            v = _decode_scalar(typ, val, sub)
            if v != "":
                out[name] = v
        elif typ.startswith("["):
            out.setdefault(name, []).append(_decode_scalar(typ[1:-1], val, sub))
        elif not name:  # an embedded struct whose fields JSON shows inline
            out.update(_decode_scalar(typ, val, path))
        else:
            out[name] = _decode_scalar(typ, val, sub)
    if schema == "ObjectMeta":
        for k in _DROP_EMPTY_META:
            if out.get(k) == "":
                del out[k]
        if out.get("generation") == 0:
            del out["generation"]
        for k in ("creationTimestamp", "deletionTimestamp"):
            if k in out and out[k] is None:
                del out[k]
    return out


def decode_unknown(body: bytes) -> tuple[str, str, bytes]:
    """Split a ``k8s\\0`` + runtime.Unknown envelope into (apiVersion, kind, raw)."""
    if not body.startswith(MAGIC):
        raise ProtobufError("missing the k8s protobuf magic prefix")
    api_version = kind = ""
    raw = b""
    for num, val in parse_fields(body[len(MAGIC):]):
        if num == 1 and isinstance(val, bytes):
            for n2, v2 in parse_fields(val):
                if n2 == 1 and isinstance(v2, bytes):
                    api_version = v2.decode()
                elif n2 == 2 and isinstance(v2, bytes):
                    kind = v2.decode()
        elif num == 2 and isinstance(val, bytes):
            raw = val
    return api_version, kind, raw


# (apiVersion, kind) -> top-level schema of the bodies kubectl's typed clients POST.
TOP_LEVEL = MappingProxyType({("autoscaling/v1", "HorizontalPodAutoscaler"): "HPAv1",
             ("autoscaling/v2", "HorizontalPodAutoscaler"): "HPAv2",
             ("v1", "Namespace"): "Namespace", ("apps/v1", "Deployment"): "Deployment",
             ("v1", "Pod"): "Pod", ("v1", "Service"): "Service",
             ("policy/v1", "Eviction"): "Eviction", ("v1", "ConfigMap"): "ConfigMap",
             ("v1", "Secret"): "Secret", ("v1", "ServiceAccount"): "ServiceAccount",
             ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget",
             ("networking.k8s.io/v1", "Ingress"): "Ingress",
             ("authorization.k8s.io/v1", "SelfSubjectAccessReview"): "SelfSubjectAccessReview",
             ("authorization.k8s.io/v1", "SubjectAccessReview"): "SubjectAccessReview",
             ("authorization.k8s.io/v1", "LocalSubjectAccessReview"): "SubjectAccessReview",
             ("authorization.k8s.io/v1", "SelfSubjectRulesReview"): "SelfSubjectRulesReview",
             ("authentication.k8s.io/v1", "SelfSubjectReview"): "SelfSubjectReview",
             ("authentication.k8s.io/v1beta1", "SelfSubjectReview"): "SelfSubjectReview",
             ("rbac.authorization.k8s.io/v1", "Role"): "Role",
             ("rbac.authorization.k8s.io/v1", "ClusterRole"): "ClusterRole",
             ("rbac.authorization.k8s.io/v1", "RoleBinding"): "RoleBinding",
             ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"): "RoleBinding",
             ("batch/v1", "Job"): "Job", ("batch/v1", "CronJob"): "CronJob",
             ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
             ("v1", "ResourceQuota"): "ResourceQuota"})


def decode_object(body: bytes) -> dict[str, Any]:
    """A protobuf request body as the JSON-shaped dict it stands for (kinds in TOP_LEVEL, and
    DeleteOptions)."""
    api_version, kind, raw = decode_unknown(body)
    schema = "DeleteOptions" if kind == "DeleteOptions" else TOP_LEVEL.get((api_version, kind))
    if schema is None:
        known = ", ".join(f"{a} {k}" for a, k in TOP_LEVEL)
        raise ProtobufError(f"protobuf bodies are only supported for {known}; not for "
                            f"{api_version} {kind}: send JSON")
    obj = decode_message(schema, raw)
    obj.pop("status", None)  # create ignores status; proto2 sent zeros anyway
    return {"apiVersion": api_version, "kind": kind, **obj}
