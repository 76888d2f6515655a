"""Objects of one namespace grouped by label set, built where the objects change.

A selector is then tested once per label set instead of once per object (1,000 HPAs x 10,000
pods stays fast, and a Deployment's pods, which share one label set, cost one test). Past a few
groups, a selector that pins a label to one value (``app=web``) is tested only against the label
sets that carry that pair: a necessary condition, so the answer is the same, in the same order,
as testing every label set. A few objects (an index rebuilt at every metrics scrape) are grouped
by runs of one shared label dict only, which costs less than hashing label sets; a selector then
sees some label sets twice, with the same answer.
"""

from __future__ import annotations

from typing import Any, Callable, Generic, Iterable, Mapping, NamedTuple, TypeVar

from pyhpa.api.selectors import Selector

T = TypeVar("T")

_new_group = tuple.__new__
_SCAN_LIMIT = 8  # up to this many objects or groups, testing each costs less than hashing or narrowing first


class LabelGroup(NamedTuple, Generic[T]):
    """The objects that carry one label set, in the order they were given, and what the index's
    owner computes of them once (``summarize``)."""

    labels: Mapping[str, str]
    items: tuple[T, ...]
    summary: Any


class LabelIndex(Generic[T]):
    """Immutable once built: a new list of objects means a new index. ``groups`` partition the
    objects; each group's objects carry equal labels."""

    __slots__ = ("groups", "_by_pair", "_selected")

    def __init__(self, items: Iterable[T], labels_of: Callable[[T], Mapping[str, str] | None],
                 summarize: Callable[[tuple[T, ...]], Any] | None = None, keep_selections: bool = False) -> None:
        listed = items if isinstance(items, (list, tuple)) else list(items)
        runs: list[tuple[Mapping[str, str], list[T]]] = []
        previous: Mapping[str, str] | None = None
        members: list[T] = []
        if len(listed) <= _SCAN_LIMIT:
            for item in listed:
                labels = labels_of(item) or {}
                if labels != previous:
                    previous = labels
                    members = []
                    runs.append((labels, members))
                members.append(item)
        else:
            grouped: dict[frozenset, tuple[Mapping[str, str], list[T]]] = {}
            for item in listed:
                labels = labels_of(item) or {}
                if labels != previous:  # objects of one workload mostly share one label set, and come together
                    previous = labels
                    key = frozenset(labels.items())
                    found = grouped.get(key)
                    if found is None:
                        found = grouped[key] = (labels, [])
                    members = found[1]
                members.append(item)
            runs = list(grouped.values())
        groups = []
        for labels, objs in runs:
            members_of = tuple(objs)
            # tuple.__new__: a NamedTuple's own __new__ is a Python function (a call per group)
            groups.append(_new_group(LabelGroup, (labels, members_of,
                                                  summarize(members_of) if summarize is not None else None)))
        self.groups: tuple[LabelGroup[T], ...] = tuple(groups)
        by_pair: dict[tuple[str, str], list[LabelGroup[T]]] = {}
        if len(self.groups) > _SCAN_LIMIT:
            for group in self.groups:
                for pair in group.labels.items():
                    by_pair.setdefault(pair, []).append(group)
        self._by_pair = by_pair
        # select()'s answers with ``keep_selections``: the index never changes, so each selector's
        # groups are found once per index (a controller lists an HPA's pods at every sync, and
        # the pods change far less often; an index built for one read keeps nothing)
        self._selected: dict[Selector, list[LabelGroup[T]]] | None = {} if keep_selections else None

    def select(self, selector: Selector) -> list[LabelGroup[T]]:
        """The groups whose label set ``selector`` matches, in index order (do not mutate the list)."""
        kept = self._selected
        if kept is None:
            return self._match(selector)
        found = kept.get(selector)
        if found is None:
            found = kept[selector] = self._match(selector)
        return found

    def _match(self, selector: Selector) -> list[LabelGroup[T]]:
        candidates: Iterable[LabelGroup[T]] = self.groups
        for r in selector.requirements if self._by_pair else ():
            value = selector.requires_exact_match(r.key)
            if value is not None:
                candidates = self._by_pair.get((r.key, value), ())
                break
        return [g for g in candidates if selector.matches(g.labels)]
