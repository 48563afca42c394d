"""Reading the Kanseki Repository transcriptions in ../shared/sources for fidelity tests."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

SOURCES = Path(__file__).resolve().parents[2] / "shared" / "sources"
PAGE = re.compile(r"<pb:KR\w+?_WYG_(\d{3}-\d+[ab])>")


@cache
def pages(folder: str) -> dict[str, str]:
    """Page id ('006-12b') → the page's text with line ends and indentation removed."""
    out: dict[str, str] = {}
    for path in sorted((SOURCES / folder).glob("*.txt")):
        page = None
        for raw in path.read_text(encoding="utf-8").split("\n"):
            match = PAGE.search(raw)
            if match:
                page = match.group(1)
                raw = raw[match.end():]
            if page:
                out[page] = out.get(page, "") + re.sub(r"[¶\s\u3000]", "", raw)
    return out


def page_and_next(folder: str, page: str) -> str:
    """A page's text followed by the next page's (a passage may run across the break)."""
    ids = list(pages(folder))
    index = ids.index(page)
    return "".join(pages(folder)[i] for i in ids[index: index + 2])


available = (SOURCES / "sepu").is_dir() and (SOURCES / "yili-jishi").is_dir()
