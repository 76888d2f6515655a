"""Shared fixtures of the API model tests: the manifest corpus."""

from __future__ import annotations

import pathlib

import pytest

from pyhpa.api.loader import Document, load_files

CORPUS = pathlib.Path(__file__).parent / "corpus"


def corpus_documents() -> list[Document]:
    return load_files([str(p) for p in sorted(CORPUS.iterdir())])


@pytest.fixture(scope="session")
def corpus() -> list[Document]:
    return corpus_documents()
