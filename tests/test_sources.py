"""Fidelity: every cue quotes its page, every score stanza is on its page, as transmitted."""

from __future__ import annotations

import pytest

from kanripo import available, page_and_next, pages
from yuesheng.validate import load_cuesheet
from yuesheng.repertoire import data_dir
from yuesheng.score import Provenance

pytestmark = pytest.mark.skipif(not available, reason="../shared/sources is not beside the checkout")


def _long_page(page: str) -> tuple[str, str]:
    """'6-12b' → ('yili-jishi', '006-12b'); '周禮注疏 30-25a' → ('zhouli-zhushu', '030-25a')."""
    folder = "zhouli-zhushu" if page.startswith("周禮注疏 ") else "yili-jishi"
    juan, rest = page.removeprefix("周禮注疏 ").split("-")
    return folder, f"{int(juan):03d}-{rest}"


@pytest.mark.parametrize("path", sorted(data_dir("cues").glob("*.yaml")), ids=lambda p: p.stem)
def test_every_cue_quote_is_on_its_page(repertoire, path):
    sheet = load_cuesheet(path, repertoire)
    cites = [(c.id, c.cite) for c in sheet.cues]
    cites += [(r.id, r.cite) for r in (sheet.archery.rounds if sheet.archery else ())]
    missing = []
    for where, cite in cites:
        folder, page = _long_page(cite.page)
        if page not in pages(folder) or not _quoted_in_order(cite.quote, page_and_next(folder, page)):
            missing.append(f"{where}: {cite.page} {cite.quote}")
    assert missing == []


def _quoted_in_order(quote: str, text: str) -> bool:
    """Each part of a quote elided with … appears on the page, in order."""
    position = 0
    for part in quote.split("…"):
        found = text.find(part, position)
        if found < 0:
            return False
        position = found + len(part)
    return True


@pytest.mark.parametrize("piece_id", ["luming", "simu", "huanghuangzhehua", "yuli", "nanyoujiayu", "nanshanyoutai",
                                      "guanju", "getan", "juaner", "queshao", "caifan", "caipin",
                                      "zouyu-huangzhong-yu", "zouyu-jiazhong-jue"])
def test_every_stanza_is_on_its_cited_page_as_transmitted(repertoire, piece_id):
    piece = repertoire.find(piece_id)
    assert piece.provenance is Provenance.SOURCED
    for stanza in piece.stanzas:
        text = page_and_next("sepu", stanza.page)
        assert stanza.lyrics in text, f"stanza {stanza.number}: lyrics not on {stanza.page}"
        assert f"({stanza.lu_line}{stanza.suzi_line})" in text, f"stanza {stanza.number}: pitch block not on {stanza.page}"
    assert piece.source["mode_line"] in page_and_next("sepu", piece.source["mode_page"])


@pytest.mark.parametrize("piece_id", ["nangai", "baihua", "huashu", "yougeng", "chongqiu", "youyi", "sixia", "gaixia",
                                      "aoxia", "xingong", "lishou", "shao"])
def test_the_loss_is_quoted_from_its_page(repertoire, piece_id):
    piece = repertoire.find(piece_id)
    folder, page = _long_page(piece.lost["cite"].removeprefix("儀禮集釋 "))
    assert piece.lost["quote"] in page_and_next(folder, page)
