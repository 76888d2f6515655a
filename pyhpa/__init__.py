"""pyhpa: the Kubernetes HorizontalPodAutoscaler, rebuilt in Python."""

__version__ = "0.1.0"
