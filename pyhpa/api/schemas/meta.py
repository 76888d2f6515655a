"""Schemas of the shared apimachinery types: object and list metadata, selectors, Status, ..."""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    INT_OR_STRING, LABEL_SELECTOR, LIST_META, META, MICRO_TIME, OBJECT_META, QUANTITY, TIME,
    Schema, atomic_list, boolean, definition, int32, int64, keyed_list, list_meta, set_list,
    string, string_map, strings, struct, time)


def definitions() -> dict[str, Schema]:
    return {
        QUANTITY: {
            "description": "A decimal or binary amount with an optional suffix: plain numbers "
                           "(\"2\", \"0.5\"), milli-units (\"500m\" = 0.5), decimal SI "
                           "(k, M, G, T, P, E) or binary IEC (Ki, Mi, Gi, Ti, Pi, Ei) multiples, "
                           "or an exponent (\"1e3\"). The server stores it in canonical form.",
            "oneOf": [{"type": "string"}, {"type": "number"}],
        },
        INT_OR_STRING: {
            "description": "Either a whole number or a string; for most fields the string form "
                           "is a percentage such as \"25%\" or a named port.",
            "format": "int-or-string",
            "oneOf": [{"type": "integer"}, {"type": "string"}],
        },
        TIME: {"description": "A point in time in RFC 3339 form with second precision, in UTC "
                              "(2024-05-01T12:00:00Z).",
               "type": "string", "format": "date-time"},
        MICRO_TIME: {"description": "A point in time in RFC 3339 form with microsecond precision "
                                    "(2024-05-01T12:00:00.000123Z).",
                     "type": "string", "format": "date-time"},
        META + "FieldsV1": {"description": "A set of field paths in the server-side apply "
                                           "\"FieldsV1\" trie form ({\"f:spec\": {\"f:replicas\": "
                                           "{}}}).",
                            "type": "object"},
        OBJECT_META: definition(
            "Metadata every stored object carries: identity, labels and annotations, owners, "
            "finalizers and the bookkeeping the server maintains.",
            {
                "name": string("Unique name within the namespace (or cluster, for cluster-scoped "
                               "kinds). Usually a DNS subdomain: lowercase letters, digits, '-' "
                               "and '.', at most 253 characters. Cannot be changed."),
                "generateName": string("Prefix from which the server builds a unique name when "
                                       "name is empty; a random suffix is appended."),
                "namespace": string("Namespace the object lives in. Empty for cluster-scoped "
                                    "kinds; defaults to the request's namespace."),
                "selfLink": string("Legacy URL of the object; no longer filled in."),
                "uid": string("Identifier the server assigns at creation; unique for all time, "
                              "so a re-created object gets a new one. Read-only."),
                "resourceVersion": string("Opaque version the server bumps on every change. Send "
                                          "it back on update to be refused (409 Conflict) if "
                                          "someone else changed the object meanwhile."),
                "generation": int64("Sequence number of spec changes, maintained by the server. "
                                    "Read-only."),
                "creationTimestamp": time("When the server created the object. Read-only."),
                "deletionTimestamp": time("When deletion was requested; the object stays until "
                                          "its finalizers are gone. Read-only."),
                "deletionGracePeriodSeconds": int64("Seconds the object is given to stop before "
                                                    "it is removed, once deletion was requested. "
                                                    "Read-only."),
                "labels": string_map("Key/value pairs used by selectors to group and find "
                                     "objects (for example app: web)."),
                "annotations": string_map("Key/value pairs for tools and people; not used for "
                                          "selection. pyhpa reads sim.pyhpa.io/* annotations "
                                          "on workloads to simulate load."),
                "ownerReferences": keyed_list("Objects this one belongs to; when every owner is "
                                              "gone, the garbage collector deletes it. At most "
                                              "one entry may be the managing controller.",
                                              META + "OwnerReference", ("uid",)),
                "finalizers": set_list("Names of pending clean-up steps; deletion completes only "
                                       "once the list is empty.", strings(), strategy="merge"),
                "managedFields": atomic_list("Which manager owns which fields, as recorded by "
                                             "server-side apply and updates. Internal "
                                             "bookkeeping; rarely edited by hand.",
                                             META + "ManagedFieldsEntry"),
            }),
        LIST_META: definition(
            "Metadata of a list response.",
            {
                "selfLink": string("Legacy URL of the list; no longer filled in."),
                "resourceVersion": string("Version of the collection at the time of the list; "
                                          "start a watch from here to see every later change."),
                "continue": string("Token for the next page when the request set a limit; empty "
                                   "on the last page. Expires after a while (410 Gone)."),
                "remainingItemCount": int64("Estimate of how many items follow this page; only "
                                            "set for paged lists without a selector."),
            }),
        META + "OwnerReference": definition(
            "A reference to an owning object in the same namespace.",
            {
                "apiVersion": string("API version of the owner (apps/v1)."),
                "kind": string("Kind of the owner (ReplicaSet)."),
                "name": string("Name of the owner."),
                "uid": string("UID of the owner; a re-created owner with the same name does not "
                              "match."),
                "controller": boolean("True if the owner is the controller that manages this "
                                      "object."),
                "blockOwnerDeletion": boolean("With foreground deletion, the owner is not removed "
                                              "until this object is gone."),
            }, required=("apiVersion", "kind", "name", "uid"), atomic=True),
        META + "ManagedFieldsEntry": definition(
            "The fields one manager owns after one kind of operation.",
            {
                "manager": string("Name of the client that made the change (kubectl-client-side-"
                                  "apply, kubectl-edit, a controller name...)."),
                "operation": string("Apply (server-side apply) or Update (any other write).",
                                    enum=("Apply", "Update")),
                "apiVersion": string("Version of the object the field set is expressed in."),
                "time": time("When the manager last changed one of these fields."),
                "fieldsType": string("Format of fieldsV1; always FieldsV1."),
                "fieldsV1": struct(META + "FieldsV1", "The owned field paths."),
                "subresource": string("Subresource the write went through (status, scale), empty "
                                      "for the main resource."),
            }),
        LABEL_SELECTOR: definition(
            "Selects objects by their labels: all matchLabels pairs and all matchExpressions "
            "must hold. An empty selector matches everything; a missing one matches nothing.",
            {
                "matchLabels": string_map("Labels that must be present with exactly these "
                                          "values."),
                "matchExpressions": atomic_list("Set-based conditions on label values.",
                                                META + "LabelSelectorRequirement"),
            }, atomic=True),
        META + "LabelSelectorRequirement": definition(
            "One set-based condition: key operator values.",
            {
                "key": string("Label key the condition tests."),
                "operator": string("In, NotIn, Exists or DoesNotExist.",
                                   enum=("DoesNotExist", "Exists", "In", "NotIn")),
                "values": atomic_list("Values for In and NotIn (at least one); must be empty for "
                                      "Exists and DoesNotExist.", strings()),
            }, required=("key", "operator")),
        META + "Condition": definition(
            "One observation of an object's state, in the shape newer kinds share.",
            {
                "type": string("Condition type, in CamelCase."),
                "status": string("True, False or Unknown.", enum=("False", "True", "Unknown")),
                "observedGeneration": int64("metadata.generation the condition was set for."),
                "lastTransitionTime": time("When status last changed."),
                "reason": string("Machine-readable reason of the last transition, in CamelCase."),
                "message": string("Human-readable detail."),
            }, required=("type", "status", "lastTransitionTime", "reason", "message")),
        META + "Status": definition(
            "The result of a request that did not return an object: errors, and some deletes.",
            {
                "apiVersion": string("Schema version of this Status; v1."),
                "kind": string("Status."),
                "metadata": list_meta(),
                "status": string("Success or Failure."),
                "message": string("Human-readable explanation."),
                "reason": string("Machine-readable reason (NotFound, AlreadyExists, Conflict, "
                                 "Invalid, ...); empty when none applies."),
                "details": struct(META + "StatusDetails", "The object the status is about and, "
                                  "for Invalid, one cause per bad field."),
                "code": int32("HTTP status code of the response."),
            }, gvk=("", "v1", "Status")),
        META + "StatusDetails": definition(
            "What a Status is about.",
            {
                "name": string("Name of the object concerned."),
                "group": string("API group of the object concerned."),
                "kind": string("Kind (or resource) of the object concerned."),
                "uid": string("UID of the object concerned, when known."),
                "causes": atomic_list("Individual problems, for example one per invalid field.",
                                      META + "StatusCause"),
                "retryAfterSeconds": int32("Suggested seconds to wait before retrying."),
            }),
        META + "StatusCause": definition(
            "One problem behind a failed request.",
            {
                "reason": string("Machine-readable kind of problem (FieldValueRequired, "
                                 "FieldValueInvalid, ...)."),
                "message": string("Human-readable explanation."),
                "field": string("Path of the offending field, such as spec.maxReplicas or "
                                "spec.metrics[0].type."),
            }),
        META + "DeleteOptions": definition(
            "Options of a delete request.",
            {
                "apiVersion": string("Schema version of these options."),
                "kind": string("DeleteOptions."),
                "gracePeriodSeconds": int64("Seconds the object gets to stop; 0 means at once. "
                                            "Unset uses the kind's default."),
                "preconditions": struct(META + "Preconditions", "Conditions the object must "
                                        "still meet for the delete to proceed."),
                "orphanDependents": boolean("Deprecated: use propagationPolicy=Orphan."),
                "propagationPolicy": string("What happens to dependents: Orphan (keep them), "
                                            "Background (delete later) or Foreground (delete "
                                            "them first).",
                                            enum=("Background", "Foreground", "Orphan")),
                "dryRun": atomic_list("All: validate and report without deleting.", strings()),
                "ignoreStoreReadErrorWithClusterBreakingPotential": boolean(
                    "Force-delete an object the server cannot decode. Dangerous."),
            }, gvk=("", "v1", "DeleteOptions")),
        META + "Preconditions": definition(
            "Conditions checked before a delete.",
            {
                "uid": string("The object must still have this UID."),
                "resourceVersion": string("The object must still be at this version."),
            }),
        META + "Patch": {"description": "A patch body: JSON patch, JSON merge patch, strategic "
                                        "merge patch or an apply configuration.",
                         "type": "object"},
    }
