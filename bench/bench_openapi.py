"""OpenAPI documents: what building them costs the server, their size, and what kubectl apply
costs with them (kubectl parses them on every create/apply/edit/replace).

Figures: CPU time to build every document once (schemas, the v2 protobuf, all v3 group-version
documents) and to serve them from the cache; their sizes; and, when kubectl 1.33/1.27 are
installed, `kubectl apply -f` of an unchanged Deployment against `pyhpa cluster`: the fastest
wall-clock run and the median CPU time of the kubectl process.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

DEPLOYMENT = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: bench, labels: {app: bench}}
spec:
  replicas: 1
  selector: {matchLabels: {app: bench}}
  template:
    metadata: {labels: {app: bench}}
    spec:
      containers:
      - name: web
        image: nginx
        ports: [{containerPort: 80}]
        env: [{name: A, value: "1"}]
        resources: {requests: {cpu: 100m}}
        readinessProbe: {httpGet: {path: /, port: 80}}
"""


def _documents() -> list[tuple[str, float, str]]:
    from pyhpa.cluster.apiserver.openapi import Documents
    from pyhpa.cluster.apiserver.resources import Registry
    from pyhpa.api.schemas import BuiltinSchemas

    start = time.process_time()
    docs = Documents(Registry(), "v1.33.1-pyhpa", BuiltinSchemas.build())
    v2 = docs.v2()
    import json
    paths = json.loads(docs.v3_index())["paths"]
    v3 = sum(len(docs.v3(p) or b"") for p in paths)
    build = time.process_time() - start
    start = time.process_time()
    for _ in range(1000):
        docs.v2()
        docs.v3("apis/autoscaling/v2")
    cached = (time.process_time() - start) / 1000
    return [("build_all_documents_cpu", build * 1000, "ms"),
            ("serve_cached_document_cpu", cached * 1e6, "us"),
            ("v2_protobuf_size", len(v2) / 1024, "KiB"),
            ("v3_documents_size", v3 / 1024, "KiB")]


def _kubectl(minor: int) -> str | None:
    found = shutil.which("kubectl")
    if not found:
        return None
    path = Path(os.path.realpath(found)).parent / f"kubectl.1.{minor}"
    return str(path) if path.exists() else None


def _apply(tmp: Path) -> list[tuple[str, float, str]]:
    binaries = {m: b for m in (33, 27) if (b := _kubectl(m))}
    if not binaries:
        return []
    proc = subprocess.Popen([sys.executable, "-m", "pyhpa.cli", "cluster", "--listen",
                             "127.0.0.1:0", "--data-dir", str(tmp)], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if re.search(r"serving https://", line):
                break
        manifest = tmp / "dep.yaml"
        manifest.write_text(DEPLOYMENT)
        for minor, binary in binaries.items():
            env = dict(os.environ, HOME=str(tmp / f"home{minor}"))
            cmd = [binary, "--kubeconfig", str(tmp / "kubeconfig"), "apply", "-f", str(manifest)]
            subprocess.run(cmd, env=env, check=True, capture_output=True)
            walls, cpus = [], []
            for _ in range(20):
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(cmd, env=env, check=True, capture_output=True)
                walls.append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            out += [(f"kubectl_1_{minor}_apply_unchanged_wall_min", min(walls) * 1000, "ms"),
                    (f"kubectl_1_{minor}_apply_unchanged_cpu_median",
                     statistics.median(cpus) * 1000, "ms")]
    finally:
        proc.terminate()
        proc.wait(10)
    return out


def run() -> list[tuple[str, float, str]]:
    results = _documents()
    with tempfile.TemporaryDirectory(prefix="pyhpa-bench-openapi-") as tmp:
        results += _apply(Path(tmp))
    return results


if __name__ == "__main__":
    for name, value, unit in run():
        print(f"{name}: {value:,.2f} {unit}")
