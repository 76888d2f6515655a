"""Schemas of core/v1 Volumes: the common sources in full (emptyDir, configMap, secret,
projected, persistentVolumeClaim, hostPath...), the other plug-ins as objects that keep what
they are given.
"""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    CORE_V1, Schema, atomic_list, boolean, definition, int32, int64, label_selector, object_meta,
    opaque, quantity, quantity_map, string, string_map, strings, struct, top_level)

P = CORE_V1


def _volume_sources() -> dict[str, Schema]:
    modelled = {
        "emptyDir": struct(P + "EmptyDirVolumeSource", "A scratch directory that lives as long "
                                                       "as the pod."),
        "hostPath": struct(P + "HostPathVolumeSource", "A file or directory of the node."),
        "configMap": struct(P + "ConfigMapVolumeSource", "The keys of a ConfigMap as files."),
        "secret": struct(P + "SecretVolumeSource", "The keys of a Secret as files."),
        "persistentVolumeClaim": struct(P + "PersistentVolumeClaimVolumeSource",
                                        "A PersistentVolumeClaim in the pod's namespace."),
        "projected": struct(P + "ProjectedVolumeSource", "Several sources (secrets, config "
                                                         "maps, downward API, tokens) merged "
                                                         "into one directory."),
        "downwardAPI": struct(P + "DownwardAPIVolumeSource", "Pod fields and container "
                                                             "resources as files."),
        "csi": struct(P + "CSIVolumeSource", "An inline volume from a CSI driver."),
        "nfs": struct(P + "NFSVolumeSource", "An NFS export."),
        "image": struct(P + "ImageVolumeSource", "The content of an OCI image or artifact, "
                                                 "read-only."),
        "ephemeral": struct(P + "EphemeralVolumeSource", "A volume provisioned for this pod "
                                                         "from a claim template and deleted "
                                                         "with it."),
    }
    legacy = ("awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "fc",
              "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "iscsi",
              "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos",
              "vsphereVolume")
    for name in legacy:
        modelled[name] = opaque(f"A {name} volume (a storage plug-in not modelled in detail "
                                "here; its fields are kept as given).")
    return modelled


def _key_to_path_items(what: str) -> Schema:
    return atomic_list(f"Which keys of the {what} to project and where; all keys, each as a "
                       "file named after it, if empty.", P + "KeyToPath")


def _volume_types() -> dict[str, Schema]:
    mode = "File mode bits (0000 to 0777, or 0 to 511 in decimal); 0644 by default."
    return {
        P + "Volume": definition(
            "A named volume; set exactly one source besides name.",
            {"name": string("Name the containers' volumeMounts refer to (a DNS label)."),
             **_volume_sources()},
            required=("name",)),
        P + "EmptyDirVolumeSource": definition(
            "A scratch directory.",
            {"medium": string("Storage medium: empty for the node's disk, Memory for tmpfs."),
             "sizeLimit": quantity("Upper bound of the directory's size.")}),
        P + "HostPathVolumeSource": definition(
            "A path on the node.",
            {"path": string("Path on the node."),
             "type": string("What must exist there: DirectoryOrCreate, Directory, FileOrCreate, "
                            "File, Socket, CharDevice, BlockDevice, or empty for no check.")},
            required=("path",)),
        P + "KeyToPath": definition(
            "One key projected to a file.",
            {"key": string("Key to project."),
             "path": string("Relative file path; must not contain '..'."),
             "mode": int32(mode)},
            required=("key", "path")),
        P + "ConfigMapVolumeSource": definition(
            "A ConfigMap as files.",
            {"name": string("Name of the ConfigMap."),
             "items": _key_to_path_items("ConfigMap"),
             "defaultMode": int32(mode),
             "optional": boolean("Mount an empty directory if the ConfigMap is missing.")}),
        P + "SecretVolumeSource": definition(
            "A Secret as files.",
            {"secretName": string("Name of the Secret."),
             "items": _key_to_path_items("Secret"),
             "defaultMode": int32(mode),
             "optional": boolean("Mount an empty directory if the Secret is missing.")}),
        P + "PersistentVolumeClaimVolumeSource": definition(
            "A claim in the pod's namespace.",
            {"claimName": string("Name of the PersistentVolumeClaim."),
             "readOnly": boolean("Mount read-only.")},
            required=("claimName",)),
        P + "ProjectedVolumeSource": definition(
            "Several sources in one directory.",
            {"sources": atomic_list("The sources.", P + "VolumeProjection"),
             "defaultMode": int32(mode)}),
        P + "VolumeProjection": definition(
            "One source of a projected volume; set exactly one field.",
            {"configMap": struct(P + "ConfigMapProjection", "Keys of a ConfigMap."),
             "secret": struct(P + "SecretProjection", "Keys of a Secret."),
             "downwardAPI": struct(P + "DownwardAPIProjection", "Pod fields and resources."),
             "serviceAccountToken": struct(P + "ServiceAccountTokenProjection",
                                           "A bound service account token."),
             "clusterTrustBundle": struct(P + "ClusterTrustBundleProjection",
                                          "Certificates of ClusterTrustBundle objects.")}),
        P + "ClusterTrustBundleProjection": definition(
            "Certificates of one or more ClusterTrustBundles written to a file.",
            {"name": string("Name of one ClusterTrustBundle; excludes signerName."),
             "signerName": string("Take all bundles of this signer (narrowed by "
                                  "labelSelector)."),
             "labelSelector": label_selector("With signerName: bundles to include."),
             "optional": boolean("Write nothing instead of failing when nothing matches."),
             "path": string("Relative file path.")},
            required=("path",)),
        P + "ConfigMapProjection": definition(
            "Keys of a ConfigMap in a projected volume.",
            {"name": string("Name of the ConfigMap."), "items": _key_to_path_items("ConfigMap"),
             "optional": boolean("Skip it if the ConfigMap is missing.")}),
        P + "SecretProjection": definition(
            "Keys of a Secret in a projected volume.",
            {"name": string("Name of the Secret."), "items": _key_to_path_items("Secret"),
             "optional": boolean("Skip it if the Secret is missing.")}),
        P + "DownwardAPIProjection": definition(
            "Pod information in a projected volume.",
            {"items": atomic_list("Files to write.", P + "DownwardAPIVolumeFile")}),
        P + "ServiceAccountTokenProjection": definition(
            "A token for the pod's service account.",
            {"audience": string("Intended audience; the API server's if empty."),
             "expirationSeconds": int64("Requested lifetime; default 3600, at least 600."),
             "path": string("Relative file path of the token.")},
            required=("path",)),
        P + "DownwardAPIVolumeSource": definition(
            "Pod information as files.",
            {"items": atomic_list("Files to write.", P + "DownwardAPIVolumeFile"),
             "defaultMode": int32(mode)}),
        P + "DownwardAPIVolumeFile": definition(
            "One file with pod information.",
            {"path": string("Relative file path."),
             "fieldRef": struct(P + "ObjectFieldSelector", "A pod field (metadata.labels, "
                                                           "metadata.annotations, ...)."),
             "resourceFieldRef": struct(P + "ResourceFieldSelector", "A container's request "
                                                                     "or limit."),
             "mode": int32(mode)},
            required=("path",)),
        P + "CSIVolumeSource": definition(
            "An inline CSI volume.",
            {"driver": string("Name of the CSI driver."),
             "readOnly": boolean("Mount read-only."),
             "fsType": string("Filesystem type, passed to the driver."),
             "volumeAttributes": string_map("Driver-specific settings."),
             "nodePublishSecretRef": struct(P + "LocalObjectReference", "Secret passed to the "
                                                                        "driver.")},
            required=("driver",)),
        P + "NFSVolumeSource": definition(
            "An NFS export.",
            {"server": string("Host name or IP of the NFS server."),
             "path": string("Exported path."),
             "readOnly": boolean("Mount read-only.")},
            required=("server", "path")),
        P + "EphemeralVolumeSource": definition(
            "A per-pod volume claimed from a template.",
            {"volumeClaimTemplate": struct(P + "PersistentVolumeClaimTemplate", "The claim to "
                                           "create; it is named <pod>-<volume> and owned by "
                                           "the pod.")}),
        P + "PersistentVolumeClaimTemplate": definition(
            "A claim to create, as metadata and spec.",
            {"metadata": object_meta("Labels and annotations of the created claim."),
             "spec": struct(P + "PersistentVolumeClaimSpec", "Spec of the created claim.",
                            embedded=True)},
            required=("spec",)),
        P + "PersistentVolumeClaim": top_level(
            "A request for storage, bound to a PersistentVolume (made from its StorageClass "
            "when none fits); also a StatefulSet's claim template.", "", "v1",
            "PersistentVolumeClaim",
            {"spec": struct(P + "PersistentVolumeClaimSpec", "The storage requested.",
                            embedded=True),
             "status": struct(P + "PersistentVolumeClaimStatus", "Phase and what the claim "
                              "got. Read-only.", embedded=True)}),
        P + "PersistentVolumeClaimSpec": definition(
            "The storage a claim requests.",
            {"accessModes": atomic_list("ReadWriteOnce, ReadOnlyMany, ReadWriteMany or "
                                        "ReadWriteOncePod.", strings()),
             "selector": label_selector("Labels of the volumes that may be bound."),
             "resources": struct(P + "VolumeResourceRequirements", "Minimum (and maximum) "
                                 "size.", embedded=True),
             "volumeName": string("Bind to this PersistentVolume."),
             "storageClassName": string("StorageClass to provision from; the default class if "
                                        "unset, none if empty."),
             "volumeMode": string("Filesystem (default) or Block.",
                                  enum=("Block", "Filesystem")),
             "dataSource": struct(P + "TypedLocalObjectReference", "Populate the volume from a "
                                  "snapshot or another claim."),
             "dataSourceRef": struct(P + "TypedObjectReference", "Populate the volume from any "
                                     "populator object."),
             "volumeAttributesClassName": string("VolumeAttributesClass of the volume.")}),
        P + "VolumeResourceRequirements": definition(
            "Size of a claim.",
            {"limits": quantity_map("Largest size (storage)."),
             "requests": quantity_map("Smallest size (storage), such as 1Gi.")}),
        P + "TypedLocalObjectReference": definition(
            "A reference to an object of any kind in the same namespace.",
            {"apiGroup": string("API group; core if empty."), "kind": string("Kind."),
             "name": string("Name.")},
            required=("kind", "name"), atomic=True),
        P + "TypedObjectReference": definition(
            "A reference to an object of any kind.",
            {"apiGroup": string("API group; core if empty."), "kind": string("Kind."),
             "name": string("Name."), "namespace": string("Namespace; the claim's if empty.")},
            required=("kind", "name")),
        P + "ImageVolumeSource": definition(
            "An OCI image or artifact as a read-only volume.",
            {"reference": string("Image or artifact reference."),
             "pullPolicy": string("Always, Never or IfNotPresent.",
                                  enum=("Always", "IfNotPresent", "Never"))}),
    }


def definitions() -> dict[str, Schema]:
    return _volume_types()
