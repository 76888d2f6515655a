"""Write rules of ControllerRevisions (pkg/apis/apps/validation ``ValidateControllerRevision``
and ``ValidateControllerRevisionUpdate``): ``data`` is mandatory and immutable, ``revision``
never negative.

Why its own strategy: a revision is a snapshot: ``kubectl rollout undo`` trusts its ``data`` to
be the template it was recorded from, so nothing may change it after the fact (the controllers
only renumber ``revision`` when a rollback makes an old snapshot current again).
"""

from __future__ import annotations

from typing import Any

from pyhpa.api.field_errors import cause
from pyhpa.cluster.apiserver.strategies import Strategy

Obj = dict[str, Any]


class ControllerRevisionStrategy(Strategy):
    def validate(self, obj: Obj, old: Obj | None) -> list[dict[str, str]]:
        causes = super().validate(obj, old)
        if obj.get("data") is None:
            causes.append(cause("data", "Required", detail="data is mandatory"))
        revision = obj.get("revision")
        if isinstance(revision, int) and not isinstance(revision, bool) and revision < 0:
            causes.append(cause("revision", "Invalid", revision, "must be greater than or equal to 0"))
        if old is not None and obj.get("data") != old.get("data"):
            causes.append(cause("data", "Invalid", shown="runtime.RawExtension{...}",
                                detail="field is immutable"))
        return causes
