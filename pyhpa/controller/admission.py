"""What the API server does to a built-in HPA before the controller sees it, for HPAs of a group
no API server defaults or validates: our `pyhpa.io/v1` CRD (`--hpa-api-group pyhpa.io`).

A CRD's OpenAPI schema only checks shapes; the cross-field rules (maxReplicas >= minReplicas, one
source per metric type, policy periods...) and the defaults (minReplicas 1, the 80 % CPU metric,
behavior completion) live in the API model. The controller applies both with the very functions
the embedded API server uses for `autoscaling/v2`, so a `pyhpa.io` HPA is read exactly as the
same object would have been stored as a built-in one. An invalid object is never acted on.
"""

from __future__ import annotations

from pyhpa.api.codec import from_wire, to_wire
from pyhpa.api.defaults import default_hpa
from pyhpa.api.features import FeatureGates
from pyhpa.api.field_errors import FieldError
from pyhpa.api.types import HorizontalPodAutoscaler
from pyhpa.api.validation import validate_hpa


def admit(hpa: HorizontalPodAutoscaler, gates: FeatureGates) -> tuple[HorizontalPodAutoscaler, list[FieldError]]:
    """`hpa` defaulted, and its validation errors (empty: safe to reconcile). The defaults go on
    a copy: the caller's object (an informer's cached one) stays as it was listed."""
    admitted = default_hpa(from_wire(to_wire(hpa), HorizontalPodAutoscaler))
    return admitted, validate_hpa(admitted, gates=gates)
