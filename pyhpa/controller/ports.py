"""The small interfaces one HPA reconcile talks to.

The same ``reconcile_hpa`` serves the offline ``pyhpa reconcile`` (in-memory adapters over a
snapshot), the simulator and the live controller (Kubernetes HTTP adapters). Fetch methods are
``async`` so live adapters can do I/O; in-memory adapters never suspend, which lets
``run_sync`` drive a reconcile without an event loop. Events, the state store and the selector
registry are plain methods: upstream keeps them in memory / fire-and-forget.

Error messages are upstream's texts: the reconcile wraps them exactly as upstream does, so an
adapter raises with the *inner* text (e.g. ``no metrics returned from resource metrics API``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from pyhpa.api.selectors import Selector
from pyhpa.api.types import CrossVersionObjectReference, HorizontalPodAutoscaler, Scale
from pyhpa.engine.inputs import PodMetricsInfo
from pyhpa.engine.pods import PodSet
from pyhpa.engine.state import AutoscalerState


class PortError(Exception):
    """Base of errors raised by ports; ``str(err)`` is the upstream error text."""


class MappingError(PortError):
    """The scale target's kind cannot be resolved to a resource (upstream's REST mapping step)."""


class ScaleError(PortError):
    """GET or PUT of the scale subresource failed (not found, forbidden, server error...)."""


class ConflictError(ScaleError):
    """HTTP 409 on a scale update: the reconcile re-reads the scale and retries."""


class PodListError(PortError):
    """Listing pods failed."""


class MetricsError(PortError):
    """A metrics API call failed or returned nothing, with upstream's message text, e.g.
    ``unable to fetch metrics from resource metrics API: <err>`` or
    ``no metrics returned from custom metrics API``."""


class StatusUpdateError(PortError):
    """Writing the HPA status failed."""


class ScaleClient(Protocol):
    async def get_scale(self, namespace: str, ref: CrossVersionObjectReference) -> Scale:
        """The target's autoscaling/v1 Scale; ``MappingError`` / ``ScaleError`` on failure."""
        ...

    async def update_scale(self, namespace: str, ref: CrossVersionObjectReference, scale: Scale) -> Scale:
        """PUT the scale (only ``spec.replicas`` changes); ``ConflictError`` on 409."""
        ...


class PodLister(Protocol):
    async def list_pods(self, namespace: str, selector: Selector) -> PodSet:
        """Pods of ``namespace`` whose labels match ``selector``, with their facts computed
        (``PodSet.of``) where the adapter's pod list changes; ``PodListError`` on failure."""
        ...


class MetricsClient(Protocol):
    """Upstream's metrics client: values in milli-units plus the list's timestamp."""

    async def get_resource_metric(
        self, resource: str, namespace: str, selector: Selector, container: str = ""
    ) -> tuple[PodMetricsInfo, datetime]:
        """metrics.k8s.io PodMetrics: per pod, the sum over containers (or the named container)."""
        ...

    async def get_raw_metric(
        self, metric_name: str, namespace: str, selector: Selector, metric_selector: Selector
    ) -> tuple[PodMetricsInfo, datetime]:
        """custom.metrics.k8s.io values for the pods matching ``selector``."""
        ...

    async def get_object_metric(
        self,
        metric_name: str,
        namespace: str,
        ref: CrossVersionObjectReference,
        metric_selector: Selector,
    ) -> tuple[int, datetime]:
        """custom.metrics.k8s.io value describing one object."""
        ...

    async def get_external_metric(
        self, metric_name: str, namespace: str, selector: Selector
    ) -> tuple[list[int], datetime]:
        """external.metrics.k8s.io values of every series matching ``selector``."""
        ...


class StatusWriter(Protocol):
    async def update_status(self, hpa: HorizontalPodAutoscaler) -> None:
        """Write the HPA's status subresource; ``StatusUpdateError`` on failure."""
        ...


class EventRecorder(Protocol):
    def event(self, hpa: HorizontalPodAutoscaler, event_type: str, reason: str, message: str,
              at: datetime | None = None) -> None:
        """Record an Event on the HPA (``Normal`` or ``Warning``) that happened ``at`` (now when
        None)."""
        ...


class StateStore(Protocol):
    """The controller's per-HPA memory, keyed by ``namespace/name``."""

    def get(self, key: str) -> AutoscalerState | None: ...

    def put(self, key: str, state: AutoscalerState) -> None: ...

    def delete(self, key: str) -> None: ...


class SelectorRegistry(Protocol):
    """Which HPA selects which pods, to detect pods controlled by several HPAs (upstream's horizontal.go hpaSelectors)."""

    def register(self, key: str) -> None:
        """Know the HPA (upstream: at enqueue, with a select-nothing selector)."""
        ...

    def put_selector(self, key: str, selector: Selector, text: str | None = None) -> None:
        """Store the HPA's real selector (parsed from ``text``), only if the HPA is registered."""
        ...

    def selector_of(self, key: str, text: str) -> Selector | None:
        """The selector stored for ``key`` if it was parsed from ``text``, else None."""
        ...

    def hpas_selecting(self, namespace: str, labels: dict[str, str]) -> frozenset[str]:
        """Keys of registered HPAs in ``namespace`` whose selector matches ``labels``."""
        ...

    def remove(self, key: str) -> None: ...


@dataclass
class Ports:
    """Everything one reconcile needs from the outside world."""

    scales: ScaleClient
    pods: PodLister
    metrics: MetricsClient
    status: StatusWriter
    events: EventRecorder
    state: StateStore
    selectors: SelectorRegistry
