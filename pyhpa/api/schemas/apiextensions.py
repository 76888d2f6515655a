"""Schemas of ``apiextensions.k8s.io/v1`` CustomResourceDefinition (the kinds users add).

A version's ``openAPIV3Schema`` is itself a JSON schema of any depth: it is published as an
object that keeps whatever it is given (the server checks its structure on write).
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    META, Schema, atomic_list, boolean, definition, int32, keyed_list, opaque, string, strings,
    struct, top_level)

X = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."


def definitions() -> dict[str, Schema]:
    return {
        X + "CustomResourceDefinition": top_level(
            "A new kind served by the API server: its names, versions, schema and subresources. "
            "The name must be <plural>.<group>.", "apiextensions.k8s.io", "v1",
            "CustomResourceDefinition",
            {"spec": struct(X + "CustomResourceDefinitionSpec", "The kind being defined.",
                            embedded=True),
             "status": struct(X + "CustomResourceDefinitionStatus",
                              "Whether the kind is served, and under which names. Read-only.",
                              embedded=True)},
            required=("spec",)),
        X + "CustomResourceDefinitionSpec": definition(
            "What a CustomResourceDefinition defines.",
            {"group": string("API group of the kind, a DNS subdomain such as stable.example.com."),
             "names": struct(X + "CustomResourceDefinitionNames", "Names of the kind.",
                             embedded=True),
             "scope": string("Namespaced or Cluster.", enum=("Cluster", "Namespaced")),
             "versions": atomic_list("Versions served; exactly one has storage true.",
                                     X + "CustomResourceDefinitionVersion"),
             "conversion": struct(X + "CustomResourceConversion", "How objects change between "
                                                                   "versions."),
             "preserveUnknownFields": boolean("Deprecated: keep fields the schema does not "
                                              "know. Must be false in v1.")},
            required=("group", "names", "scope", "versions")),
        X + "CustomResourceDefinitionNames": definition(
            "The names a kind answers to.",
            {"plural": string("Resource name in URLs, lower case (widgets)."),
             "singular": string("Singular resource name; the lower-cased kind if empty."),
             "shortNames": atomic_list("Short names for kubectl (wg).", strings()),
             "kind": string("Kind in CamelCase (Widget)."),
             "listKind": string("Kind of its lists; <kind>List if empty."),
             "categories": atomic_list("Groups of resources it belongs to, such as all.",
                                       strings())},
            required=("plural", "kind")),
        X + "CustomResourceDefinitionVersion": definition(
            "One version of a custom kind.",
            {"name": string("Version name, such as v1 or v1beta2."),
             "served": boolean("Whether the version is served by the REST API."),
             "storage": boolean("Whether objects are stored in this version (exactly one)."),
             "deprecated": boolean("Mark the version deprecated (clients get a warning)."),
             "deprecationWarning": string("Warning text instead of the default."),
             "schema": struct(X + "CustomResourceValidation", "Schema of the version's objects."),
             "subresources": struct(X + "CustomResourceSubresources",
                                    "status and scale subresources of the version."),
             "additionalPrinterColumns": atomic_list(
                 "Extra columns of kubectl get.", X + "CustomResourceColumnDefinition"),
             "selectableFields": atomic_list("Fields usable in field selectors.",
                                             X + "SelectableField")},
            required=("name", "served", "storage")),
        X + "CustomResourceValidation": definition(
            "A version's schema.",
            {"openAPIV3Schema": opaque("Structural OpenAPI v3 schema of the whole object: "
                                       "types, defaults, pruning of unknown fields, value "
                                       "checks.")}),
        X + "CustomResourceSubresources": definition(
            "Subresources of a custom kind.",
            {"status": opaque("Present (as {}) to serve /status: status is then written only "
                              "there, and spec changes bump metadata.generation."),
             "scale": struct(X + "CustomResourceSubresourceScale",
                             "Serve /scale, so kubectl scale and autoscalers can size it.")}),
        X + "CustomResourceSubresourceScale": definition(
            "Where the scale subresource finds its numbers.",
            {"specReplicasPath": string("JSON path of the desired replicas, under .spec "
                                        "(.spec.replicas)."),
             "statusReplicasPath": string("JSON path of the observed replicas, under .status."),
             "labelSelectorPath": string("JSON path of the pod selector string, under .status "
                                         "or .spec; an autoscaler needs it.")},
            required=("specReplicasPath", "statusReplicasPath")),
        X + "CustomResourceColumnDefinition": definition(
            "One kubectl get column.",
            {"name": string("Column header."),
             "type": string("integer, number, string, boolean or date."),
             "format": string("Format hint of the type."),
             "description": string("What the column shows."),
             "priority": int32("0 shows it always, higher only with -o wide."),
             "jsonPath": string("JSON path of the value in each object.")},
            required=("name", "type", "jsonPath")),
        X + "SelectableField": definition(
            "A field usable in field selectors.",
            {"jsonPath": string("JSON path of the field (a string, integer or boolean).")},
            required=("jsonPath",)),
        X + "CustomResourceConversion": definition(
            "Conversion between versions.",
            {"strategy": string("None (only apiVersion changes) or Webhook.",
                                enum=("None", "Webhook")),
             "webhook": opaque("The conversion webhook (not called by pyhpa's cluster).")},
            required=("strategy",)),
        X + "CustomResourceDefinitionStatus": definition(
            "State of a CustomResourceDefinition.",
            {"conditions": keyed_list("Current conditions (Established, NamesAccepted, ...).",
                                      X + "CustomResourceDefinitionCondition", ("type",)),
             "acceptedNames": struct(X + "CustomResourceDefinitionNames",
                                     "The names actually served."),
             "storedVersions": atomic_list("Versions objects were ever stored in.", strings())}),
        X + "CustomResourceDefinitionCondition": definition(
            "One condition of a CustomResourceDefinition.",
            {"type": string("Established, NamesAccepted, NonStructuralSchema, Terminating, ..."),
             "status": string("True, False or Unknown.", enum=("False", "True", "Unknown")),
             "lastTransitionTime": struct(META + "Time", "When status last changed."),
             "reason": string("Machine-readable reason."),
             "message": string("Human-readable detail.")},
            required=("type", "status")),
    }
