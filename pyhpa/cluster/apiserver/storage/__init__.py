"""The embedded cluster's storage: objects in SQLite with resourceVersions, preconditions and
watches (what etcd and the apiserver's storage layer are upstream).

Its parts: :mod:`.store` (objects, reads, writes, which events a new watch replays),
:mod:`.watch` (events and subscriptions), :mod:`.sqlite` (the database file) and :mod:`.errors`.
Everything outside the package (the API handlers, the simulated controllers, tests) imports the
names below from here, so the split stays an inside matter.
"""

from pyhpa.cluster.apiserver.storage.errors import (AlreadyExists, BadRequest, Conflict, Expired,
                                                    NotFound, StoreError, TooLarge)
from pyhpa.cluster.apiserver.storage.store import (HISTORY_LIMIT, MAX_OBJECT_BYTES, Entry,
                                                   ListResult, RawListResult, Store,
                                                   combine_filters)
from pyhpa.cluster.apiserver.storage.watch import (ADDED, BOOKMARK, DELETED, ERROR, MODIFIED,
                                                   Watch, WatchEvent)

__all__ = ["ADDED", "BOOKMARK", "DELETED", "ERROR", "HISTORY_LIMIT", "MAX_OBJECT_BYTES",
           "MODIFIED", "AlreadyExists", "BadRequest", "Conflict", "Entry", "Expired", "ListResult",
           "NotFound", "RawListResult", "Store", "StoreError", "TooLarge", "Watch", "WatchEvent",
           "combine_filters"]
