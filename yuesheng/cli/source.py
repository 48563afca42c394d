"""``yuesheng source PAGE [--quote TEXT]``: a page of the shipped texts, its layers told apart, a quote marked."""

from __future__ import annotations

import argparse
from typing import Any

from yuesheng import characters, sources
from yuesheng.cli.parsing import dump_json, format_option
from yuesheng.errors import QuoteError
from yuesheng.sources import Page, QuoteMatch

_LABEL_CELLS = 2  # labels padded to two CJK cells: 經 記 鄭注 釋曰 注 案 音義 疏 小字 (鄭目録 overruns)


MARKS = ("【", "】")  # around the quote; plain text, so it survives the escaping of everything printed (and a copy)


def _marked(text: str, start: int, spans: tuple[tuple[int, int], ...], marks: tuple[str, str]) -> str:
    """*text* (at offset *start* of the matched string) with the parts inside *spans* between *marks*."""
    out, inside = [], False
    for index, char in enumerate(text, start):
        now = any(a <= index < b for a, b in spans)
        if now != inside:
            out.append(marks[0] if now else marks[1])
            inside = now
        out.append(char)
    if inside:
        out.append(marks[1])
    return "".join(out)


def _page_lines(page: Page, start: int, spans: tuple[tuple[int, int], ...], marks: tuple[str, str]) -> list[str]:
    """One line per part: its label (經 at the margin, the notes indented), its text with the quote marked."""
    lines = []
    for part in page.parts:
        text = characters.display(part.text)
        label = part.kind + "\u3000" * (_LABEL_CELLS - len(part.kind)) if part.kind else ""
        indent = "" if part.kind in ("經", "記", "") else "\u3000"
        lines.append(f"{label}{indent}{_marked(text, start, spans, marks)}")
        start += len(text)
    return lines


def cmd_source(args: argparse.Namespace) -> str:
    page = sources.page(args.page)
    match = None
    if args.quote is not None:
        match = sources.find_quote(args.quote, page)
        if match is None:
            following = sources.next_page(page)
            onto = f" nor running on to {following.id}" if following else ""
            raise QuoteError(f"quote {args.quote!r} is not on {page.id.citation}{onto}")
    following = sources.next_page(page) if match and match.runs_on else None
    shown = [page] + ([following] if following else [])
    codes = sorted({c for p in shown for c in characters.private_use_codes(p.text)})
    if args.format == "json":
        return dump_json(_json(page, following, match, codes, args.quote))
    spans = match.spans if match else ()
    marks = MARKS
    info = sources.TEXTS[page.id.text]
    lines = [f"{page.id.citation} — {info.kr_id} {info.title} 卷{page.id.juan}, leaf {page.id.leaf}{page.id.side}"
             f" (page {page.id})", ""]
    lines += _page_lines(page, 0, spans, marks)
    if following:
        lines += ["", f"→ {following.id.citation} (the quote runs on)", ""]
        lines += _page_lines(following, len(characters.display(page.text)), spans, marks)
    if codes:
        lines += ["", "private-use characters:"]
        lines += [f"  &{c}; → {characters.display(f'&{c};')}  ({characters.PRIVATE_USE[c].source})"
                  if c in characters.PRIVATE_USE else f"  &{c}; → not in the table" for c in codes]
    return "\n".join(lines) + "\n"


def _json(page: Page, following: Page | None, match: QuoteMatch | None, codes: list[str],
          quote: str | None) -> dict[str, Any]:
    def parts(p: Page) -> list[dict[str, str]]:
        return [{"kind": part.kind, "text": characters.display(part.text), "source": part.text} for part in p.parts]

    info, known = sources.TEXTS[page.id.text], characters.PRIVATE_USE
    out: dict[str, Any] = {
        "page": str(page.id), "citation": page.id.citation, "text_id": info.kr_id, "title": info.title,
        "juan": page.id.juan, "leaf": page.id.leaf, "side": page.id.side, "parts": parts(page),
        "private_use": [{"code": c, "char": known[c].char if c in known else None,
                         "source": known[c].source if c in known else ""} for c in codes],
    }
    if quote is not None and match is not None:
        out["quote"] = {"text": quote, "spans": [list(s) for s in match.spans], "runs_on": match.runs_on}
    if following is not None:
        out["next"] = {"page": str(following.id), "parts": parts(following)}
    return out


def _add_source(p: argparse.ArgumentParser) -> None:
    p.description = "Pages: 9-23b (儀禮集釋), zhouli:30-25a or '周禮注疏 30-25a', sepu:2-3a or '瑟譜 2-3a'."
    p.add_argument("page", metavar="PAGE", help="a page: 9-23b, zhouli:30-25a, sepu:2-3a")
    p.add_argument("--quote", metavar="TEXT", help="mark this quote (… for words left out); exit 1 if it is not there")
    format_option(p)
    p.set_defaults(func=cmd_source)


ARGUMENTS = {"source": _add_source}
