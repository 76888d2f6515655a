"""Kubernetes HTTP API adapter: client config via lightkube, raw counted requests, discovery,
metrics APIs and list+watch informers."""
