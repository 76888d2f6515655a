"""Schemas of ``coordination.k8s.io/v1`` Lease (leader election of controllers)."""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    Schema, definition, int32, micro_time, string, struct, top_level)

C = "io.k8s.api.coordination.v1."


def definitions() -> dict[str, Schema]:
    return {
        C + "Lease": top_level(
            "A lock with an expiry, used for leader election: the holder renews it; when it "
            "expires another candidate may take it.", "coordination.k8s.io", "v1", "Lease",
            {"spec": struct(C + "LeaseSpec", "Holder and timing of the lease.", embedded=True)}),
        C + "LeaseSpec": definition(
            "Holder and timing of a lease.",
            {
                "holderIdentity": string("Identity of the current holder."),
                "leaseDurationSeconds": int32("Seconds after renewTime the lease stays valid."),
                "acquireTime": micro_time("When the current holder acquired the lease."),
                "renewTime": micro_time("When the holder last renewed the lease."),
                "leaseTransitions": int32("How many times the holder changed."),
                "strategy": string("Strategy for picking a leader (coordinated leader "
                                   "election)."),
                "preferredHolder": string("Holder that should take over (coordinated leader "
                                          "election)."),
            }),
    }
