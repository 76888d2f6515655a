"""The embedded cluster's simulated control plane: the controllers, the kubelet and the metrics
APIs kube-controller-manager, the kubelet and metrics-server would run against the API server.
"""
