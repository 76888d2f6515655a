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

