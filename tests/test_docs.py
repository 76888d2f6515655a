"""The docs stand on their own: nothing cites a file outside the repository, every relative link
and anchor in README.md and docs/ resolves, and README.md stays a short entry that links every
page of docs/.

Why a test: a citation of a specification that is not in the repository, or a link to a heading
that was renamed, sends a reader nowhere, and neither shows up in review.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
SCANNED = ("pyhpa", "tests", "bench", "scripts", "deploy", "examples", "docs")
README_MAX_LINES = 200

# Citations of files that live outside the repository (the working notes the project was built
# from). Spelled in pieces so that this file does not match its own patterns.
SECTION = "\u00a7"
OUTSIDE_REFERENCES = (
    "shared" + "/spec",
    "../" + "shared",
    "spec " + SECTION,
    SECTION,  # a section number of such a specification
    "/work" + "/",
    "hpa-controller" + ".md",
    "hpa-api" + ".md",
    "kubectl-protocol" + ".md",
    "keps" + ".md",
    "reconcile-contract" + ".md",
)


def scanned_files() -> list[Path]:
    files = [README]
    for top in SCANNED:
        for path in sorted((REPO / top).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix not in (".pyc", ".png"):
                files.append(path)
    return files


def test_nothing_cites_a_file_outside_the_repository() -> None:
    found = []
    for path in scanned_files():
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue  # not text
        for lineno, line in enumerate(text.splitlines(), start=1):
            for pattern in OUTSIDE_REFERENCES:
                if pattern in line:
                    found.append(f"{path.relative_to(REPO)}:{lineno}: {pattern!r}: {line.strip()[:100]}")
    assert not found, "cite docs/ or upstream's public source instead:\n" + "\n".join(found)


# --------------------------------------------------------------------------- links

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text without code blocks and code spans, where a `[x](y)` is not a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, code marks and punctuation dropped (letters,
    digits, ``_`` and ``-`` kept), spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor; a repeated heading gets -1, -2 ... as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(match.group(2))
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else f"{base}-{n}")
    return out


def doc_pages() -> list[Path]:
    return sorted(DOCS.glob("*.md"))


def link_problems(page: Path) -> list[str]:
    problems = []
    for target in LINK.findall(prose(page.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        where = f"{page.relative_to(REPO)}: ({target})"
        if not dest.exists():
            problems.append(f"{where}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{where}: no heading with anchor #{anchor} in {dest.relative_to(REPO)}")
    return problems


def test_slug_follows_github() -> None:
    assert slug("Per-HPA sync period (KEP-6003)") == "per-hpa-sync-period-kep-6003"
    assert slug("`pyhpa reconcile`") == "pyhpa-reconcile"
    assert slug("AutoscalerState: the controller's memory") == "autoscalerstate-the-controllers-memory"
    assert slug("The fuzzer: `make fuzz`") == "the-fuzzer-make-fuzz"


@pytest.mark.parametrize("page", [README, *doc_pages()], ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page: Path) -> None:
    problems = link_problems(page)
    assert not problems, "\n".join(problems)


def test_a_broken_link_is_found(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checker itself: a missing file and a missing anchor are both reported."""
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    (tmp_path / "b.md").write_text("# Title\n\n## A section\n")
    page = tmp_path / "a.md"
    page.write_text("[ok](b.md#a-section) [gone](c.md) [bad](b.md#nowhere) `[code](x.md)`\n")
    problems = link_problems(page)
    assert len(problems) == 2
    assert "no such file" in problems[0] and "#nowhere" in problems[1]


CODE_CITATION = re.compile(r"\bdocs/([\w-]+\.md)(?:#([\w-]+))?")


def test_docs_pages_cited_in_the_code_exist() -> None:
    """A comment's ``docs/offline.md#the-snapshot-format`` must lead to that page and heading."""
    problems = []
    for path in scanned_files():
        if path.suffix != ".py" or path == Path(__file__).resolve():
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for page, anchor in CODE_CITATION.findall(line):
                dest = DOCS / page
                if not dest.exists():
                    problems.append(f"{path.relative_to(REPO)}:{lineno}: docs/{page}: no such page")
                elif anchor and anchor not in anchors(dest):
                    problems.append(f"{path.relative_to(REPO)}:{lineno}: docs/{page}#{anchor}: no such heading")
    assert not problems, "\n".join(problems)


# --------------------------------------------------------------------------- README


def test_readme_is_short_and_links_every_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= README_MAX_LINES
    linked = {(README.parent / t.partition("#")[0]).resolve() for t in LINK.findall(prose(text))}
    unlinked = [str(p.relative_to(REPO)) for p in doc_pages() if p.resolve() not in linked]
    assert doc_pages(), "docs/ has no pages"
    assert not unlinked, f"README.md does not link: {', '.join(unlinked)}"


def test_readme_starts_with_the_two_commands() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert lines[2] == "```sh"
    assert lines[3].startswith("make demo ")
    assert lines[4].startswith("make test ")
    assert lines[5] == "```"
