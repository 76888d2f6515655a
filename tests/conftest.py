"""Suite-wide fixtures."""

from __future__ import annotations

import logging

import pytest


@pytest.fixture(autouse=True)
def _pyhpa_logger_restored():
    """A command run in-process (`pyhpa run`, `pyhpa demo`) points the `pyhpa` logger at the
    stderr of that moment; pytest closes that stream after the test, and later tests' log lines
    would go to a closed file. Each test leaves the logger as it found it."""
    logger = logging.getLogger("pyhpa")
    saved = (logger.handlers[:], logger.level, logger.propagate)
    yield
    logger.handlers[:], logger.level, logger.propagate = saved


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Files with slow tests first: `make test` spreads files over workers (pytest-xdist,
    --dist loadfile) in this order, so the long end-to-end runs start at once and overlap the
    many short tests instead of trailing them."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow") is not None}
    per_file: dict[object, int] = {}
    for item in items:
        per_file[item.path] = per_file.get(item.path, 0) + 1
    # Among slow files, those of few tests first: they are the long end-to-end runs (a live
    # replay, a real Prometheus, three controller replicas), where a file of many slow tests is
    # many short ones. Stable: the order within a file is kept.
    items.sort(key=lambda item: (item.path not in slow_files, per_file[item.path]))
