"""Facts `pyhpa reconcile` relies on, checked on the whole case corpus and generated documents.

* the pass hands each snapshot HPA to ``reconcile_hpa`` without a defensive deep copy, which is
  only right while a reconcile never mutates its argument;
* a JSON snapshot skips the YAML-to-JSON normalisation because msgspec already yields its result.
"""

from __future__ import annotations

import json
import pathlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyhpa.api.codec import dumps_json
from pyhpa.api import goyaml
from pyhpa.api.loader import LoadError, load_files, load_stream
from pyhpa.api.timefmt import parse_time
from pyhpa.offline import snapshot as offline
from pyhpa.engine.config import ControllerConfig

CASES = pathlib.Path(__file__).resolve().parent / "cases"


def _cases() -> list[pathlib.Path]:
    return sorted(p for p in CASES.iterdir() if (p / "snapshot.yaml").exists() and not (p / "expected-error").exists())


def _encode(hpa) -> bytes:
    return dumps_json(hpa)


def test_a_pass_never_mutates_the_snapshot_hpas(monkeypatch: pytest.MonkeyPatch) -> None:
    captured = []
    real = offline.read_snapshot

    def spy(docs, config):
        snap = real(docs, config)
        captured.append((snap, [_encode(h) for h in snap.hpas]))
        return snap

    monkeypatch.setattr(offline, "read_snapshot", spy)
    checked = 0
    for case in _cases():
        try:
            docs = load_files([str(case / "snapshot.yaml")])
            offline.reconcile_snapshot(docs, ControllerConfig(), parse_time("2026-01-01T00:10:00Z"))
        except LoadError:
            continue
        snap, before = captured[-1]
        assert [_encode(h) for h in snap.hpas] == before, case.name
        checked += 1
    assert checked > 50


# Characters of the basic plane: json.dumps writes the others as surrogate-pair escapes, which
# YAML (libyaml and go-yaml alike) does not read. Integers Go holds exactly (int64 or uint64).
bmp_text = st.text(st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",)), max_size=6)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.floats(allow_nan=False, allow_infinity=False) | bmp_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(bmp_text, inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(bmp_text, json_values, max_size=5))
def test_json_documents_need_no_normalisation(doc):
    doc = {"apiVersion": "v1", "kind": "Thing", **doc}
    text = json.dumps(doc)
    [loaded] = load_stream(text, "x.json")
    assert loaded.raw == goyaml.load(text)  # what the YAML reader makes of the same text
