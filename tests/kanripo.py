"""The shipped Kanseki Repository transcriptions, in the shape the fidelity tests use (see yuesheng.sources)."""

from __future__ import annotations

from yuesheng import sources

_TEXT = {t.folder: t.key for t in sources.TEXTS.values()}


def pages(folder: str) -> dict[str, str]:
    """Page id ('006-12b') → the page's text, lines joined and whitespace removed, of the shipped folder."""
    return {f"{p.juan:03d}-{p.leaf}{p.side}": page.text for p, page in sources.pages(_TEXT[folder]).items()}


def page_and_next(folder: str, page: str) -> str:
    """A page's text followed by the next page's (a passage may run across the break)."""
    found = sources.page(page, text=_TEXT[folder])
    following = sources.next_page(found)
    return found.text + (following.text if following else "")


available = True  # the texts ship with the package: nothing is skipped
