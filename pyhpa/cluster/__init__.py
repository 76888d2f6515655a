"""The embedded Kubernetes-compatible cluster: the API machinery (:mod:`.apiserver`), the
simulated controllers and node agents beside it, and the wiring that runs them in one process
(:mod:`.embedded`, and :mod:`.command` for ``pyhpa cluster``)."""
