"""The README is a quick start (issue 47): at most 160 lines, every link it has leads to
a file of the repository (and a heading there, for ``#anchor`` links), and it links every
user-guide page of the documentation site. Its Python example runs with the pages'
examples (``.ci/dev docs``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
MAX_LINES = 160
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub and mkdocs' toc both make it for plain headings."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    out = set()
    fenced = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            out.add(_slug(line.lstrip("#")))
    return out


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # not inside code
    return LINK.findall(text)


def test_readme_is_short():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"README.md has {len(lines)} lines (at most {MAX_LINES})"


def test_readme_links_are_valid():
    links = _links(README)
    assert links, "the README links nothing"
    for link in links:
        assert not link.startswith(("http://", "https://", "/")), link
        target, _, anchor = link.partition("#")
        path = (README.parent / target).resolve() if target else README
        assert path.is_relative_to(ROOT), link
        assert path.exists(), f"README.md links {link}: no such file"
        if anchor:
            assert anchor in _anchors(path), f"README.md links {link}: no such heading"


def test_readme_links_every_user_guide_page():
    yaml = pytest.importorskip("yaml", reason="PyYAML (a dependency of mkdocs) is missing")
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text())["nav"]
    guide = next(item["User guide"] for item in nav if "User guide" in item)
    pages = [f"docs/{page}" for entry in guide for page in entry.values()]
    linked = set(_links(README))
    missing = [p for p in pages + ["docs/getting-started.md"] if p not in linked]
    assert missing == []


def test_readme_has_the_two_commands_and_the_wheel_size():
    text = README.read_text()
    assert "```sh\n.ci/dev demo\n```" in text
    assert "```sh\n.ci/dev test\n```" in text
    assert re.search(r"wheel is \d+(\.\d+)? MB", text), "the README says the wheel's size"
