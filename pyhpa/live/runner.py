"""`pyhpa run`: wire the live controller to a cluster and keep it running until SIGTERM.

Client config, in order: `--master`/`--kubeconfig` (kube-controller-manager names), in-cluster
service account, `$KUBECONFIG`/`~/.kube/config`; with `--embedded` (or when none of those
exists) the embedded cluster is started in-process and the controller talks to it over HTTP
exactly as to a real one (the caller hands in how to start it: that cluster sits above this
package's layer, see :mod:`pyhpa.cluster.embedded`). With leader election the controller only works
while holding the Lease; losing it ends the process (exit code 1), as kube-controller-manager
does, so the supervisor restarts it as a standby. With `--shards N` (N > 1) replicas share the
HPAs instead, each shard owned through a Lease of its own (:mod:`pyhpa.live.shards`); losing a
shard does not end the process.

`--leader-elect` defaults to true, as in kube-controller-manager: two replicas of a controller
that writes replica counts must never both be active. The one exception is the embedded cluster
started in-process (no kubeconfig): nothing else can reach it, so there is nobody to elect
against, and it is off unless `--leader-elect=true` is given.

Before it elects or starts, it waits for the API server to answer `/healthz`
(:mod:`pyhpa.live.connectivity`): one log line if it cannot, `/readyz` not ready meanwhile, and
exit code 1 when it gives up (without leader election after 10 s, as kube-controller-manager;
with it at the end of `--duration`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Awaitable, Callable, Protocol

from pyhpa.adapters.heap import freeze_when, young_generation
from pyhpa.adapters.tasks import SHUTDOWN_TIMEOUT, StopSignals, cancel_and_wait
from pyhpa.adapters.kube.client import CONTROLLER_MANAGER, MANAGER, ApiError, KubeClient, load_config
from pyhpa.adapters.kube.discovery import serves_status_field
from pyhpa.api.timefmt import parse_duration
from pyhpa.api.versions import VersionProfile
from pyhpa.controller.crd import build_crd
from pyhpa.controller.flags import CONFIG_ANNOTATION, config_document, release_profile, with_decision_trace
from pyhpa.engine.config import ControllerConfig
from pyhpa.live.connectivity import API_SERVER_WAIT, ApiServerStatus, wait_for_api_server, watch_connection
from pyhpa.live.health import HealthServer, build_app, parse_bind_address
from pyhpa.live.leader import KubeLeaseClient, LeaderElectionConfig, LeaderElector, fenced_client
from pyhpa.live.loop import ControllerOptions, HPAController, env_identity
from pyhpa.live.metrics import ControllerMetrics
from pyhpa.live.shards import ShardCoordinator, ShardedController

log = logging.getLogger("pyhpa.run")


@dataclass
class RunOptions:
    kubeconfig: str | None = None
    context: str | None = None
    master: str | None = None
    embedded: bool = False
    embedded_data_dir: str | None = None
    emulated_version: str | None = None  # `--emulated-version`: an upstream release's profile
    kube_api_qps: float = 20.0
    kube_api_burst: int = 30
    field_manager: str = ""  # the writes' manager name ("": see make_client)
    leader_elect: bool | None = None  # None: kube-controller-manager's default (see module doc)
    leader_elect_lease_duration: float = 15.0
    leader_elect_renew_deadline: float = 10.0
    leader_elect_retry_period: float = 2.0
    leader_elect_resource_namespace: str = "kube-system"
    leader_elect_resource_name: str = "pyhpa-horizontal-pod-autoscaler"
    shards: int = 1  # --shards: > 1 splits the HPAs over Lease-owned shards (pyhpa.live.shards)
    metrics_bind_address: str = "127.0.0.1:10258"
    duration: float | None = None
    controller: ControllerOptions = field(default_factory=ControllerOptions)
    # HPAStatusDecisionTrace from the server's schema (on when its HPA status has
    # lastScaleDecision), not the start mode: unless the gate or --emulated-version was given
    detect_decision_trace: bool = False


def in_cluster_available() -> bool:
    return bool(os.environ.get("KUBERNETES_SERVICE_HOST")) and Path(
        "/var/run/secrets/kubernetes.io/serviceaccount/token").exists()


def default_kubeconfig_available() -> bool:
    env = os.environ.get("KUBECONFIG")
    return bool(env and Path(env).exists()) or (Path.home() / ".kube" / "config").exists()


class LocalCluster(Protocol):
    """A cluster this process started for itself (the embedded one): its kubeconfig, and stop."""

    @property
    def kubeconfig(self) -> str: ...

    async def stop(self) -> None: ...


# (data dir, the server's version profile: the controller's gates) -> started cluster
StartLocalCluster = Callable[[str | None, VersionProfile], Awaitable[LocalCluster]]


def make_client(opts: RunOptions, kubeconfig: str | None = None, *, embedded: bool = False):
    """The controller's client, named ``--field-manager`` on the server; by default
    kube-controller-manager on the embedded cluster (as upstream's HPA controller), else
    pyhpa-controller."""
    cfg = load_config(kubeconfig or opts.kubeconfig, opts.context, server=opts.master)
    manager = opts.field_manager or (CONTROLLER_MANAGER if embedded else MANAGER)
    return KubeClient.from_config(cfg, qps=opts.kube_api_qps, burst=opts.kube_api_burst, manager=manager)


async def run_controller(opts: RunOptions, engine_config: Any, stop: asyncio.Event | None = None,
                         start_local_cluster: StartLocalCluster | None = None) -> int:
    """Run until `stop` is set, SIGTERM/SIGINT, `--duration` elapses or leadership is lost.

    `start_local_cluster` starts the embedded cluster for `--embedded` (or when no client config
    exists); without it those cases are an error."""
    stop = stop or asyncio.Event()
    signals = StopSignals(stop.set).install()  # a second signal exits at once

    bind = parse_bind_address(opts.metrics_bind_address)
    async with contextlib.AsyncExitStack() as cleanup:  # unwinds in reverse, whatever failed
        cleanup.callback(signals.remove)  # last: a second signal during the cleanup still exits
        cluster = None
        kubeconfig = opts.kubeconfig
        if opts.embedded or not (opts.master or opts.kubeconfig or in_cluster_available()
                                 or default_kubeconfig_available()):
            if start_local_cluster is None:
                raise ValueError("no cluster to control: no kubeconfig, no in-cluster config, no embedded cluster")
            profile, engine_config = embedded_cluster_profile(opts.emulated_version, engine_config)
            cluster = await start_local_cluster(opts.embedded_data_dir, profile)
            cleanup.push_async_callback(cluster.stop)
            kubeconfig = cluster.kubeconfig
            log.info("embedded cluster started", extra={"kubeconfig": kubeconfig})
            print(f"embedded cluster kubeconfig: {kubeconfig}", flush=True)
        leader_elect = opts.leader_elect if opts.leader_elect is not None else cluster is None
        client = make_client(opts, kubeconfig, embedded=cluster is not None)
        cleanup.push_async_callback(client.close)
        if cluster is not None and opts.controller.hpa_group_version != "autoscaling/v2":
            await install_hpa_crd(client)  # side-by-side mode on a cluster nobody else set up
        if opts.controller.identity == "":
            opts.controller.identity = env_identity()
        metrics = ControllerMetrics()
        metrics.register_request_counts(client.counter.snapshot)
        api_server = ApiServerStatus(str(client.http.base_url).rstrip("/"), opts.leader_elect_retry_period)
        client.connection = api_server  # every request that gets no answer, and every answer
        lease = f"{opts.leader_elect_resource_namespace}/{opts.leader_elect_resource_name}" if leader_elect else None
        published = config_document(engine_config, opts.emulated_version, opts.controller.identity, lease)
        elector: LeaderElector | None = None
        lease_client: KubeLeaseClient | None = None
        coordinator: ShardCoordinator | None = None
        controller_client = client
        if opts.shards > 1:
            coordinator = sharding(opts, client, published, metrics, api_server)
            controller_client = fenced_client(client, coordinator.may_write)  # per HPA: its shard's lease
        elif leader_elect:
            le_cfg = LeaderElectionConfig(
                identity=opts.controller.identity,
                lease_duration=opts.leader_elect_lease_duration,
                renew_deadline=opts.leader_elect_renew_deadline,
                retry_period=opts.leader_elect_retry_period,
            )
            le_cfg.validate()
            lease_client = KubeLeaseClient(
                client, opts.leader_elect_resource_namespace, opts.leader_elect_resource_name,
                annotations={CONFIG_ANNOTATION: json.dumps(published, separators=(",", ":"))})
            elector = LeaderElector(le_cfg, lease_client, api_server=api_server)
            controller_client = fenced_client(client, elector.may_write)  # no write past the renew deadline
        controller = HPAController(controller_client, engine_config, opts.controller, metrics)
        controller.api_server = api_server
        # the caches' heap frozen once synced, bursts dying young (pyhpa/adapters/heap.py)
        cleanup.enter_context(young_generation())
        cleanup.callback(gc.unfreeze)  # run in-process (tests, `pyhpa demo`): leave the heap as found
        freezer = asyncio.create_task(freeze_when(lambda: controller.started, 0.5), name="freeze-synced-heap")
        cleanup.push_async_callback(cancel_and_wait, freezer)
        if coordinator is not None:
            ShardedController(controller, coordinator)

        def ready() -> tuple[bool, str]:
            ok, why = api_server.ready()
            if not ok:
                return ok, why
            if elector is not None and not elector.is_leader:
                return True, ""  # a healthy standby is ready (it serves /metrics and /healthz)
            return controller.ready()

        def healthy() -> tuple[bool, str]:
            if elector is not None or coordinator is not None:
                ok, why = elector.healthy() if elector is not None else coordinator.healthy()  # type: ignore[union-attr]
                if not ok:
                    return ok, why
            return controller.healthy()

        if bind is not None:
            health = HealthServer(build_app(metrics.render, ready, healthy, controller.decision, published),
                                  bind[0], bind[1])
            await health.start()
            cleanup.push_async_callback(health.stop)
            log.info("serving /metrics, /healthz, /readyz, /debug/config", extra={"address": f"{bind[0]}:{health.port}"})

        exit_code = 0

        async def work() -> None:
            nonlocal exit_code
            # with leader election, wait as long as it takes (so does upstream's election loop);
            # without, give up as kube-controller-manager does before starting its controllers
            give_up_after = None if elector is not None or coordinator is not None else API_SERVER_WAIT
            if not await wait_for_api_server(client, api_server, give_up_after):
                log.error("giving up: the API server at %s did not answer within %gs: %s",
                          api_server.address, API_SERVER_WAIT, api_server.error)
                exit_code = 1
                return
            prober = asyncio.create_task(watch_connection(client, api_server), name="api-server-probe")
            cleanup.push_async_callback(cancel_and_wait, prober)
            if opts.detect_decision_trace:
                served = await serves_status_field(client, opts.controller.hpa_group_version,
                                                   "HorizontalPodAutoscaler", "lastScaleDecision")
                log.info("the server %s status.lastScaleDecision: HPAStatusDecisionTrace=%s",
                         "serves" if served else "does not serve", str(served).lower())
                controller.config = with_decision_trace(controller.config, served)
                published.update(config_document(controller.config, opts.emulated_version,
                                                 opts.controller.identity, lease))  # /debug/config
                if lease_client is not None:
                    lease_client.annotations[CONFIG_ANNOTATION] = json.dumps(published, separators=(",", ":"))
                if coordinator is not None:
                    coordinator.annotations[CONFIG_ANNOTATION] = json.dumps(published, separators=(",", ":"))
            if coordinator is not None:
                await run_sharded(controller, coordinator)
                return
            if elector is None:
                await controller.run()
                return

            async def lead() -> None:
                metrics.is_leader.set(1)
                try:
                    await controller.run()
                finally:
                    metrics.is_leader.set(0)

            await elector.run(lead)
            if not stop.is_set():
                log.error("leader election lost")
                exit_code = 1

        work_task = asyncio.create_task(work(), name="controller")
        stop_task = asyncio.create_task(stop.wait(), name="stop")
        waiters = {work_task, stop_task}
        duration_task = asyncio.create_task(asyncio.sleep(opts.duration), name="duration") if opts.duration else None
        if duration_task is not None:
            waiters.add(duration_task)
        try:
            done, _ = await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
            if work_task in done and work_task.exception() is not None:
                log.error("controller failed", exc_info=work_task.exception())
                exit_code = 1
            if duration_task in done and api_server.reachable is not True:
                log.error("giving up at the end of --duration: %s", api_server.ready()[1])
                exit_code = 1
        finally:
            stop.set()
            # the controller's own shutdown (workers, informers, a last state flush) runs here,
            # before the client closes, whatever state it had reached
            await cancel_and_wait(*waiters, timeout=SHUTDOWN_TIMEOUT)
    log.info("stopped", extra={"requests": client.counter.total, "reconciles": controller.reconciles})
    return exit_code


def sharding(opts: RunOptions, client: KubeClient, published: dict[str, Any], metrics: ControllerMetrics,
             api_server: ApiServerStatus) -> ShardCoordinator:
    """`--shards N`: the coordinator of this replica's shards, with the election's timing and
    Lease namespace, publishing the configuration on every Lease it holds."""
    le_cfg = LeaderElectionConfig(identity=opts.controller.identity, lease_duration=opts.leader_elect_lease_duration,
                                  renew_deadline=opts.leader_elect_renew_deadline,
                                  retry_period=opts.leader_elect_retry_period)
    le_cfg.validate()
    published["shards"] = opts.shards
    return ShardCoordinator(client, le_cfg, opts.shards, opts.leader_elect_resource_namespace,
                            opts.leader_elect_resource_name,
                            {CONFIG_ANNOTATION: json.dumps(published, separators=(",", ":"))}, metrics, api_server)


async def run_sharded(controller: HPAController, coordinator: ShardCoordinator) -> None:
    """Caches first (a replica takes shards only once it can reconcile them at once), then the
    shards until cancelled: they are released, then the controller stops."""
    try:
        await controller.start()
        await coordinator.run()
    finally:
        await asyncio.shield(controller.stop())


def flag_duration(flag: str, text: str) -> float:
    """Seconds of a duration flag's value; the error names the flag (``--flag: invalid duration``)."""
    try:
        return float(parse_duration(text))
    except Exception as exc:
        raise ValueError(f"--{flag}: invalid duration {text!r}: {exc}") from None


def embedded_cluster_profile(emulated_version: str | None,
                             config: ControllerConfig) -> tuple[VersionProfile, ControllerConfig]:
    """For a controller that starts its own embedded cluster (`pyhpa run --embedded`, `pyhpa
    demo`): the cluster's profile (the controller's release and gates, so the two agree) and the
    controller's config for that cluster (the decision trace on, except under emulation: KEP-6107
    is beyond upstream, and an emulated release's server does not serve the field)."""
    profile = replace(release_profile(emulated_version), gates=config.gates)
    return profile, config if profile.emulated else with_decision_trace(config)


async def install_hpa_crd(client: Any) -> None:
    """Create the pyhpa.io/v1 HorizontalPodAutoscaler CRD unless the cluster has it already."""
    try:
        await client.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", build_crd())
        log.info("installed the pyhpa.io HorizontalPodAutoscaler CRD")
    except ApiError as exc:
        if exc.code != 409:
            raise


def hpa_group_version(api_group: str) -> str:
    """`--hpa-api-group`: `autoscaling` (built-in HPAs) or `pyhpa.io` (our CRD, side by side)."""
    if api_group in ("autoscaling", "autoscaling/v2"):
        return "autoscaling/v2"
    if api_group in ("pyhpa.io", "pyhpa.io/v1"):
        return "pyhpa.io/v1"
    raise ValueError(f"--hpa-api-group: must be autoscaling or pyhpa.io, got {api_group!r}")
