"""Implementations of the controller's ports: in-memory and the Kubernetes HTTP API."""
