"""API model speed: what the embedded API server does per HPA write.

One object = JSON bytes -> struct (``loads_json``) -> defaulting -> create validation ->
JSON bytes (``dumps_json``). Goal: >= 20,000 objects/s on one core. Also reported: the YAML
manifest path (``load_stream`` + ``load_hpa``) and v2 -> v1 conversion.
"""

from __future__ import annotations

import time

from pyhpa.api import types as T
from pyhpa.api.codec import dumps_json, loads_json
from pyhpa.api.conversion import convert_hpa_wire
from pyhpa.api.defaults import default_hpa
from pyhpa.api.loader import load_hpa, load_stream
from pyhpa.api.validation import validate_hpa

TYPICAL = b"""{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler",
"metadata":{"name":"web","namespace":"default","labels":{"app":"web"},"resourceVersion":"12","creationTimestamp":"2026-07-06T10:00:00Z"},
"spec":{"scaleTargetRef":{"kind":"Deployment","name":"web","apiVersion":"apps/v1"},"minReplicas":2,"maxReplicas":10,
"metrics":[{"type":"Resource","resource":{"name":"cpu","target":{"type":"Utilization","averageUtilization":60}}},
{"type":"Pods","pods":{"metric":{"name":"packets-per-second"},"target":{"type":"AverageValue","averageValue":"1k"}}}],
"behavior":{"scaleDown":{"stabilizationWindowSeconds":120,"policies":[{"type":"Pods","value":1,"periodSeconds":60}]}}},
"status":{"currentReplicas":3,"desiredReplicas":3,"currentMetrics":[{"type":"Resource","resource":{"name":"cpu","current":{"averageValue":"45m","averageUtilization":45}}}],
"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-07-06T10:15:00Z","reason":"ReadyForNewScale","message":"recommended size matches current size"}]}}"""


def _rate(fn, seconds: float = 1.5) -> float:
    for _ in range(200):
        fn()
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(500):
            fn()
        n += 500
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def _write_path() -> None:
    hpa = default_hpa(loads_json(TYPICAL, T.HorizontalPodAutoscaler))
    if validate_hpa(hpa):
        raise AssertionError("typical HPA must be valid")
    dumps_json(hpa)


def run() -> list[tuple[str, float, str]]:
    yaml_text = dumps_yaml_text()
    raw = loads_json(TYPICAL, T.HorizontalPodAutoscaler)
    from pyhpa.api.codec import to_wire

    wire = to_wire(raw)
    return [
        ("parse_default_validate_dump", _rate(_write_path), "objects/s"),
        ("yaml_load_hpa", _rate(lambda: load_hpa(load_stream(yaml_text, "bench.yaml")[0]), 1.0), "objects/s"),
        ("convert_v2_to_v1", _rate(lambda: convert_hpa_wire(wire, "autoscaling/v1"), 1.0), "objects/s"),
    ]


def dumps_yaml_text() -> str:
    from pyhpa.api.codec import dumps_yaml

    return dumps_yaml(loads_json(TYPICAL, T.HorizontalPodAutoscaler))


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.0f} {unit}")
