"""Reconcile of one HPA against small ports, and the loop around it."""
