"""The embedded cluster's simulated control plane: what kube-controller-manager, the kubelet and
metrics-server would run against the API server, one module each as upstream splits them.

* :mod:`.simulation` -- the loop (start/stop/settle/step) and the entry points ``start``/``attach``;
* :mod:`.context` -- the state and writes every controller shares; :mod:`.objects` -- reading
  API objects as dicts;
* :mod:`.deployment`, :mod:`.replicaset` (also ReplicationControllers and scalable kinds),
  :mod:`.statefulset`, :mod:`.garbage_collector`, with :mod:`.pod_control` for their pods;
* :mod:`.scheduler`, :mod:`.kubelet`, :mod:`.node`; :mod:`.usage` (the workload models) and
  :mod:`.external_metrics`, served by :mod:`.metrics_server`.
"""
