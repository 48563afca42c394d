"""The shipped text font: every character the texts use, embedded in the pages, and no glyph drawn as a missing-glyph
box in Chromium (𤣥 U+248E5, which Noto CJK lacks, above all)."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from typing import Any

import pytest
from fontTools.ttLib import TTFont

from yuesheng import build, fonts, load
from yuesheng.cli import main
from yuesheng.music.repertoire import data_dir

XUAN = "\U000248e5"  # 𤣥, in 鄭注's 𤣥端 (cues/xiangyinjiu.yaml): not in Noto CJK
_FACE = re.compile(r'font-family: "(YueshengHana[AB])"; [^}]*?url\(data:font/woff;base64,([A-Za-z0-9+/=]+)\)')


def _embedded(html: str) -> dict[str, frozenset[int]]:
    """The families embedded in *html* and the code points each has."""
    return {family: frozenset(TTFont(io.BytesIO(base64.b64decode(data))).getBestCmap())
            for family, data in _FACE.findall(html)}


def _covered(html: str, text: str) -> list[str]:
    """The characters of *text* (from U+2E80) that no font embedded in *html* has."""
    cmaps = _embedded(html).values()
    return [chr(c) for c in fonts.wanted(text) if not any(c in cmap for cmap in cmaps)]


def test_the_shipped_fonts_have_every_character_the_package_uses():
    text = fonts.shipped_text()
    assert XUAN in text and "⿰" in text  # 𤣥端 in the texts; the described Kanripo characters
    assert fonts.missing(text) == []
    for path in fonts.FONT_FILES:
        names = {n.toUnicode() for n in TTFont(path)["name"].names if n.nameID == 1}
        assert names == {path.stem}  # renamed: the subset is not Hanazono itself


def test_wanted_is_every_character_from_u2e80_on_once_in_order():
    text = "ab é ⺀" + "\u2e7f" + XUAN + "樂聲樂 \ud800 —" + "x" * 1000 + "\U0010ffff"
    assert fonts.wanted(text) == [0x2E80, 0x6A02, 0x8072, 0xD800, 0x248E5, 0x10FFFF]
    assert fonts.wanted("ascii only \u2e7f") == []


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("fonts") / "xiangyinjiu.html"
    assert main(["sheet", "xiangyinjiu", "-o", str(path)]) == 0
    return path


def test_the_page_embeds_a_font_for_every_character_it_holds(page):
    html = page.read_text(encoding="utf-8")
    assert XUAN in html and set(_embedded(html)) == {"YueshengHanaA", "YueshengHanaB"}
    assert _covered(html, html) == []
    assert '"YueshengHanaA", "YueshengHanaB"' in html  # in the page's font list


def test_the_console_embeds_a_font_for_every_character_its_cues_show(repertoire):
    from test_console import Live

    timeline = build(load(data_dir("cues") / "xiangyinjiu.yaml", repertoire=repertoire))
    live = Live(timeline)
    try:
        html = live.client.get("/").text
    finally:
        live.close()
    shown = "".join(f"{t.cue.cite} {t.cue.action} {t.cue.words}" for t in timeline.cues)  # what /state will send
    assert XUAN in shown and "縮霤" in shown
    assert _covered(html, shown + html) == []
    assert '"YueshengHanaA", "YueshengHanaB"' in html


_BOXES = """async () => {
  await document.fonts.ready;
  const stack = getComputedStyle(document.body).fontFamily;
  const text = document.body.innerText + (window.extraText || "");
  const chars = [...new Set([...text].filter(c => c.codePointAt(0) >= 0x2E80))];
  await Promise.all(chars.map(c => document.fonts.load(`40px ${stack}`, c)));
  const canvas = document.createElement("canvas"); canvas.width = canvas.height = 48;
  const g = canvas.getContext("2d", {willReadFrequently: true});
  const draw = c => { g.clearRect(0, 0, 48, 48); g.font = `40px ${stack}`; g.fillText(c, 2, 40);
                      return g.getImageData(0, 0, 48, 48).data.join(","); };
  const box = draw("\\u{F0000}");  // a private-use plane-15 code point: no font has it, so the missing-glyph box
  const faces = [...document.fonts].filter(f => f.family.includes("YueshengHana")).map(f => f.status);
  return {chars: chars.length, boxes: chars.filter(c => draw(c) === box), faces,
          xuan: chars.includes("\\u{248E5}")};
}"""


@pytest.mark.browser
def test_no_character_of_the_page_is_drawn_as_a_missing_glyph_box_in_chromium(page, tmp_path):
    from test_sheet import _chromium

    with _chromium() as browser:
        tab = browser.new_page(viewport={"width": 1400, "height": 1000})
        try:
            tab.goto(page.as_uri())
            tab.wait_for_selector("html[data-ready=true]", timeout=20_000)
            tab.click("#cues tr[data-cue='zun-liang-hu']")  # its detail quotes 有𤣥酒
            found = tab.evaluate(_BOXES)
            tab.screenshot(path=str(tmp_path / "page.png"))  # to look at: the page with the cue detail open
        finally:
            tab.close()
    assert found["chars"] > 200 and found["xuan"]
    assert found["faces"] and set(found["faces"]) == {"loaded"}
    assert found["boxes"] == []


@pytest.mark.slow
def test_the_pdfs_draw_xuan_from_a_hanazono_font_not_as_a_box(tmp_path):
    from pypdf import PdfReader

    from yuesheng.outputs.engrave import book_source, engrave, find_cjk_font

    part = f'\\bookpart {{ \\markup {{ "有{XUAN}酒 鄭注{XUAN}端" }} }}'
    pdf = tmp_path / "xuan.pdf"
    engrave(book_source([part], font=find_cjk_font()), pdf)
    resources: Any = PdfReader(pdf).pages[0]["/Resources"]
    fonts_used = {str(f.get_object()["/BaseFont"]) for f in resources["/Font"].values()}
    # 𤣥 comes from a Hanazono: the shipped subset, or Debian's fonts-hanazono when fontconfig finds that first
    assert any("HanaB" in name or "HanaMinB" in name for name in fonts_used), fonts_used


def test_a_pages_font_is_cut_once_then_read_from_the_cache(tmp_path, monkeypatch):
    """Cutting the subset reads the whole 1.3 MB font; the same characters again come from the cache, and a cache
    that cannot be used is only a slower page."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fonts._faces.cache_clear()
    made = fonts.face_css("鹿鳴" + XUAN)
    assert len(list((tmp_path / "cache" / "yuesheng" / "fonts").glob("*.css"))) == 1

    def no_cutting(points):
        raise AssertionError("cut again")

    monkeypatch.setattr(fonts, "_make_faces", no_cutting)
    fonts._faces.cache_clear()
    assert fonts.face_css("鹿鳴" + XUAN) == made
    monkeypatch.undo()
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # no folder can be made there
    fonts._faces.cache_clear()
    assert fonts.face_css("鹿鳴" + XUAN) == made
    fonts._faces.cache_clear()


def test_kept_rules_that_are_not_font_rules_are_cut_again(tmp_path, monkeypatch):
    """The rules go into the page as they are: an entry that is not ``@font-face`` rules of the shipped families,
    even one written whole, is a miss."""
    from yuesheng import caches

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fonts._faces.cache_clear()
    made = fonts.face_css("<p>鹿鳴" + XUAN)
    [entry] = (tmp_path / "cache" / "yuesheng" / "fonts").glob("*.css")
    folder = caches.folder("fonts")
    assert folder is not None
    for damaged in ("</style><script>alert(1)</script>", made.replace("YueshengHanaA", "Evil"), made + "\n",
                    made.replace("base64,", "base64,<", 1), "\udcff"):
        folder.write(entry.name, damaged.encode("utf-8", "surrogateescape"), entries=64)
        fonts._faces.cache_clear()
        assert fonts.face_css("<p>鹿鳴" + XUAN) == made
    fonts._faces.cache_clear()


def test_a_cut_is_the_same_bytes_whenever_it_is_made(tmp_path, monkeypatch):
    """The page is the same file every run: a cut keeps the shipped font's date, not the time it was made."""
    from fontTools.ttLib.tables import _h_e_a_d

    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # no cache: each call cuts
    fonts._faces.cache_clear()
    first = fonts.face_css("鹿鳴" + XUAN)
    monkeypatch.setattr(_h_e_a_d, "timestampNow", lambda: 0)  # a cut made at another time
    fonts._faces.cache_clear()
    assert fonts.face_css("鹿鳴" + XUAN) == first
    fonts._faces.cache_clear()


def test_the_font_cache_keeps_only_its_newest_entries(tmp_path, monkeypatch):
    import os

    from yuesheng import caches

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    folder = caches.folder("fonts")
    assert folder is not None
    for n in range(5):
        folder.write(f"{n}.css", b"x", entries=3)
        os.utime(folder.path / f"{n}.css", (n, n))  # distinct, ordered times: the file system's may tie
    assert sorted(p.name for p in folder.path.iterdir()) == ["2.css", "3.css", "4.css"]
    folder.write("5.css", b"x", entries=0)  # 0 keeps none, not all (files[:-0] is empty)
    assert list(folder.path.iterdir()) == []
