"""Scenarios, the virtual clock, reports and plots."""
