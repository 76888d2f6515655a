"""The embedded Kubernetes-compatible API server, its store and the workload simulation."""
