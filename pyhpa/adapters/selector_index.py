"""The HPA selector registry indexed by namespace (upstream's selector BiMultimap).

Kept free of the Kubernetes client so the simulator and the live controller share it without
the simulator paying for importing an HTTP stack.
"""

from __future__ import annotations

from pyhpa.api.selectors import Selector


class IndexedSelectorRegistry:
    """SelectorRegistry indexed by namespace: `hpas_selecting` only tests the HPAs of that namespace."""

    def __init__(self) -> None:
        self._by_ns: dict[str, dict[str, Selector]] = {}
        self._texts: dict[str, str] = {}  # key -> the text its stored selector was parsed from

    @staticmethod
    def _ns(key: str) -> str:
        return key.split("/", 1)[0] if "/" in key else ""

    def register(self, key: str) -> None:
        self._by_ns.setdefault(self._ns(key), {}).setdefault(key, Selector.nothing())

    def put_selector(self, key: str, selector: Selector, text: str | None = None) -> None:
        bucket = self._by_ns.get(self._ns(key))
        if bucket is not None and key in bucket:
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

    def hpas_selecting(self, namespace: str, labels: dict[str, str]) -> set[str]:
        return {k for k, s in self._by_ns.get(namespace, {}).items() if s.matches(labels)}

    def remove(self, key: str) -> None:
        bucket = self._by_ns.get(self._ns(key))
        if bucket is not None:
            bucket.pop(key, None)
            self._texts.pop(key, None)
            if not bucket:
                self._by_ns.pop(self._ns(key), None)

    def __contains__(self, key: str) -> bool:
        return key in self._by_ns.get(self._ns(key), {})
