"""The embedded cluster's generic API machinery: what ``k8s.io/apiserver`` and the
apiextensions server are upstream, for the kinds kubectl and the HPA controller use.

- serving: :mod:`.server` (the ASGI app: authentication, routing, providers), :mod:`.health`,
  :mod:`.status` (errors as ``metav1.Status``), :mod:`.handlers` (one module per verb),
  :mod:`.discovery`, :mod:`.openapi` with :mod:`.gnostic`, :mod:`.protobuf`, :mod:`.tables`
  with :mod:`.columns`;
- storage: :mod:`.storage` (objects in SQLite, resourceVersions, watches);
- kinds: :mod:`.resources` (the registry), :mod:`.strategies` and the kind-specific ones
  (:mod:`.hpa_strategy`, :mod:`.services`, :mod:`.external_metric`, :mod:`.crd` with
  :mod:`.structural`), chosen by :mod:`.kind_strategies`; :mod:`.schemas`,
  :mod:`.workload_defaults`, :mod:`.scale`, :mod:`.reviews`;
- request rules: :mod:`.patch`, :mod:`.managed_fields`, :mod:`.field_selectors`,
  :mod:`.jsonpath`, :mod:`.garbage_collector`;
- credentials: :mod:`.tls`, :mod:`.kubeconfig`.

It knows nothing of the simulation: :mod:`pyhpa.cluster.embedded` wires that in through the
server's providers, readiness checks and Pod finalizers.
"""
