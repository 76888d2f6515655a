"""The `pyhpa run` command (flag parsing only; the work is in :mod:`pyhpa.live.runner`).

Registered on the main typer app by :mod:`pyhpa.cli`, which also hands in how to start the
embedded cluster (a layer above this package). Flag names are kube-controller-manager's, and so
are their forms: boolean flags take `=true`/`=false` (:mod:`pyhpa.live.flags`).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from pyhpa.controller.flag_options import (CpuInitializationPeriod, DownscaleDelay, DownscaleStabilization,
                                           EmulatedVersion, FeatureGatesOption, InitialReadinessDelay, SyncPeriod,
                                           Tolerance, UpscaleDelay)
from pyhpa.live.flags import PflagCommand

if TYPE_CHECKING:  # the runner (and the HTTP client under it) loads only when `run` runs
    from pyhpa.live.runner import StartLocalCluster


def fail(msg: str) -> None:
    """A usage error: the message on stderr, exit code 2."""
    typer.echo(f"error: {msg}", err=True)
    raise typer.Exit(2)


def register(app: typer.Typer, start_local_cluster: StartLocalCluster | None = None) -> None:
    @app.command("run", cls=PflagCommand)
    def run(
        kubeconfig: Optional[str] = typer.Option(None, "--kubeconfig", help="Path to a kubeconfig file."),
        context: Optional[str] = typer.Option(None, "--context", help="kubeconfig context to use."),
        master: Optional[str] = typer.Option(None, "--master", help="API server URL (overrides the kubeconfig)."),
        embedded: bool = typer.Option(False, "--embedded", help="Start the embedded cluster in-process and control it."),
        data_dir: Optional[str] = typer.Option(None, "--embedded-data-dir", help="Data directory of the embedded cluster."),
        sync_period: SyncPeriod = None,
        tolerance: Tolerance = None,
        downscale_stabilization: DownscaleStabilization = None,
        cpu_init: CpuInitializationPeriod = None,
        readiness_delay: InitialReadinessDelay = None,
        upscale_delay: UpscaleDelay = None,
        downscale_delay: DownscaleDelay = None,
        workers: int = typer.Option(5, "--concurrent-horizontal-pod-autoscaler-syncs"),
        feature_gates: FeatureGatesOption = None,
        emulated_version: EmulatedVersion = None,
        qps: float = typer.Option(20.0, "--kube-api-qps"),
        burst: int = typer.Option(30, "--kube-api-burst"),
        field_manager: str = typer.Option(
            "", "--field-manager",
            help="Name of the controller's writes in managedFields (its User-Agent); default "
                 "pyhpa-controller, or kube-controller-manager for the embedded cluster."),
        leader_elect: Optional[bool] = typer.Option(
            None, "--leader-elect/--no-leader-elect",
            help="Leader election on a Lease (default true, as kube-controller-manager; false for the "
                 "embedded cluster started in-process)."),
        resource_lock: str = typer.Option("leases", "--leader-elect-resource-lock",
                                          help="Only leases (what kube-controller-manager supports today)."),
        lease_duration: str = typer.Option("15s", "--leader-elect-lease-duration"),
        renew_deadline: str = typer.Option("10s", "--leader-elect-renew-deadline"),
        retry_period: str = typer.Option("2s", "--leader-elect-retry-period"),
        le_namespace: str = typer.Option("kube-system", "--leader-elect-resource-namespace"),
        le_name: str = typer.Option("pyhpa-horizontal-pod-autoscaler", "--leader-elect-resource-name"),
        shards: int = typer.Option(
            1, "--shards",
            help="Split the HPAs over this many shards, each owned by one replica through its own Lease "
                 "(1: leader election on one Lease)."),
        metrics_bind_address: str = typer.Option("127.0.0.1:10258", "--metrics-bind-address",
                                                 help="host:port for /metrics, /healthz, /readyz; 0 disables."),
        hpa_api_group: str = typer.Option("autoscaling", "--hpa-api-group",
                                          help="autoscaling (built-in HPAs) or pyhpa.io (our CRD, side by side)."),
        persist_state: bool = typer.Option(True, "--persist-state/--no-persist-state",
                                           help="Keep stabilization memory in a Lease per namespace."),
        logging_format: str = typer.Option("text", "--logging-format", help="text or json"),
        log_level: str = typer.Option("INFO", "--log-level"),
        verbosity: Optional[int] = typer.Option(None, "-v", "--v",
                                                help="klog verbosity: 4 or more logs debug detail."),
        duration: Optional[str] = typer.Option(None, "--duration", help="Stop after this long (e.g. 10m)."),
    ) -> None:
        """Run the HPA controller against a cluster (kube-controller-manager flags)."""
        from pyhpa.live.flags import log_level as level_of
        from pyhpa.live.leader import LeaderElectionConfig
        from pyhpa.live.logs import setup_logging
        from pyhpa.live.loop import ControllerOptions, env_identity
        from pyhpa.live.health import BindError
        from pyhpa.api.features import parse_gate_overrides
        from pyhpa.controller.flags import FlagValues
        from pyhpa.live.runner import RunOptions, flag_duration, hpa_group_version, run_controller

        import logging

        try:
            if resource_lock != "leases":
                raise ValueError(f"--leader-elect-resource-lock: only \"leases\" is supported, got {resource_lock!r} "
                                 "(endpoints and configmaps locks were removed from Kubernetes)")
            if shards < 1:
                raise ValueError(f"--shards: must be 1 or more, got {shards}")
            if shards > 1 and leader_elect is False:
                raise ValueError("--shards: sharded replicas own their shards through Leases; "
                                 "it cannot be used with --leader-elect=false")
            if field_manager:
                from pyhpa.adapters.kube.client import check_manager
                check_manager(field_manager)
            setup_logging(logging_format, level_of(verbosity, log_level))
            if upscale_delay or downscale_delay:
                logging.getLogger("pyhpa.run").warning("This flag is currently no-op and will be deleted.")
            flags = FlagValues.given(
                tolerance=tolerance, downscale_stabilization=downscale_stabilization,
                cpu_initialization_period=cpu_init, initial_readiness_delay=readiness_delay,
                sync_period=sync_period, feature_gates=feature_gates, emulated_version=emulated_version)
            engine_config = flags.config()

            copts = ControllerOptions(
                sync_period=engine_config.sync_period, workers=workers,
                hpa_group_version=hpa_group_version(hpa_api_group), identity=env_identity(),
                persist_state=persist_state)
            copts.validate()
            opts = RunOptions(
                kubeconfig=kubeconfig, context=context, master=master, embedded=embedded,
                embedded_data_dir=data_dir, emulated_version=emulated_version, kube_api_qps=qps, kube_api_burst=burst,
                field_manager=field_manager,
                leader_elect=leader_elect,
                leader_elect_lease_duration=flag_duration("leader-elect-lease-duration", lease_duration),
                leader_elect_renew_deadline=flag_duration("leader-elect-renew-deadline", renew_deadline),
                leader_elect_retry_period=flag_duration("leader-elect-retry-period", retry_period),
                leader_elect_resource_namespace=le_namespace, leader_elect_resource_name=le_name, shards=shards,
                metrics_bind_address=metrics_bind_address,
                duration=flag_duration("duration", duration) if duration else None, controller=copts,
                detect_decision_trace=emulated_version is None
                and "HPAStatusDecisionTrace" not in parse_gate_overrides(feature_gates or ""))
            if leader_elect is not False or shards > 1:
                LeaderElectionConfig(copts.identity, opts.leader_elect_lease_duration,
                                     opts.leader_elect_renew_deadline, opts.leader_elect_retry_period).validate()
        except ValueError as exc:
            fail(str(exc))
        if kubeconfig and not Path(kubeconfig).is_file():
            fail(f"--kubeconfig: file not found: {kubeconfig}")
        try:
            code = asyncio.run(run_controller(opts, engine_config, start_local_cluster=start_local_cluster))
        except KeyError as exc:
            fail(f"--kubeconfig: missing field {exc}")
        except BindError as exc:
            fail(str(exc))
        except (FileNotFoundError, ValueError) as exc:
            fail(f"client configuration: {exc}")
        except Exception as exc:
            if type(exc).__name__ == "ConfigError":  # lightkube's kubeconfig errors
                fail(f"--kubeconfig: {exc}")
            raise
        raise typer.Exit(code)
