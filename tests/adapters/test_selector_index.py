"""The selector registry keeps each HPA's selector with the text it was parsed from, so a sync
whose target still reports the same selector reuses it, and any other text is parsed afresh."""

from pyhpa.adapters.selector_index import IndexedSelectorRegistry
from pyhpa.api.selectors import Selector


def test_selector_of_answers_only_for_the_same_text() -> None:
    reg = IndexedSelectorRegistry()
    reg.register("ns/web")
    web = Selector.parse("app=web")
    reg.put_selector("ns/web", web, "app=web")
    assert reg.selector_of("ns/web", "app=web") is web
    assert reg.selector_of("ns/web", "app=api") is None
    assert reg.hpas_selecting("ns", {"app": "web"}) == {"ns/web"}


def test_unregistered_or_removed_hpas_keep_nothing() -> None:
    reg = IndexedSelectorRegistry()
    reg.put_selector("ns/web", Selector.parse("app=web"), "app=web")  # not registered: ignored
    assert reg.selector_of("ns/web", "app=web") is None
    reg.register("ns/web")
    reg.put_selector("ns/web", Selector.parse("app=web"), "app=web")
    reg.remove("ns/web")
    reg.register("ns/web")
    assert reg.selector_of("ns/web", "app=web") is None
    assert reg.hpas_selecting("ns", {"app": "web"}) == set()  # select-nothing until put again


def test_a_put_without_text_forgets_the_text() -> None:
    reg = IndexedSelectorRegistry()
    reg.register("ns/web")
    reg.put_selector("ns/web", Selector.parse("app=web"), "app=web")
    reg.put_selector("ns/web", Selector.parse("app=api"))
    assert reg.selector_of("ns/web", "app=web") is None


def test_hpas_selecting_finds_what_testing_every_selector_finds() -> None:
    """The pinned-pair index only narrows candidates: each answer equals testing every HPA."""
    texts = ["app=web", "app=web,tier=front", "app in (web)", "app in (web,api)", "tier=front",
             "app!=web", "app", "!app", "app==api", "tier notin (back),app=api", ""]
    reg = IndexedSelectorRegistry()
    for i, text in enumerate(texts):
        reg.register(f"ns/h{i}")
        reg.put_selector(f"ns/h{i}", Selector.parse(text), text)
    reg.register("other/h0")
    reg.put_selector("other/h0", Selector.parse("app=web"), "app=web")
    reg.register("ns/never-put")  # select-nothing
    reg.put_selector("ns/h0", Selector.parse("app=api"), "app=api")  # re-pinned
    reg.register("ns/gone")
    reg.put_selector("ns/gone", Selector.parse("app=web"), "app=web")
    reg.remove("ns/gone")
    final = {f"ns/h{i}": t for i, t in enumerate(texts)} | {"ns/h0": "app=api"}
    for labels in ({"app": "web"}, {"app": "web", "tier": "front"}, {"app": "api"}, {"tier": "back"},
                   {"app": "api", "tier": "back"}, {}, {"other": "x"}):
        expected = {k for k, t in final.items() if Selector.parse(t).matches(labels)}
        assert reg.hpas_selecting("ns", labels) == expected, labels
    assert reg.hpas_selecting("other", {"app": "web"}) == {"other/h0"}
    assert reg.hpas_selecting("none", {"app": "web"}) == set()


def test_kept_answers_follow_every_selector_change() -> None:
    """Answers are kept per label set: each change of a selector in the namespace (a new one,
    a replaced one, a registered or removed HPA) is seen by the next question."""
    reg = IndexedSelectorRegistry()
    web = {"app": "web"}
    reg.register("ns/a")
    assert reg.hpas_selecting("ns", web) == set()
    reg.put_selector("ns/a", Selector.parse("app=web"), "app=web")
    assert reg.hpas_selecting("ns", web) == {"ns/a"}
    reg.register("ns/b")
    reg.put_selector("ns/b", Selector.parse("app in (web,api)"), "app in (web,api)")
    assert reg.hpas_selecting("ns", web) == {"ns/a", "ns/b"}
    reg.put_selector("ns/a", Selector.parse("app=api"), "app=api")
    assert reg.hpas_selecting("ns", web) == {"ns/b"}
    assert reg.hpas_selecting("ns", {"app": "api"}) == {"ns/a", "ns/b"}
    reg.remove("ns/b")
    assert reg.hpas_selecting("ns", web) == set()
    reg.register("other/c")  # another namespace's HPA: this one's answers stand
    reg.put_selector("other/c", Selector.parse("app=web"), "app=web")
    assert reg.hpas_selecting("ns", {"app": "api"}) == {"ns/a"}
    assert reg.hpas_selecting("other", web) == {"other/c"}
    for i in range(2 * IndexedSelectorRegistry._KEPT_ANSWERS):  # many label sets: still right
        assert reg.hpas_selecting("ns", {"app": "api", "hash": str(i)}) == {"ns/a"}
