"""The live controller process: informers, work queue and workers around the reconcile core,
leader election, health and metrics endpoints, and the `pyhpa run` command.

It talks to a cluster only through :mod:`pyhpa.adapters.kube`; starting the embedded cluster
in-process is composed above it (:mod:`pyhpa.cluster.embedded`, wired in by :mod:`pyhpa.cli`).
"""
