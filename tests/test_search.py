"""The PDF is searchable: every stanza of every sourced piece extracts as a line of text in reading order, found as
typed ('呦呦鹿鳴', '窈窕淑女'), and in the standard forms as well as the source's variants (闗→關, 㫖→旨, 夀→壽),
and in simplified characters (关关雎鸠, 鹿鸣);
read back with poppler's pdftotext and with pypdf."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from yuesheng.music.score import Piece
from yuesheng.outputs.engrave import (
    Notation,
    Setting,
    book_source,
    engrave,
    find_cjk_font,
    piece_bookpart,
    stanza_words,
)
from yuesheng.text import simplified_forms, standard_forms

pypdf = pytest.importorskip("pypdf")


@pytest.fixture(scope="module")
def book(repertoire, has_engraver, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Piece], Path]:
    pieces = [p for p in repertoire if p.playable and not p.realization]
    out = tmp_path_factory.mktemp("search") / "all.pdf"
    engrave(book_source([piece_bookpart(p, Setting(notation=Notation.JIANPU)) for p in pieces], font=find_cjk_font()),
            out)
    return pieces, out


def _first_lines(pieces) -> list[tuple[str, str]]:
    return [(p.title, stanza_words(s).split(" ")[0]) for p in pieces for s in p.stanzas]


def _two_lines(pieces) -> list[tuple[str, str]]:
    return [(p.title, "".join(stanza_words(s).split(" ")[:2])) for p in pieces for s in p.stanzas]


def _check(text: str, pieces, *, line_starts: bool = True) -> None:
    lines = set(text.splitlines())
    for title, first in _first_lines(pieces):
        if line_starts:
            assert any(line.startswith(first) for line in lines), f"{title}: {first} not a line of the text"
        assert first in text, f"{title}: {first} not found"
        assert standard_forms(first) in text, f"{title}: {standard_forms(first)} not found"
    for title, two in _two_lines(pieces):  # typed without a space: '呦呦鹿鳴食野之苹' was not found
        if line_starts or all(ord(c) <= 0xFFFF for c in two):  # pypdf splits at a fallback font's 𤣥 (卷耳)
            assert two in text and standard_forms(two) in text, f"{title}: {two} not found"
            assert simplified_forms(two) in text, f"{title}: {simplified_forms(two)} not found"
    for typed in ("呦呦鹿鳴", "窈窕淑女", "關關雎鳩", "旨且多", "眉壽", "呦呦鹿鳴食野之苹", "關關雎鳩在河之洲",
                  "关关雎鸠", "呦呦鹿鸣食野之苹", "南有嘉鱼"):
        assert typed in text


@pytest.mark.slow
def test_pdftotext_finds_every_stanza_as_typed(book) -> None:
    if not shutil.which("pdftotext"):
        pytest.skip("pdftotext not installed (Debian poppler-utils; .ci/run installs it)")
    pieces, out = book
    _check(subprocess.run(["pdftotext", str(out), "-"], capture_output=True, text=True, check=True).stdout, pieces)


@pytest.mark.slow
def test_pypdf_finds_every_stanza_as_typed(book) -> None:
    pieces, out = book
    # pypdf splits a line where a character comes from a fallback font (𤣥 in 卷耳), so only as found, not as lines
    _check("\n".join(page.extract_text() for page in pypdf.PdfReader(out).pages), pieces, line_starts=False)
