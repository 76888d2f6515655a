"""Which HPA the write being sent is made for, so that a sharded controller can fence its writes
per HPA (docs/controller.md#sharding). The worker reconciling an HPA sets it; writes sent later
on its behalf (events) carry it along; writes for no single HPA (the state flush) have none."""

from __future__ import annotations

from contextvars import ContextVar

WRITING_FOR: ContextVar[str | None] = ContextVar("pyhpa_writing_for", default=None)  # "namespace/name"
