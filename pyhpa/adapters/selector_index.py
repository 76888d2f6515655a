"""The HPA selector registry indexed by namespace (upstream's selector BiMultimap).

Kept free of the Kubernetes client so the simulator and the live controller share it without
the simulator paying for importing an HTTP stack.
"""

from __future__ import annotations

from pyhpa.api.selectors import Selector


def _pinned_pair(selector: Selector) -> tuple[str, str] | None:
    """A `label=value` every label set the selector matches must carry (None: no such pair)."""
    if selector.is_nothing():
        return None
    for r in selector.requirements:
        value = selector.requires_exact_match(r.key)
        if value is not None:
            return r.key, value
    return None


class IndexedSelectorRegistry:
    """SelectorRegistry indexed by namespace, and within it by a label pair each selector pins:
    `hpas_selecting` tests only the HPAs whose pinned pair the labels carry, plus those whose
    selector pins none. Testing every HPA of the namespace made the ambiguity check of 1,000
    HPAs in one namespace cost 1,000 selector tests per reconcile.

    Its answers are kept per namespace and label set until a selector of that namespace changes
    (every sync asks about the same few label sets; a selector changes on a new target or HPA)."""

    _KEPT_ANSWERS = 64  # label sets remembered per namespace (a rollout brings new ones): then start over

    def __init__(self) -> None:
        self._by_ns: dict[str, dict[str, Selector]] = {}
        self._texts: dict[str, str] = {}  # key -> the text its stored selector was parsed from
        self._pinned: dict[str, dict[tuple[str, str], set[str]]] = {}  # ns -> pinned pair -> keys
        self._unpinned: dict[str, set[str]] = {}  # ns -> keys whose selector pins no pair
        self._pin_of: dict[str, tuple[str, str] | None] = {}  # key -> its entry in the two above
        self._answers: dict[str, dict[frozenset, frozenset[str]]] = {}  # ns -> label set -> hpas_selecting

    @staticmethod
    def _ns(key: str) -> str:
        return key.split("/", 1)[0] if "/" in key else ""

    def _unindex(self, key: str) -> None:
        ns = self._ns(key)
        self._answers.pop(ns, None)  # the namespace's selectors change: its kept answers go
        if key not in self._pin_of:
            return
        pair = self._pin_of.pop(key)
        if pair is None:
            keys = self._unpinned.get(ns)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._unpinned[ns]
            return
        by_pair = self._pinned.get(ns, {})
        keys = by_pair.get(pair)
        if keys is not None:
            keys.discard(key)
            if not keys:
                del by_pair[pair]
            if not by_pair:
                self._pinned.pop(ns, None)

    def _index(self, key: str, selector: Selector) -> None:
        self._unindex(key)  # drops the namespace's kept answers
        if selector.is_nothing():
            return  # matches no label set: never a candidate
        ns = self._ns(key)
        pair = self._pin_of[key] = _pinned_pair(selector)
        if pair is None:
            self._unpinned.setdefault(ns, set()).add(key)
        else:
            self._pinned.setdefault(ns, {}).setdefault(pair, set()).add(key)

    def register(self, key: str) -> None:
        bucket = self._by_ns.setdefault(self._ns(key), {})
        if key not in bucket:  # a select-nothing selector: no answer changes, dropped all the same
            bucket[key] = Selector.nothing()
            self._answers.pop(self._ns(key), None)

    def put_selector(self, key: str, selector: Selector, text: str | None = None) -> None:
        bucket = self._by_ns.get(self._ns(key))
        if bucket is not None and key in bucket:
            if bucket[key] != selector:
                self._index(key, selector)
            bucket[key] = selector
            if text is None:
                self._texts.pop(key, None)
            else:
                self._texts[key] = text

    def selector_of(self, key: str, text: str) -> Selector | None:
        """The selector stored for ``key`` when it was parsed from ``text``: a target's selector
        rarely changes, and parsing it again on every sync cost the simulator ~8% of a sync."""
        if self._texts.get(key) != text:
            return None
        return self._by_ns.get(self._ns(key), {}).get(key)

    def hpas_selecting(self, namespace: str, labels: dict[str, str]) -> frozenset[str]:
        label_set = frozenset(labels.items())
        kept = self._answers.get(namespace)
        if kept is not None:
            found = kept.get(label_set)
            if found is not None:
                return found
        elif namespace not in self._by_ns:
            return frozenset()
        else:
            kept = self._answers[namespace] = {}
        if len(kept) >= self._KEPT_ANSWERS:
            kept.clear()
        found = kept[label_set] = frozenset(self._select(namespace, labels))
        return found

    def _select(self, namespace: str, labels: dict[str, str]) -> list[str]:
        selectors = self._by_ns[namespace]
        candidates = set(self._unpinned.get(namespace, ()))
        by_pair = self._pinned.get(namespace)
        if by_pair:
            for pair in labels.items():
                candidates.update(by_pair.get(pair, ()))
        return [k for k in candidates if selectors[k].matches(labels)]

    def remove(self, key: str) -> None:
        bucket = self._by_ns.get(self._ns(key))
        if bucket is not None:
            self._unindex(key)
            bucket.pop(key, None)
            self._texts.pop(key, None)
            if not bucket:
                self._by_ns.pop(self._ns(key), None)

    def __contains__(self, key: str) -> bool:
        return key in self._by_ns.get(self._ns(key), {})
