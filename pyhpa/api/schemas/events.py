"""Schemas of ``events.k8s.io/v1`` Event (another view of the stored core Events)."""

from __future__ import annotations

from pyhpa.api.schemas.build import (
    Schema, definition, int32, micro_time, string, struct, time, top_level)
from pyhpa.api.schemas.core import EVENT_SOURCE, OBJECT_REFERENCE

E = "io.k8s.api.events.v1."


def definitions() -> dict[str, Schema]:
    return {
        E + "Event": top_level(
            "A report of something that happened to an object, in the newer events API. The "
            "same events are visible as core v1 Events (regarding = involvedObject, note = "
            "message).", "events.k8s.io", "v1", "Event",
            {
                "eventTime": micro_time("When the event was first observed."),
                "series": struct(E + "EventSeries", "Repetitions of this event."),
                "reportingController": string("Controller that emitted the event, such as "
                                               "horizontal-pod-autoscaler."),
                "reportingInstance": string("Instance of that controller."),
                "action": string("What was done or failed."),
                "reason": string("Short machine-readable reason (SuccessfulRescale, ...)."),
                "regarding": struct(OBJECT_REFERENCE, "The object the event is about.",
                                    embedded=True),
                "related": struct(OBJECT_REFERENCE, "A second object involved."),
                "note": string("Human-readable description, at most 1 kB."),
                "type": string("Normal or Warning.", enum=("Normal", "Warning")),
                "deprecatedSource": struct(EVENT_SOURCE, "Reporter, in the core Event form.",
                                           embedded=True),
                "deprecatedFirstTimestamp": time("First occurrence, in the core Event form."),
                "deprecatedLastTimestamp": time("Last occurrence, in the core Event form."),
                "deprecatedCount": int32("Occurrences, in the core Event form."),
            }, required=("eventTime",)),
        E + "EventSeries": definition(
            "Repetitions of an event.",
            {"count": int32("Occurrences so far."),
             "lastObservedTime": micro_time("Time of the last occurrence.")},
            required=("count", "lastObservedTime")),
    }
