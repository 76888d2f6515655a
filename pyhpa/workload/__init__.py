"""The simulated workload, shared by the embedded cluster (:mod:`pyhpa.cluster`) and the
virtual-clock simulator (:mod:`pyhpa.sim`): one model, so both behave alike.

* :mod:`~pyhpa.workload.params` -- what a workload does (``WorkloadParams``), read from
  ``sim.pyhpa.io/*`` annotations;
* :mod:`~pyhpa.workload.model` -- its pods' lives (``Workload``, ``SimPod``);
* :mod:`~pyhpa.workload.pipeline` -- the metrics-server-like view of their usage
  (``MetricsPipeline``);
* :mod:`~pyhpa.workload.nodes` -- nodes that share their CPU among their pods (``NodeShares``);
* :mod:`~pyhpa.workload.placement` -- which node a pod fits and goes to (``choose_node``);
* :mod:`~pyhpa.workload.quota` -- what a pod counts against a ResourceQuota, and its refusal.

It depends only on :mod:`pyhpa.api`, never on the cluster, the simulator or the controller.
"""
