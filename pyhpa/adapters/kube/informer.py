"""List + watch informer with a local cache, upstream's answer to "don't GET what you can watch".

One informer per resource (cluster-wide or one namespace): it lists (paginated), then watches
from the list's resourceVersion with bookmarks, so the watch can resume without a re-list after
an idle period. `410 Gone` (as an HTTP status or as an ERROR event) means the resourceVersion is
too old: re-list and diff the cache, emitting the adds/updates/deletes that were missed. Other
failures back off exponentially (0.8 s doubling to 30 s, like client-go's reflector). The cache
is indexed by namespace and by `label=value`, so selecting the pods of one target costs the
size of the smallest matching label set, not the size of the cluster.

The objects are kept by namespace, then name, with the objects' own name strings as keys: a
flat map by "namespace/name" held a second string per object (100,000 pods: about 8 MiB of keys
and a 5 MiB table). `Informer.cache` shows the same objects by those keys, built when asked.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Iterator, Mapping
from typing import Any, Callable, Generic, Iterable, TypeVar

import msgspec

from pyhpa.adapters.tasks import cancel_and_wait
from pyhpa.adapters.kube.client import ApiError, KubeClient, outage_reported, watch_error
from pyhpa.api.types import ListMeta

T = TypeVar("T")
log = logging.getLogger("pyhpa.informer")

Handler = Callable[..., Any]


class _Meta(msgspec.Struct, rename="camel"):
    name: str = ""
    namespace: str | None = None
    resource_version: str | None = None


class _Bookmark(msgspec.Struct):
    metadata: _Meta = msgspec.field(default_factory=_Meta)


def split_key(key: str) -> tuple[str, str]:
    """(namespace, name) of a "namespace/name" key; a cluster-scoped key is the name alone."""
    ns, sep, name = key.partition("/")
    return (ns, name) if sep else ("", key)


class KeyedView(Mapping[str, T]):
    """The informer's objects by "namespace/name" (client-go's cache keys), read through its
    namespace buckets: no key is stored, each is built when iterated."""

    __slots__ = ("_by_ns",)

    def __init__(self, by_ns: dict[str, dict[str, T]]) -> None:
        self._by_ns = by_ns

    def __getitem__(self, key: str) -> T:
        ns, name = split_key(key)
        bucket = self._by_ns.get(ns)
        if bucket is None:
            raise KeyError(key)
        return bucket[name]

    def __iter__(self) -> Iterator[str]:
        for ns, bucket in list(self._by_ns.items()):
            for name in list(bucket):
                yield f"{ns}/{name}" if ns else name

    def __len__(self) -> int:
        return sum(len(bucket) for bucket in self._by_ns.values())


def equality_terms(selector_text: str) -> list[tuple[str, str]]:
    """The plain `k=v` / `k==v` terms of a selector string: a pre-filter for the label index.

    Only used to narrow candidates; the full selector is always applied afterwards.
    """
    out: list[tuple[str, str]] = []
    depth = 0
    term = ""
    for ch in selector_text + ",":
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            t = term.strip()
            term = ""
            if "!=" in t or " in " in t or " notin " in t or "(" in t:
                continue
            if "==" in t:
                k, v = t.split("==", 1)
            elif "=" in t:
                k, v = t.split("=", 1)
            else:
                continue
            out.append((k.strip(), v.strip()))
        else:
            term += ch
    return out


class Informer(Generic[T]):
    """Cache of one resource kept current by list + watch; handlers get add/update/delete."""

    def __init__(
        self,
        client: KubeClient,
        path: str,
        item_type: Any,
        *,
        name: str = "",
        namespace_of: Callable[[T], str] | None = None,
        labels_of: Callable[[T], dict[str, str] | None] | None = None,
        page_size: int = 500,
        index_labels: bool = True,
        resync_period: float = 0.0,
        backoff_initial: float = 0.8,
        backoff_max: float = 30.0,
        decode_item: Callable[[bytes], T] | None = None,
        transform: Callable[[T], T] | None = None,
        share: Callable[[T, T], None] | None = None,
    ) -> None:
        self.client = client
        self.path = path
        self.name = name or path
        self.item_type = item_type
        self.page_size = page_size
        self.index_labels = index_labels
        self.resync_period = resync_period
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self._namespace_of = namespace_of or (lambda o: o.metadata.namespace or "")  # type: ignore[attr-defined]
        self._labels_of = labels_of or (lambda o: o.metadata.labels)  # type: ignore[attr-defined]
        # With `decode_item` (e.g. the Go-faithful codec for HPAs) items are decoded one by one.
        self._decode_item = decode_item
        # client-go's SetTransform: what is cached of each object (e.g. without managedFields)
        self._transform = transform
        # Objects of one owner mostly carry equal labels and spec: `share(new, sibling)` may make
        # the new object point at its sibling's equal parts (siblings: a few other cached objects
        # of the namespace with the new one's first label pair). Cached objects are never mutated.
        self._share = share
        list_item = msgspec.Raw if decode_item is not None else item_type
        self._list_type = msgspec.defstruct(
            "List", [("metadata", ListMeta, msgspec.field(default_factory=ListMeta)), ("items", list[list_item], [])]
        )
        self._by_ns: dict[str, dict[str, T]] = {}  # namespace -> name -> object
        self.cache: KeyedView[T] = KeyedView(self._by_ns)
        self._count = 0
        self._label_index: dict[tuple[str, str, str], set[str]] = {}  # (ns, label, value) -> names
        self.synced = asyncio.Event()
        self.resource_version = ""
        self.relists = 0
        self.listed = 0  # objects received by the list in progress (start-up progress reports)
        self._on_add: list[Handler] = []
        self._on_update: list[Handler] = []
        self._on_delete: list[Handler] = []
        self._task: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ handlers

    def add_handlers(self, on_add: Handler | None = None, on_update: Handler | None = None,
                     on_delete: Handler | None = None) -> None:
        if on_add:
            self._on_add.append(on_add)
        if on_update:
            self._on_update.append(on_update)
        if on_delete:
            self._on_delete.append(on_delete)

    def _emit(self, handlers: list[Handler], *args: Any) -> None:
        for h in handlers:
            try:
                h(*args)
            except Exception:  # a broken handler must not stop the informer
                log.exception("informer %s: handler failed", self.name)

    # ------------------------------------------------------------------ cache

    def _place(self, obj: T) -> tuple[str, str]:
        return self._namespace_of(obj), obj.metadata.name or ""  # type: ignore[attr-defined]

    def _index_labels(self, ns: str, name: str, obj: T, add: bool) -> None:
        if not self.index_labels:
            return
        for k, v in (self._labels_of(obj) or {}).items():
            ikey = (ns, k, v)
            if add:
                self._label_index.setdefault(ikey, set()).add(name)
            else:
                s = self._label_index.get(ikey)
                if s is not None:
                    s.discard(name)
                    if not s:
                        del self._label_index[ikey]

    def _siblings(self, ns: str, name: str, obj: T, most: int = 4) -> list[T]:
        """Up to `most` other cached objects of the namespace with `obj`'s first label pair."""
        labels = self._labels_of(obj)
        bucket = self._by_ns.get(ns)
        if not labels or not self.index_labels or bucket is None:
            return []
        pair = next(iter(labels.items()))
        out = []
        for other in self._label_index.get((ns, *pair), ()):
            if other != name and other in bucket:
                out.append(bucket[other])
                if len(out) == most:
                    break
        return out

    def _store(self, obj: T) -> T | None:
        ns, name = self._place(obj)
        if self._share is not None:
            for sibling in self._siblings(ns, name, obj):
                self._share(obj, sibling)
        bucket = self._by_ns.setdefault(ns, {})
        old = bucket.get(name)
        if old is not None:
            self._index_labels(ns, name, old, add=False)
        else:
            self._count += 1
        bucket[name] = obj
        self._index_labels(ns, name, obj, add=True)
        return old

    def _remove(self, ns: str, name: str) -> T | None:
        bucket = self._by_ns.get(ns)
        old = bucket.pop(name, None) if bucket is not None else None
        if old is not None:
            self._count -= 1
            if not bucket:
                del self._by_ns[ns]
            self._index_labels(ns, name, old, add=False)
        return old

    def get(self, namespace: str, name: str) -> T | None:
        bucket = self._by_ns.get(namespace)
        return bucket.get(name) if bucket is not None else None

    def list_namespace(self, namespace: str) -> list[T]:
        return list(self._by_ns.get(namespace, {}).values())

    def select(self, namespace: str, selector: Any, selector_text: str | None = None) -> list[T]:
        """Objects of `namespace` whose labels match `selector` (anything with `.matches(labels)`)."""
        text = str(selector) if selector_text is None else selector_text
        candidates: Iterable[T]
        terms = equality_terms(text) if self.index_labels else []
        if terms:
            sets = [self._label_index.get((namespace, k, v), set()) for k, v in terms]
            smallest = min(sets, key=len)
            bucket = self._by_ns.get(namespace, {})
            candidates = [bucket[n] for n in smallest if n in bucket]
        else:
            candidates = self._by_ns.get(namespace, {}).values()
        return [o for o in candidates if selector.matches(self._labels_of(o) or {})]

    def __len__(self) -> int:
        return self._count

    # ------------------------------------------------------------------ list + watch

    async def list_and_replace(self) -> None:
        """Paginated list; the cache becomes exactly the list, with handlers told the differences."""
        fresh: dict[str, dict[str, T]] = {}  # namespace -> name -> object, as the cache
        cont = ""
        rv = ""
        dec = self.client.decoder(self._list_type)
        self.listed = 0
        while True:
            params: dict[str, Any] = {"limit": str(self.page_size)}
            if cont:
                params["continue"] = cont
            page = dec.decode(await self.client.request("GET", self.path, params=params))
            for obj in page.items:
                if self._decode_item is not None:
                    obj = self._decode_item(obj)
                if self._transform is not None:
                    obj = self._transform(obj)
                ns, name = self._place(obj)
                fresh.setdefault(ns, {})[name] = obj
                self.listed += 1
            rv = page.metadata.resource_version or rv
            cont = page.metadata.continue_ or ""
            if not cont:
                break
        gone = [(ns, name) for ns, bucket in self._by_ns.items() for name in bucket
                if name not in fresh.get(ns, ())]
        for ns, name in gone:
            old = self._remove(ns, name)
            if old is not None:
                self._emit(self._on_delete, old)
        for bucket in fresh.values():
            for obj in bucket.values():
                old = self._store(obj)
                if old is None:
                    self._emit(self._on_add, obj)
                elif _rv(old) != _rv(obj):
                    self._emit(self._on_update, old, obj)
        self.resource_version = rv
        self.relists += 1
        self.synced.set()
        log.debug("informer %s: listed %d objects at resourceVersion %s", self.name, self.listed, rv)

    async def watch_once(self) -> None:
        """Watch from the current resourceVersion until the server ends the stream.

        Raises ApiError(410) when the resourceVersion is too old.
        """
        params = {
            "resourceVersion": self.resource_version,
            "allowWatchBookmarks": "true",
            "timeoutSeconds": str(random.randint(300, 600)),
        }
        decode = self._decode_item or self.client.decoder(self.item_type).decode
        async for etype, raw in self.client.watch(self.path, params):
            if etype == "ERROR":
                raise watch_error(raw, self.path)
            if etype == "BOOKMARK":
                bm = msgspec.json.decode(raw, type=_Bookmark)
                if bm.metadata.resource_version:
                    self.resource_version = bm.metadata.resource_version
                continue
            obj = decode(raw)
            if self._transform is not None:
                obj = self._transform(obj)
            rv = _rv(obj)
            if etype == "DELETED":
                old = self._remove(*self._place(obj))
                self._emit(self._on_delete, old if old is not None else obj)
            else:
                old = self._store(obj)
                if old is None:
                    self._emit(self._on_add, obj)
                else:
                    self._emit(self._on_update, old, obj)
            if rv:
                self.resource_version = rv

    async def run(self) -> None:
        """Keep the cache current until cancelled."""
        delay = self.backoff_initial
        need_list = True
        while True:
            try:
                if need_list:
                    await self.list_and_replace()
                    need_list = False
                await self.watch_once()
                delay = self.backoff_initial  # a watch that ended normally: resume at once
            except asyncio.CancelledError:
                raise
            except ApiError as exc:
                if exc.is_gone:
                    log.info("informer %s: resourceVersion %s expired, re-listing", self.name, self.resource_version)
                    need_list = True
                    continue
                if exc.code in (404, 403) and not self.synced.is_set():
                    log.warning("informer %s: %s", self.name, exc)
                # an API server that does not answer is reported once, by the client's observer
                level = logging.DEBUG if outage_reported(self.client, exc) else logging.WARNING
                log.log(level, "informer %s: %s; retrying in %.1fs", self.name, exc, delay)
                need_list = need_list or exc.code != 0
                await asyncio.sleep(delay * random.uniform(1.0, 1.2))
                delay = min(self.backoff_max, delay * 2)
            except Exception as exc:  # decode errors, protocol errors
                log.warning("informer %s: %r; re-listing in %.1fs", self.name, exc, delay)
                need_list = True
                await asyncio.sleep(delay)
                delay = min(self.backoff_max, delay * 2)

    def start(self) -> asyncio.Task[None]:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self.run(), name=f"informer:{self.name}")
        return self._task

    async def stop(self) -> None:
        if self._task is not None:
            await cancel_and_wait(self._task)
            self._task = None


def _rv(obj: Any) -> str:
    return obj.metadata.resource_version or ""
