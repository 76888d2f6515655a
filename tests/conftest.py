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



def pytest_collection_modifyitems(items):
    """Files marked `long(seconds=...)` (a live run, a week of history) go first, the longest first.
    `make test` hands whole files to its workers in this order (`--dist loadfile
    --no-loadscope-reorder`): a minutes-long file that started last would run alone at the end
    while the other workers sit idle. The seconds are a rough figure of a fresh run; they only
    order the files."""
    def seconds(item) -> float:
        mark = item.get_closest_marker("long")
        return mark.kwargs.get("seconds", 60) if mark else 0
    items.sort(key=seconds, reverse=True)
