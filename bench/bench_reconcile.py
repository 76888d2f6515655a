"""`pyhpa reconcile` on a generated snapshot of 1,000 HPAs and 10,000 pods (goal: under 3 s wall).

Measures the installed console script end to end (process start, read, one pass, write) with a
YAML stream and with a JSON List, plus the in-process read and pass alone so a regression can be
placed. These 21,000 documents are read by :mod:`pyhpa.api.goyaml` (libyaml's parser and
composer through PyYAML, then kubectl's scalar rules); most of ``load_yaml`` is the composing.
"""

from __future__ import annotations

import json
import pathlib
import subprocess
import sys
import tempfile
import time

import yaml

HPAS = 1000
PODS_PER_HPA = 10
NOW = "2026-01-01T00:10:00Z"


def snapshot_docs() -> list[dict]:
    docs: list[dict] = []
    for h in range(HPAS):
        name, ns = f"app-{h}", f"ns-{h % 20}"
        labels = {"app": name}
        docs.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": ns},
                     "spec": {"replicas": PODS_PER_HPA, "selector": {"matchLabels": labels}}, "status": {"replicas": PODS_PER_HPA}})
        for p in range(PODS_PER_HPA):
            pod = f"{name}-{p}"
            docs.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": pod, "namespace": ns, "labels": labels},
                         "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "500m"}}}]},
                         "status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
                                    "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:10Z"}]}})
            docs.append({"apiVersion": "metrics.k8s.io/v1beta1", "kind": "PodMetrics",
                         "metadata": {"name": pod, "namespace": ns, "labels": labels}, "timestamp": "2026-01-01T00:09:45Z",
                         "window": "30s", "containers": [{"name": "app", "usage": {"cpu": f"{200 + (h * 7 + p * 13) % 400}m"}}]})
        docs.append({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name, "namespace": ns},
                     "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
                              "minReplicas": 1, "maxReplicas": 50,
                              "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 60}}}]}})
    return docs


def run() -> list[tuple[str, float, str]]:
    from pyhpa.api.loader import load_files
    from pyhpa.offline.snapshot import reconcile_snapshot
    from pyhpa.api.timefmt import parse_time
    from pyhpa.engine.config import ControllerConfig

    results: list[tuple[str, float, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "snapshot.yaml"
        loader = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
        path.write_text(yaml.dump_all(snapshot_docs(), Dumper=loader, sort_keys=False))
        pyhpa = pathlib.Path(sys.executable).parent / "pyhpa"
        started = time.perf_counter()
        proc = subprocess.run([str(pyhpa), "reconcile", "-f", str(path), "--now", NOW], capture_output=True, text=True)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        results.append(("command_yaml_in_yaml_out_wall", wall, "s"))

        # The same snapshot as one JSON List (what `kubectl get -o json` writes), JSON out.
        jpath = pathlib.Path(tmp) / "snapshot.json"
        jpath.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": snapshot_docs()}))
        started = time.perf_counter()
        proc = subprocess.run([str(pyhpa), "reconcile", "-f", str(jpath), "--now", NOW, "-o", "json"], capture_output=True, text=True)
        jwall = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(proc.stderr)
        results.append(("command_json_in_json_out_wall", jwall, "s"))
        results.append(("goal_under_3s_met_json", 1.0 if jwall < 3.0 else 0.0, "bool"))
        results.append(("goal_under_3s_met_yaml", 1.0 if wall < 3.0 else 0.0, "bool"))

        started = time.perf_counter()
        docs = load_files([str(path)])
        loaded = time.perf_counter()
        reconcile_snapshot(docs, ControllerConfig(), parse_time(NOW))
        done = time.perf_counter()
        results.append(("load_yaml", loaded - started, "s"))
        results.append(("pass_1000_hpas", done - loaded, "s"))
        results.append(("per_hpa", (done - loaded) / HPAS * 1e3, "ms"))
    return results


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.3f} {unit}")
