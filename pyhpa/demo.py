"""`pyhpa demo`: the embedded cluster, the live controller and a load pattern, watched live.

What it shows: a Deployment `web` (CPU request 200m) with an HPA (CPU 50 %, 1..10 replicas) while
the simulated demand rises, holds and falls; the terminal view refreshes every second with
replicas, desired replicas, each metric's current/target, the conditions and the latest events.
The kubeconfig is printed first so `kubectl get hpa -w` can run beside it. The load is the
`sim.pyhpa.io/cpu` annotation of the Deployment (the embedded cluster's workload simulation
spreads it over the Ready pods), so `kubectl annotate` changes it too.

Everything time-like scales with `--duration` (4 minutes gives upstream-like values: a 5 s sync,
metrics over 15 s, a 30 s scale-down window, 15 s scaling policy periods), so that any duration
tells the whole story: rise, plateau, fall, and back to the minimum before the end. The HPA
leaves its scale-down window unset, so `--horizontal-pod-autoscaler-downscale-stabilization`
decides it, as upstream's flag does for such HPAs.

It composes the embedded cluster and the live controller, so it sits above both packages.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import typer

from pyhpa.controller.flag_options import (CpuInitializationPeriod, DownscaleDelay, EmulatedVersion,
                                           FeatureGatesOption, Tolerance, UpscaleDelay, hpa_flag)
from pyhpa.live.commands import fail
from pyhpa.live.flags import PflagCommand

NS = "default"
NAME = "web"
DEPLOY = f"/apis/apps/v1/namespaces/{NS}/deployments"
HPAS = f"/apis/autoscaling/v2/namespaces/{NS}/horizontalpodautoscalers"
BASE_CPU_MILLI = 100
REFERENCE_DURATION = 240.0  # the default --duration, for which the timing below is upstream-like


@dataclass(frozen=True)
class DemoTiming:
    """Time constants of one demo run, proportional to its duration."""

    sync_period: float
    downscale_stabilization: float
    readiness_delay: float
    metrics_resolution: float
    metrics_window: float
    pod_startup: float
    pod_termination: float
    policy_period: int  # periodSeconds of the HPA's scaling policies


def demo_timing(duration: float) -> DemoTiming:
    f = duration / REFERENCE_DURATION
    step = max(1.0, min(5.0, 5.0 * f))
    return DemoTiming(
        sync_period=step,
        downscale_stabilization=round(30.0 * f, 1),
        readiness_delay=round(min(30.0, 30.0 * f), 1),
        metrics_resolution=step,
        metrics_window=3 * step,
        pod_startup=step,
        pod_termination=max(1.0, min(3.0, 3.0 * f)),
        policy_period=max(1, round(15 * f)),
    )


@dataclass
class DemoOptions:
    duration: float = REFERENCE_DURATION
    data_dir: str | None = None
    peak_cpu: str = "800m"
    live: bool = True
    config: Any = None  # the engine's ControllerConfig (from the --horizontal-pod-autoscaler-* flags)
    emulated_version: str | None = None  # `--emulated-version`: the cluster and controller's release
    timing: DemoTiming = field(default_factory=lambda: demo_timing(REFERENCE_DURATION))


def load_at(t: float, duration: float, peak_milli: int) -> tuple[str, int]:
    """The load pattern: rise over the first 25 %, plateau to 50 %, fall to 65 %, then idle."""
    f = t / duration if duration > 0 else 1.0
    if f < 0.25:
        return "rise", int(BASE_CPU_MILLI + (peak_milli - BASE_CPU_MILLI) * f / 0.25)
    if f < 0.5:
        return "plateau", peak_milli
    if f < 0.65:
        return "fall", int(peak_milli - (peak_milli - BASE_CPU_MILLI) * (f - 0.5) / 0.15)
    return "idle", BASE_CPU_MILLI


# Each pod's working set, about php-apache's (hpa-example): so `kubectl top` shows memory too.
DEMO_MEMORY = "24Mi"


def demo_objects(timing: DemoTiming) -> tuple[dict[str, Any], dict[str, Any]]:
    dep = {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": NAME, "namespace": NS, "annotations": {
            "sim.pyhpa.io/cpu": f"{BASE_CPU_MILLI}m", "sim.pyhpa.io/startup-seconds": f"{timing.pod_startup:g}",
            "sim.pyhpa.io/termination-seconds": f"{timing.pod_termination:g}",
            "sim.pyhpa.io/memory": DEMO_MEMORY}},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": NAME}},
                 "template": {"metadata": {"labels": {"app": NAME}},
                              "spec": {"containers": [{"name": "app", "image": "registry.k8s.io/hpa-example",
                                                       "resources": {"requests": {"cpu": "200m"}}}]}}},
    }
    period = timing.policy_period
    # Upstream's default policies with the period scaled; no scale-down window: the flag decides.
    behavior = {
        "scaleUp": {"policies": [{"type": "Pods", "value": 4, "periodSeconds": period},
                                 {"type": "Percent", "value": 100, "periodSeconds": period}]},
        "scaleDown": {"policies": [{"type": "Percent", "value": 100, "periodSeconds": period}]},
    }
    hpa = {
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": NAME, "namespace": NS},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": NAME},
                 "minReplicas": 1, "maxReplicas": 10,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": 50}}}],
                 "behavior": behavior},
    }
    return dep, hpa


def _metric_rows(hpa: dict[str, Any]) -> list[str]:
    rows = []
    current = {(m.get("type"), (m.get("resource") or {}).get("name")): m for m in
               hpa.get("status", {}).get("currentMetrics") or []}
    for m in hpa["spec"].get("metrics") or []:
        if m["type"] == "Resource":
            name = m["resource"]["name"]
            tgt = m["resource"]["target"]
            target = f"{tgt.get('averageUtilization')}%" if tgt.get("type") == "Utilization" else str(tgt.get("averageValue"))
            cur = (current.get(("Resource", name)) or {}).get("resource", {}).get("current", {})
            value = f"{cur['averageUtilization']}%" if "averageUtilization" in cur else (cur.get("averageValue") or "<unknown>")
            rows.append(f"{name}: {value}/{target}")
        else:
            rows.append(f"{m['type']}")
    return rows


def render(state: dict[str, Any]) -> Any:
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table

    head = Table.grid(padding=(0, 2))
    head.add_row("[b]phase[/b]", state["phase"], "[b]demand[/b]", f"{state['load']}m CPU",
                 "[b]elapsed[/b]", f"{state['elapsed']:.0f}s / {state['duration']:.0f}s")
    head.add_row("[b]replicas[/b]", str(state["replicas"]), "[b]ready[/b]", str(state["ready"]),
                 "[b]desired[/b]", str(state["desired"]))
    head.add_row("[b]metrics[/b]", ", ".join(state["metrics"]) or "-", "[b]API req/HPA/sync[/b]",
                 f"{state['req_per_sync']:.2f}", "", "")
    conds = Table("condition", "status", "reason", "message", expand=True, show_lines=False)
    for c in state["conditions"]:
        conds.add_row(c["type"], c["status"], c.get("reason", ""), (c.get("message") or "")[:90])
    events = Table("age", "type", "reason", "message", expand=True)
    for e in state["events"][-6:]:
        events.add_row(e[0], e[1], e[2], e[3][:90])
    spark = "".join(" ▁▂▃▄▅▆▇█"[min(8, r * 8 // 10)] for r in state["history"][-80:])
    return Panel(Group(head, f"replicas over time: {spark}", conds, events),
                 title="pyhpa demo: HorizontalPodAutoscaler default/web", subtitle=state["hint"])


async def run_demo(opts: DemoOptions) -> int:
    """Run the demo; SIGTERM or Ctrl-C end it early, cleanly (temporary files removed)."""
    from pyhpa.adapters.tasks import StopSignals

    main = asyncio.current_task()
    assert main is not None
    signals = StopSignals(main.cancel).install()  # a second signal exits at once
    try:
        return await _run_demo(opts)
    except asyncio.CancelledError:
        print("demo interrupted", flush=True)
        return 130
    finally:
        signals.remove()


async def _run_demo(opts: DemoOptions) -> int:
    from pyhpa.adapters.kube.client import CONTROLLER_MANAGER, ApiError, KubeClient, load_config
    from pyhpa.api.timefmt import format_duration
    from pyhpa.live.logs import setup_logging
    from pyhpa.live.loop import ControllerOptions, HPAController
    from pyhpa.live.runner import embedded_cluster_profile
    from pyhpa.cluster.embedded import EmbeddedCluster
    from pyhpa.engine.config import ControllerConfig

    setup_logging("text", "WARNING")
    timing = opts.timing
    profile, config = embedded_cluster_profile(opts.emulated_version, opts.config or ControllerConfig(
        sync_period=timing.sync_period, downscale_stabilization=timing.downscale_stabilization,
        initial_readiness_delay=timing.readiness_delay))
    peak = load_peak(opts.peak_cpu)
    idle = opts.duration * 0.35
    if config.downscale_stabilization + timing.metrics_window + 2 * config.sync_period > idle:
        print(f"note: a {format_duration(config.downscale_stabilization)} scale-down window leaves too little of "
              f"the {format_duration(idle)} idle phase: replicas may not be back at the minimum by the end")
    cluster = await EmbeddedCluster(opts.data_dir, temporary_prefix="pyhpa-demo-", profile=profile, simulation_options={
        "resolution": timing.metrics_resolution, "window": timing.metrics_window}).start()
    viewer = ctl_client = controller = None
    state: dict[str, Any] = {"history": [], "duration": opts.duration}
    live_cm = None
    try:
        kubeconfig = cluster.kubeconfig
        print(f"Embedded cluster at {cluster.url}")
        print(f"  kubeconfig: {kubeconfig}")
        print(f"  watch it:   kubectl --kubeconfig {kubeconfig} get hpa -w")
        print(f"              kubectl --kubeconfig {kubeconfig} describe hpa {NAME}", flush=True)
        viewer = KubeClient.from_config(load_config(kubeconfig), qps=0, manager="pyhpa-demo")
        # the HPA controller writes as upstream's does, inside kube-controller-manager
        ctl_client = KubeClient.from_config(load_config(kubeconfig), qps=0, manager=CONTROLLER_MANAGER)
        controller = HPAController(ctl_client, config, ControllerOptions(sync_period=config.sync_period, workers=2))
        for path, body in zip((DEPLOY, HPAS), demo_objects(timing)):
            try:
                await viewer.post(path, body)
            except ApiError as exc:
                if exc.code != 409:
                    raise
        await controller.start()
        started = time.monotonic()
        requests_at_start = ctl_client.counter.total_excluding("watch")
        state["hint"] = f"kubectl --kubeconfig {kubeconfig} get hpa -w"
        last_load = -1
        last_body = ""
        if opts.live:
            from rich.live import Live

            live_cm = Live(refresh_per_second=2, transient=False)
            live_cm.__enter__()
        while True:
            elapsed = time.monotonic() - started
            if elapsed >= opts.duration:
                break
            phase, load = load_at(elapsed, opts.duration, peak)
            if load != last_load:
                await viewer.merge_patch(f"{DEPLOY}/{NAME}", {"metadata": {"annotations": {"sim.pyhpa.io/cpu": f"{load}m"}}})
                last_load = load
            d = await viewer.get(f"{DEPLOY}/{NAME}")
            h = await viewer.get(f"{HPAS}/{NAME}")
            evs = (await viewer.get(f"/api/v1/namespaces/{NS}/events",
                                    params={"fieldSelector": f"involvedObject.name={NAME},involvedObject.kind=HorizontalPodAutoscaler"}))["items"]
            syncs = max(1.0, elapsed / config.sync_period)
            state.update(
                phase=phase, load=load, elapsed=elapsed, replicas=d["spec"].get("replicas", 0),
                ready=d.get("status", {}).get("readyReplicas", 0), desired=h.get("status", {}).get("desiredReplicas", 0),
                metrics=_metric_rows(h), conditions=h.get("status", {}).get("conditions") or [],
                events=[(_age(e), e.get("type", ""), e.get("reason", ""), e.get("message", "")) for e in
                        sorted(evs, key=lambda e: e.get("lastTimestamp") or "")],
                req_per_sync=(ctl_client.counter.total_excluding("watch") - requests_at_start) / syncs)
            state["history"].append(state["replicas"])
            if live_cm is not None:
                live_cm.update(render(state))
            else:
                body = (f"{phase} demand={load}m replicas={state['replicas']} "
                        f"desired={state['desired']} {' '.join(state['metrics'])}")
                if body != last_body:  # the elapsed time alone is no news
                    print(f"{elapsed:4.0f}s {body}", flush=True)
                    last_body = body
            await asyncio.sleep(1.0)
    finally:
        if live_cm is not None:
            live_cm.__exit__(None, None, None)
            if not live_cm.console.is_terminal:
                print()  # a terminal gets its line break from rich; a file does not
        if controller is not None:
            await controller.stop()
        for c in (ctl_client, viewer):
            if c is not None:
                await c.close()
        await cluster.stop()
    hist = state["history"] or [0]
    print(f"done: peak {max(hist)} replicas, final {hist[-1]}; controller made "
          f"{state.get('req_per_sync', 0):.2f} API requests per HPA per sync period (watches excluded)")
    return 0


def load_peak(text: str) -> int:
    from pyhpa.api.quantity import Quantity

    try:
        return Quantity.parse(text).milli_value()
    except Exception as exc:
        raise ValueError(f"--peak-cpu: invalid quantity {text!r}: {exc}") from None


def _age(e: dict[str, Any]) -> str:
    from pyhpa.api.timefmt import parse_time

    ts = e.get("lastTimestamp")
    if not ts:
        return ""
    try:
        return f"{max(0, time.time() - parse_time(ts).timestamp()):.0f}s"
    except Exception:
        return ""


# the timing flags' defaults scale with --duration (demo_timing)
DemoSyncPeriod = hpa_flag("horizontal-pod-autoscaler-sync-period", "the duration / 48, 1s to 5s")
DemoDownscaleStabilization = hpa_flag("horizontal-pod-autoscaler-downscale-stabilization", "the duration / 8")
DemoReadinessDelay = hpa_flag("horizontal-pod-autoscaler-initial-readiness-delay", "the duration / 8, at most 30s")


def register(app: typer.Typer) -> None:
    """The `pyhpa demo` command on the main typer app (called by :mod:`pyhpa.cli`)."""

    @app.command("demo", cls=PflagCommand)
    def demo(
        duration: str = typer.Option("4m", "--duration", help="How long the load pattern runs (rise, plateau, fall)."),
        data_dir: Optional[str] = typer.Option(None, "--data-dir", help="Embedded cluster data directory."),
        peak_cpu: str = typer.Option("800m", "--peak-cpu", help="Total CPU demand at the plateau."),
        no_live: bool = typer.Option(False, "--plain", help="Print one line per update instead of a live view."),
        sync_period: DemoSyncPeriod = None,
        tolerance: Tolerance = None,
        downscale_stabilization: DemoDownscaleStabilization = None,
        cpu_init: CpuInitializationPeriod = None,
        readiness_delay: DemoReadinessDelay = None,
        upscale_delay: UpscaleDelay = None,
        downscale_delay: DownscaleDelay = None,
        feature_gates: FeatureGatesOption = None,
        emulated_version: EmulatedVersion = None,
    ) -> None:
        """Start the embedded cluster and the controller, drive a load pattern, show the HPA live."""
        from pyhpa.api.timefmt import format_duration
        from pyhpa.controller.flags import build_config
        from pyhpa.live.runner import flag_duration

        try:
            total = flag_duration("duration", duration)
            if total < 20:
                raise ValueError(f"--duration: must be at least 20s, got {duration!r}")
            timing = demo_timing(total)
            config = build_config(
                tolerance=tolerance,
                downscale_stabilization=downscale_stabilization or format_duration(timing.downscale_stabilization),
                cpu_initialization_period=cpu_init,
                initial_readiness_delay=readiness_delay or format_duration(timing.readiness_delay),
                sync_period=sync_period or format_duration(timing.sync_period),
                feature_gates=feature_gates, emulated_version=emulated_version)
            opts = DemoOptions(duration=total, data_dir=data_dir, peak_cpu=peak_cpu, live=not no_live,
                               config=config, emulated_version=emulated_version, timing=timing)
            load_peak(peak_cpu)
        except ValueError as exc:
            fail(str(exc))
        if upscale_delay or downscale_delay:
            typer.echo("warning: --horizontal-pod-autoscaler-upscale-delay/-downscale-delay are no-ops", err=True)
        raise typer.Exit(asyncio.run(run_demo(opts)))
