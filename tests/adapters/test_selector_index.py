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
