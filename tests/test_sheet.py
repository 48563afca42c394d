"""The director's page (yuesheng.web.sheet): the markup contract, escaping, the CLI, and the page in headless Chromium.

The browser tests open the generated files in Debian's ``chromium`` through
Playwright; they are skipped only where no Chromium is installed. A failing
browser check saves a screenshot next to the test's temporary files and names it.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
import unicodedata
from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml

from yuesheng import Production, build, caches, load, produce
from yuesheng.cli import main
from yuesheng.cli.common import cue_path
from yuesheng.music.repertoire import data_dir
from yuesheng.timeline import Measurement, Options
from yuesheng.web.sheet import (
    Encoded,
    environment,
    json_island,
    sheet_html,
    timeline_view,
)

RITES = ("xiangyinjiu", "xiangshe", "yanli", "dashe")
# A quick pytest opens the page of 鄉飲酒禮 alone; the README's test command (slow included) opens every rite's.
EACH_RITE = [pytest.param(r, marks=pytest.mark.slow) if r != "xiangyinjiu" else r for r in RITES]
ROOT = Path(__file__).resolve().parent.parent
MINI = Path(__file__).parent / "data" / "mini_xiangyin.yaml"
A4_LANDSCAPE_PT = (841.89, 595.28)
HOSTILE = "</script><script>window.pwned = 1</script><b>bold</b> & 'quotes\" <!--"


class _Contract(HTMLParser):
    """Collects the data-cue elements of the timeline and the table, the positions, and every script."""

    def __init__(self) -> None:
        super().__init__()
        self.where: list[str] = []
        self.timeline: set[str] = set()
        self.rows: list[str] = []
        self.positions: list[str] = []
        self.detail = 0
        self.scripts: list[list[tuple[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg":
            self.where.append(a.get("id") or "")
        if tag == "script":
            self.scripts.append(attrs)
        if a.get("id") == "cue-detail":
            self.detail += 1
        if "data-position" in a:
            self.positions.append(a["data-position"] or "")
        if "data-cue" in a:
            if tag == "tr":
                self.rows.append(a["data-cue"] or "")
            elif self.where and self.where[-1] == "timeline":
                self.timeline.add(a["data-cue"] or "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "svg" and self.where:
            self.where.pop()


@pytest.fixture(scope="module")
def productions(repertoire) -> dict[str, Production]:
    return {rite: produce(load(cue_path(rite), repertoire=repertoire)) for rite in RITES}


@pytest.fixture(scope="module")
def timelines(productions) -> dict[str, Any]:
    return {rite: p.timeline for rite, p in productions.items()}


@pytest.fixture(scope="module")
def staged(productions) -> dict[str, Any]:
    return {rite: p.staged for rite, p in productions.items()}


@pytest.fixture(scope="module")
def pages(tmp_path_factory, timelines) -> dict[str, Path]:
    """The four rites' pages, written once through the command line."""
    folder = tmp_path_factory.mktemp("pages")
    out = {}
    for rite in RITES:
        out[rite] = folder / f"{rite}.html"
        assert main(["sheet", rite, "-o", str(out[rite])]) == 0
    return out


def _hostile_sheet(tmp_path: Path) -> Path:
    """The mini sheet with markup in its cue words, a cue's action and a position's name."""
    data = MINI.read_text(encoding="utf-8")
    hostile_name = yaml.safe_dump(HOSTILE).strip()
    data = data.replace("positions:\n  tang: {name: 西階上少東}", f"positions:\n  tang: {{name: {hostile_name}}}")
    path = tmp_path / "hostile.yaml"
    doc = yaml.safe_load(data)
    doc["cues"][0]["words"] = HOSTILE
    doc["cues"][0]["action"] = "<img src=x onerror=\"window.pwned = 2\">工入"
    path.write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


# --- the markup ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("rite", EACH_RITE)
def test_every_cue_is_in_the_timeline_and_the_table_and_every_position_on_the_page(rite, pages, timelines):
    contract = _Contract()
    contract.feed(pages[rite].read_text(encoding="utf-8"))
    ids = [t.cue.id for t in timelines[rite].cues]
    assert contract.rows == ids
    assert contract.timeline == set(ids)
    assert sorted(contract.positions) == sorted(timelines[rite].layout)
    assert contract.detail == 1


def test_the_page_fetches_nothing(pages):
    text = pages["dashe"].read_text(encoding="utf-8")
    contract = _Contract()
    contract.feed(text)
    assert all("src" not in dict(attrs) for attrs in contract.scripts)
    assert not re.search(r"<link\b|@import|url\((?!#|data:font/woff;base64,)|https?://(?!www\.w3\.org/2000/svg)", text)
    assert "@font-face" in text  # the shipped font, embedded: a data URL, nothing fetched


def test_the_jsonjson_island_cannot_close_its_script():
    text = json_island({"words": "</script><!-- & >"})
    assert "<" not in text and ">" not in text and "&" not in text
    assert text == '{"words":"\\u003c/script\\u003e\\u003c!-- \\u0026 \\u003e"}'
    spliced = json_island({"plates": Encoded('{"hall":"</script>","n":[1.5]}'), "words": "[1]"})  # JSON already
    assert "<" not in spliced and json.loads(spliced) == {"plates": {"hall": "</script>", "n": [1.5]}, "words": "[1]"}
    assert json_island({}) == "{}"


def test_the_island_is_the_json_of_the_pages_data(timelines, productions):
    """The cues (each map of who stands where written once) and the plates (kept as JSON) are spliced in: the same
    text as json.dumps of the data parsed back."""
    html = sheet_html(productions["xiangyinjiu"])
    island = html[html.index('id="rite-data">') + 15:html.index("</script>", html.index('id="rite-data">'))]
    data = json.loads(island)
    assert any(c["at"] for c in data["cues"]) and data["plates"]["cues"]
    plain = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    assert island == plain.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def test_markup_from_the_cue_sheet_is_escaped(tmp_path, repertoire):
    html = sheet_html(produce(load(_hostile_sheet(tmp_path), repertoire=repertoire)))
    assert "<script>window.pwned" not in html and "<b>bold</b>" not in html and "<img" not in html
    assert "&lt;/script&gt;&lt;script&gt;window.pwned = 1&lt;/script&gt;" in html
    assert len(re.findall(r"<script\b", html)) == 2  # the JSON island and the page's own script


def test_the_run_sheet_escapes_its_cells_as_the_templates_do():
    from markupsafe import escape

    from yuesheng.web.sheet import _escaped

    assert _escaped(HOSTILE + "&amp; 樂") == str(escape(HOSTILE + "&amp; 樂"))


def _numbers(pattern: str, svg: str) -> list[float]:
    """The numbers *pattern*'s groups find in *svg*."""
    found = re.search(pattern, svg)
    assert found, f"{pattern} not in {svg}"
    return [float(n) for n in found.groups()]


def test_each_block_and_mark_is_drawn_at_its_time_on_its_lane(timelines):
    view = timeline_view(timelines["dashe"])
    scale, left = view["plot_width"] / view["duration"], view["label_width"]
    drawn = str(view["plot"]).split("\n")
    assert len(drawn) == len(view["blocks"]) + len(view["marks"])
    for b, svg in zip(view["blocks"], drawn, strict=False):
        x, y, width = _numbers(r'<rect x="([^"]+)" y="([^"]+)" width="([^"]+)"', svg)
        assert x == pytest.approx(left + b.t0 * scale) and width == pytest.approx(max((b.t1 - b.t0) * scale, 1))
        assert y == b.lane * 24 + 3 and f'data-t0="{b.t0}" data-t1="{b.t1}"' in svg
    for m, svg in zip(view["marks"], drawn[len(view["blocks"]):], strict=True):
        if m.kind.startswith("arrow"):
            x, y = _numbers(r'<circle cx="([^"]+)" cy="([^"]+)"', svg)
            assert y == m.lane * 24 + 12
        else:
            x, x2, y, y2 = _numbers(r'<line x1="([^"]+)" x2="([^"]+)" y1="([^"]+)" y2="([^"]+)"', svg)
            assert x2 == x and (y, y2) == (m.lane * 24 + 3, m.lane * 24 + 21)
        assert x == pytest.approx(left + m.t * scale) and f'data-t="{m.t}"' in svg
    assert {m.kind.split()[0] for m in view["marks"]} == {"jie", "half", "arrow", "call"}


def test_same_timeline_same_page(timelines, productions):
    assert sheet_html(productions["xiangyinjiu"]) == sheet_html(productions["xiangyinjiu"])


# --- the templates: compiled in the process, never kept -----------------------------------------------


def test_no_compiled_template_is_kept_on_disk(monkeypatch, tmp_path, productions):
    """Compiled templates are code: none is written to a cache folder, or read from one (a planted file is not)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    planted = tmp_path / "cache" / "yuesheng" / "jinja"
    planted.mkdir(parents=True, mode=0o700)
    (planted / "x-sheet.html.j2.cache").write_bytes(b"j2\x00garbage")
    environment.cache_clear()
    try:
        page = sheet_html(productions["xiangyinjiu"])
        assert environment().bytecode_cache is None
    finally:
        environment.cache_clear()
    assert page == sheet_html(productions["xiangyinjiu"])
    assert [p.name for p in planted.iterdir()] == ["x-sheet.html.j2.cache"]
    assert [p for p in (tmp_path / "cache").rglob("*.cache") if p.parent != planted] == []


# --- the command ----------------------------------------------------------------------------------------


def test_sheet_writes_the_page(run, tmp_path, repertoire):
    out = tmp_path / "yanli.html"
    code, stdout, stderr = run("sheet", "yanli", "--variant", "yi-yue-na-bin", "-o", str(out))
    cues = build(load(cue_path("yanli"), repertoire=repertoire), Options(frozenset({"yi-yue-na-bin"}))).cues
    assert (code, stdout, stderr) == (0, f"wrote {out}: the page of 燕禮, {len(cues)} cues\n", "")
    contract = _Contract()
    contract.feed(text := out.read_text(encoding="utf-8"))
    assert contract.rows == [t.cue.id for t in cues] and "variants: yi-yue-na-bin;" in text


def test_sheet_without_places_warns_and_lists_them(run, tmp_path):
    out = tmp_path / "mini.html"
    code, stdout, stderr = run("sheet", str(MINI), "-o", str(out))
    assert code == 0
    assert stderr == ("warning: 1 position(s) have no place on the plan (no x, y in the cue sheet), listed beside it: "
                      "tang\n")
    assert '<li data-position="tang">西階上少東 <code>tang</code>' in out.read_text(encoding="utf-8")


@pytest.mark.parametrize(("argv", "code", "message"), [
    (("sheet", "dashe", "-o", "dashe.pdf"), 2, "usage error: -o dashe.pdf: expected an .html file"),
    (("sheet", "dashe", "--variant", "nope"), 2, "usage error: unknown variant 'nope'"),
    (("sheet", "dashe", "--reading", "lishou-jie"), 2, "usage error: --reading 'lishou-jie': expected ID=OPTION"),
    (("sheet", "no-such-rite.yaml"), 1, "no-such-rite.yaml"),
])
def test_sheet_bad_command_lines(run, tmp_path, monkeypatch, argv, code, message):
    monkeypatch.chdir(tmp_path)
    got, _, stderr = run(*argv)
    assert got == code and message in stderr
    assert list(tmp_path.iterdir()) == []


def test_sheet_output_folder_missing_is_an_error(run, tmp_path):
    code, _, stderr = run("sheet", str(MINI), "-o", str(tmp_path / "no" / "such" / "x.html"))
    assert code == 1 and "cannot write" in stderr


# --- in the browser ----------------------------------------------------------------------------------------


@contextmanager
def _chromium(timeout_s: float = 60) -> Iterator[Any]:
    """Headless Chromium through Playwright: started with a time limit, closed on every exit path."""
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium): the browser tests cannot run")
    from playwright.sync_api import Error, sync_playwright

    with sync_playwright() as p:
        try:
            browser = p.chromium.launch(executable_path=exe, timeout=timeout_s * 1000)
        except Error as exc:
            pytest.fail(f"Chromium ({exe}) did not start: {exc}")
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with _chromium() as b:
        yield b


class Page:
    """A page opened in the browser with its console errors collected; screenshots on failure."""

    def __init__(self, browser: Any, path: Path, shots: Path, *, width: int = 1400) -> None:
        self.page = browser.new_page(viewport={"width": width, "height": 1000})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", self._dismiss)
        self.page.on("request", lambda r: None if r.url.startswith(("file:", "data:", "about:")) else
                     self.errors.append(f"network request: {r.url}"))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("html[data-ready=true]", timeout=20_000)
        self.page.wait_for_selector("html:not([data-plates=drawing])", timeout=60_000)  # every plate drawn
        self.shots = shots

    def _dismiss(self, dialog: Any) -> None:
        """A dialog is an error of the page: noted, and dismissed so that the page goes on."""
        self.errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    @contextmanager
    def checks(self, name: str) -> Iterator[Any]:
        try:
            yield self.page
        except Exception as exc:
            shot = self.shots / f"{name}.png"
            self.page.screenshot(path=str(shot), full_page=True)
            raise AssertionError(f"{type(exc).__name__}: {exc}\nscreenshot: {shot}") from None
        finally:
            self.page.close()


@pytest.fixture
def opened(browser, tmp_path):
    def _open(path: Path, **kw: Any) -> Page:
        return Page(browser, path, tmp_path, **kw)

    return _open


def test_the_page_is_ready_with_its_first_plate_and_draws_every_other_before_printing(browser, pages, timelines,
                                                                                     staged):
    tab = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        tab.goto(pages["dashe"].as_uri())
        tab.wait_for_selector("html[data-ready=true]", timeout=20_000)
        first = tab.eval_on_selector_all("figure.plate", "fs => fs.map(f => !!f.querySelector('.labels text'))")
        assert first[0] and len(first) == len(_plates_of(timelines["dashe"], staged["dashe"])) > 34  # split stages
        drawn = tab.evaluate("""() => { if (document.documentElement.dataset.plates === 'drawing') {
            window.dispatchEvent(new Event('beforeprint')); }  // as Ctrl+P does, before the rest are drawn
          return [...document.querySelectorAll('figure.plate')].map(f => !!f.querySelector('.labels text')); }""")
        assert all(drawn)  # every plate, drawn at once for the print
        tab.wait_for_selector("html[data-plates=drawn]", timeout=60_000)
    finally:
        tab.close()


@pytest.mark.parametrize("rite", EACH_RITE)
def test_each_rite_loads_and_draws_every_cue_without_errors(rite, pages, timelines, opened):
    page = opened(pages[rite])
    with page.checks(rite) as p:
        drawn = p.eval_on_selector_all("#timeline [data-cue]", """els => [...new Set(els.filter(e => {
            const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0; }).map(e => e.dataset.cue))]""")
        assert set(drawn) == {t.cue.id for t in timelines[rite].cues}
        rows = p.eval_on_selector_all("#cues tr[data-cue]", "els => els.filter(e => e.offsetHeight > 0).length")
        assert rows == len(timelines[rite].cues)
        assert page.errors == []


def test_clicking_a_cue_shows_its_page_and_quote_and_where_its_people_stand(pages, timelines, opened):
    timeline = timelines["dashe"]
    timing = next(t for t in timeline.cues if t.cue.id == "she-fa")  # 量人設乏: where fa
    page = opened(pages["dashe"])
    with page.checks("click") as p:
        p.select_option("#zoom", label=next(o for o in p.eval_on_selector_all(
            "#zoom option", "os => os.map(o => o.textContent)") if o.startswith(f"section {timing.cue.section}")))
        p.locator(f'#timeline .block.action[data-cue="{timing.cue.id}"] rect').click()
        detail = p.inner_text("#cue-detail")
        assert timing.cue.cite.page in detail and timing.cue.cite.quote in detail
        assert "量人" in detail and "乏" in detail and timing.cue.action in detail
        assert p.get_attribute('#plan [data-position="fa"]', "class").split().count("here") == 1
        assert p.eval_on_selector_all("#plan .here", "els => els.map(e => e.dataset.position)") == ["fa"]
        assert p.eval_on_selector_all("[data-cue].selected", "els => [...new Set(els.map(e => e.dataset.cue))]") == \
            [timing.cue.id]
        assert "selected" in p.get_attribute(f'#cues tr[data-cue="{timing.cue.id}"]', "class")
        # its person walks from where the cue before put him to the 乏
        moves = p.eval_on_selector_all("#moves line", "els => els.map(e => e.dataset.who)")
        assert moves == ["liangren"]
        assert page.errors == []


def test_a_music_cue_shows_its_pieces_and_the_instruments_places(pages, timelines, opened):
    page = opened(pages["xiangyinjiu"])
    with page.checks("music") as p:
        p.click('#cues tr[data-cue="shengge"]')
        detail = p.inner_text("#cue-detail")
        assert "鹿鳴" in detail and "四牡" in detail and "皇皇者華" in detail and "4-20" in detail
        here = p.eval_on_selector_all("#plan .here", "els => els.map(e => e.dataset.position)")
        assert "tang-lian" in here  # the 工 and their 瑟 on the 堂廉


def test_arrow_keys_step_through_the_cues_in_order(pages, timelines, opened):
    ids = [t.cue.id for t in timelines["xiangshe"].cues]
    page = opened(pages["xiangshe"])
    with page.checks("keys") as p:
        p.keyboard.press("ArrowRight")
        p.keyboard.press("ArrowRight")
        p.keyboard.press("ArrowDown")
        p.keyboard.press("ArrowLeft")
        assert p.eval_on_selector("#cues tr.selected", "e => e.dataset.cue") == ids[1]
        assert ids[1] in p.inner_text("#cue-detail")


@pytest.mark.parametrize("rite", EACH_RITE)
def test_the_plan_puts_each_position_where_the_cue_sheet_does(rite, pages, opened):
    raw = yaml.safe_load((data_dir("cues") / f"{rite}.yaml").read_text(encoding="utf-8"))["positions"]
    page = opened(pages[rite])
    with page.checks(f"plan-{rite}") as p:
        scale = float(p.get_attribute("#plan", "data-scale"))
        drawn = p.eval_on_selector_all("#plan [data-position]", """els => Object.fromEntries(els.map(e => {
            const c = e.querySelector(':scope > circle'), r = e.querySelector(':scope > rect');
            return [e.dataset.position, c ? {x: +c.getAttribute('cx'), y: +c.getAttribute('cy')}
              : {x: +r.getAttribute('x') + r.getAttribute('width') / 2,
                 y: +r.getAttribute('y') + r.getAttribute('height') / 2,
                 w: +r.getAttribute('width'), h: +r.getAttribute('height')}];
        }))""")
        assert set(drawn) == set(raw)
        for pid, item in raw.items():
            assert drawn[pid]["x"] == pytest.approx(item["x"] * scale, abs=1e-6), pid
            assert drawn[pid]["y"] == pytest.approx(item["y"] * scale, abs=1e-6), pid
            if "w" in item:
                assert (drawn[pid]["w"], drawn[pid]["h"]) == pytest.approx((item["w"] * scale, item["h"] * scale)), pid


def test_the_chinese_text_is_drawn_with_a_cjk_font(pages, opened):
    page = opened(pages["dashe"])
    with page.checks("cjk") as p:
        cdp = p.context.new_cdp_session(p)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument")["root"]["nodeId"]
        # the run sheet is laid out (its text given a font) when it comes near the view (content-visibility: auto)
        p.evaluate("""() => new Promise((done) => { document.querySelector('#cues tbody tr').scrollIntoView();
            requestAnimationFrame(() => requestAnimationFrame(done)); })""")
        fonts = {}
        for selector in ("h1", "#cues tbody tr td:nth-child(6)", "#plan .position .name"):
            node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
            fonts[selector] = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
        for selector, used in fonts.items():
            cjk = [f for f in used if "CJK" in f["familyName"] or "Han" in f["familyName"]]
            assert cjk and sum(f["glyphCount"] for f in cjk) >= 2, (selector, used)
        # and not tofu: a common character is as wide as the font's em, a private-use one is not drawn alike
        widths = p.evaluate("""() => {
            const c = document.createElement('canvas').getContext('2d');
            c.font = '40px ' + getComputedStyle(document.body).fontFamily;
            return [c.measureText('堂').width, c.measureText('\\u4e00\\u4e8c').width];
        }""")
        assert widths == [pytest.approx(40, abs=0.5), pytest.approx(80, abs=1)]


def test_print_is_a4_landscape_with_a_compact_run_sheet(pages, timelines, opened, tmp_path):
    from pypdf import PdfReader

    page = opened(pages["xiangyinjiu"], width=1047)  # 297 mm less 2 × 10 mm margins, at 96 px an inch
    with page.checks("print") as p:
        p.emulate_media(media="print")
        assert p.evaluate("document.documentElement.scrollWidth") <= 1047
        assert p.evaluate("document.querySelector('#cues').getBoundingClientRect().width") <= 1047
        breaks = p.eval_on_selector_all("#cues tbody.section", "els => els.map(e => getComputedStyle(e).breakBefore)")
        assert "page" not in breaks  # a section follows the last on the same page
        pdf = tmp_path / "xiangyinjiu.pdf"
        p.pdf(path=str(pdf), format="A4", landscape=True, print_background=True)
        reader = PdfReader(str(pdf))
        for pg in reader.pages:  # Chromium rounds the sheet to whole pixels
            assert (float(pg.mediabox.width), float(pg.mediabox.height)) == pytest.approx(A4_LANDSCAPE_PT, abs=1.5)
        sections = list(dict.fromkeys(t.cue.section for t in timelines["xiangyinjiu"].cues))
        header = "start dur cue who where action / music words cite"
        texts = [unicodedata.normalize("NFKC", pg.extract_text()).strip().split("\n") for pg in reader.pages]
        run_sheet = [lines for lines in texts if lines[0] == header]  # PDF text may give radicals: NFKC
        assert 1 < len(run_sheet) < len(sections) / 2  # under the repeated header, several sections a page
        assert len(reader.pages) <= 2 + len(set(sections)) * 2 + len(run_sheet), len(reader.pages)


def test_the_table_filters_by_person_and_section(pages, timelines, opened):
    timeline = timelines["xiangshe"]
    huozhe = [t.cue.id for t in timeline.cues if "huozhe" in (t.cue.who or t.cue.performers)]
    page = opened(pages["xiangshe"])
    visible = "els => els.filter(e => e.offsetHeight).map(e => e.dataset.cue)"
    with page.checks("filter") as p:
        p.select_option("#filter-person", "huozhe")
        shown = p.eval_on_selector_all("#cues tr[data-cue]", visible)
        assert shown == huozhe and len(huozhe) > 3
        section = timeline.cues[0].cue.section
        p.select_option("#filter-person", "")
        p.select_option("#filter-section", section)
        shown = p.eval_on_selector_all("#cues tr[data-cue]", visible)
        assert shown == [t.cue.id for t in timeline.cues if t.cue.section == section]


def test_zoom_goes_from_the_whole_rite_to_one_pairs_jie(pages, opened):
    page = opened(pages["xiangshe"])
    with page.checks("zoom") as p:
        def spacing() -> float:
            xs = p.eval_on_selector_all('#timeline .mark.jie[data-t] line',
                                        "els => els.map(e => +e.getAttribute('x1')).sort((a, b) => a - b)")
            return float(min(b - a for a, b in zip(xs, xs[1:], strict=False)))
        whole = spacing()
        options = p.eval_on_selector_all("#zoom option", "os => os.map(o => o.textContent)")
        p.select_option("#zoom", label=next(o for o in options if o.startswith("耦 round-3")))
        pair = spacing()
        p.select_option("#zoom", label=next(o for o in options if o.startswith("節 round-3")))
        axis = p.eval_on_selector_all("#axis text", "els => els.map(e => e.textContent)")
        assert pair > 100 and pair > 30 * whole
        assert all(re.fullmatch(r"\d+:\d\d:\d\d", a) for a in axis) and len(axis) >= 3


def test_markup_in_a_cue_sheet_stays_text_in_the_browser(tmp_path, repertoire, opened):
    path = tmp_path / "hostile.html"
    path.write_text(sheet_html(produce(load(_hostile_sheet(tmp_path), repertoire=repertoire))), encoding="utf-8")
    page = opened(path)
    with page.checks("hostile") as p:
        p.click('#cues tr[data-cue="gong-ru"]')
        assert p.evaluate("window.pwned") is None
        assert p.eval_on_selector('#cues tr[data-cue="gong-ru"] td:nth-child(7)', "e => e.textContent") == HOSTILE
        assert HOSTILE in p.inner_text("#cue-detail")
        injected = "els => els.filter(e => e.tagName === 'IMG' || e.textContent === 'bold').length"
        assert p.eval_on_selector_all("b, img", injected) == 0
        assert page.errors == []


def test_a_sheet_without_places_lists_its_positions_beside_the_plan(tmp_path, repertoire, opened):
    path = tmp_path / "mini.html"
    path.write_text(sheet_html(produce(load(MINI, repertoire=repertoire), Options())), encoding="utf-8")
    page = opened(path)
    with page.checks("unplaced") as p:
        p.click('#cues tr[data-cue="gong-ru"]')
        assert p.eval_on_selector_all("#unplaced [data-position].here", "els => els.map(e => e.dataset.position)") == \
            ["tang"]
        assert "工" in p.inner_text('#unplaced [data-position="tang"]')
        assert page.errors == []


def test_the_page_shows_measured_durations_beside_the_estimates(repertoire):
    from fractions import Fraction

    from yuesheng import load
    from yuesheng.web.sheet import sheet_html

    sheet = load(Path(__file__).parent / "data" / "golden.yaml", repertoire=repertoire)
    html = sheet_html(produce(sheet, Options(timing={"bin-ru": Measurement(Fraction(14), 3, Fraction(2))})))
    assert ">est.</th>" in html
    row = html[html.index('<tr data-cue="bin-ru"'):]
    row = row[:row.index("</tr>")]
    assert '<td class="time">0:14</td>' in row and '<td class="time">0:10 (3 range 2.0s)</td>' in row
    assert ("measured in rehearsal (--timing): the median of 3 takes, spread 2.0 s; the cue sheet's estimate was 0:10"
            in html)  # the JSON island
    assert ">est.</th>" not in sheet_html(produce(sheet))


def test_que_is_named_only_where_the_text_writes_it(repertoire):
    from yuesheng import load
    from yuesheng.web.sheet import sheet_html

    html = sheet_html(produce(load(Path(__file__).parent / "data" / "golden.yaml", repertoire=repertoire)))
    assert "至 bai-zhi (樂闋)" in html  # golden's 肆夏 quotes 8-24a, where the text writes 樂闋 for it


def test_the_lanes_sort_out_music_calls_the_shooting_and_each_cues_parts_in_one_pass(repertoire):
    from yuesheng.timeline import EventKind, seconds
    from yuesheng.web.sheet import _segments, _sorted_out

    events = build(load(cue_path("dashe"), repertoire=repertoire)).events
    music, calls, shots, parts = _sorted_out(events)
    sounding = [e for e in events if e.part and e.kind in (EventKind.NOTE, EventKind.DRUM, EventKind.CALL)]
    assert parts == {cue: {e.part for e in sounding if e.cue == cue} for cue in {e.cue for e in sounding}}
    assert music == [e for e in events if e.kind in (EventKind.NOTE, EventKind.DRUM) and not e.jie]
    assert calls == [e for e in events if e.kind is EventKind.CALL] and calls
    assert shots == [e for e in events if e.kind is EventKind.RELEASE
                     or e.kind is EventKind.DRUM and (e.jie or e.pair)]
    assert any(e.kind is EventKind.DRUM and e.jie for e in shots) and any(e.kind is EventKind.RELEASE for e in shots)
    for e, t0, t1 in _segments(music):  # each run from its first note's onset, in seconds as seconds() gives them
        assert t0 == seconds(e.start_tick) and t1 >= seconds(e.start_tick + e.length_ticks)


# --- the plates of a staged rite --------------------------------------------------------------------------------

STAGED = [pytest.param("xiangshe", marks=pytest.mark.slow), "xiangyinjiu",
          pytest.param("dashe", marks=pytest.mark.slow)]
LABEL_BOXES = """svg => Array.from(svg.querySelectorAll('text.label')).map(t => {
    const r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom, t.textContent]; })"""


def _overlapping(boxes: list[list[Any]]) -> list[tuple[str, str]]:
    return [(a[4], b[4]) for n, a in enumerate(boxes) for b in boxes[n + 1:]
            if a[0] < b[2] - 0.01 and b[0] < a[2] - 0.01 and a[1] < b[3] - 0.01 and b[1] < a[3] - 0.01]


def _plates_of(timeline: Any, staged: Any, extra: tuple[str, ...] = ()) -> list[tuple[str, str, list[str]]]:
    """The plates the page should draw, from the blocking's ``plates`` (and *extra*): each stage at each of its cues
    named there (its last where none is), as its heading, the cue whose moment it shows, and the stage's cues it lists
    (up to that cue; the last plate of a stage the rest too)."""
    stages: list[tuple[str, list[str]]] = []
    for t in timeline.cues:
        if not stages or stages[-1][0] != t.cue.section:
            stages.append((t.cue.section, []))
        stages[-1][1].append(t.cue.id)
    out = []
    for name, ids in stages:
        ends = [n for n, c in enumerate(ids) if c in set(staged.plates) | set(extra)] or [len(ids) - 1]
        for k, end in enumerate(ends):
            start = ends[k - 1] + 1 if k else 0
            stop = end + 1 if k < len(ends) - 1 else len(ids)
            out.append((f"{name} {k + 1}/{len(ends)}" if len(ends) > 1 else name, ids[end], ids[start:stop]))
    return out


def _things_after(timeline: Any, staged: Any, cue: str) -> set[str]:
    """The set pieces standing after *cue*: those the next cue on the ground walks round (its own, at the last)."""
    on = [t.cue.id for t in timeline.cues if t.cue.id in staged.cues]
    n = on.index(cue)
    return set(staged.cues[on[n + 1] if n + 1 < len(on) else cue].things)


def test_a_rite_without_blocking_has_no_plates(tmp_path):
    sheet = tmp_path / "cues" / "xiangyinjiu.yaml"  # a shipped sheet with no blocking/ folder beside it
    sheet.parent.mkdir()
    shutil.copy(cue_path("xiangyinjiu"), sheet)
    assert main(["sheet", str(sheet), "-o", str(tmp_path / "page.html")]) == 0
    text = (tmp_path / "page.html").read_text(encoding="utf-8")
    assert 'id="plates"' not in text and '"plates"' not in text


def test_a_page_drawn_again_takes_its_plates_as_kept_without_the_staging_model(tmp_path):
    script = ("import sys; from yuesheng.cli import main; main(['sheet', 'xiangyinjiu', '-o', sys.argv[1]]); "
              "print('yuesheng.staging.model' in sys.modules, 'yuesheng.staging.rite' in sys.modules)")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)}
    runs = [subprocess.run([sys.executable, "-c", script, str(tmp_path / f"{n}.html")], cwd=ROOT, env=env,
                           capture_output=True, text=True, check=True).stdout.split()[-2:] for n in range(2)]
    assert runs == [["True", "True"], ["False", "False"]]  # the second neither decoded nor staged the rite
    assert (tmp_path / "0.html").read_bytes() == (tmp_path / "1.html").read_bytes()


def test_a_damaged_or_foreign_kept_drawing_is_drawn_anew(tmp_path, monkeypatch, timelines, productions):
    from yuesheng.web.plates import plates_data

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    timeline = timelines["xiangyinjiu"]
    fresh = plates_data(productions["xiangyinjiu"], timeline.names)
    assert fresh is not None and fresh.members and json.loads(fresh.json)["cues"]
    [entry] = (tmp_path / "yuesheng" / "plates").glob("*.json")
    assert plates_data(productions["xiangyinjiu"], timeline.names) == fresh
    folder = caches.folder("plates")
    assert folder is not None
    kept = (folder.read(entry.name, limit=1 << 24) or b"").decode("utf-8")
    damaged = [kept.replace('"members":[', '"members":[1,', 1), kept.replace('"box":[', '"box":["x",', 1)]
    for text in ("{not json", "[]\n{}", '{"format": "yuesheng-plates-0"}\n{}', *damaged):
        folder.write(entry.name, text.encode("utf-8"), entries=64)  # written whole, not a drawing
        assert plates_data(productions["xiangyinjiu"], timeline.names) == fresh, text[:40]
    whole = entry.read_bytes()
    entry.write_bytes(whole.replace(b'"cues":{', b'"cues":{"x":0,', 1))  # damaged on disk: not what it was written
    assert plates_data(productions["xiangyinjiu"], timeline.names) == fresh


@pytest.mark.parametrize("rite", STAGED)
def test_a_plate_at_each_tableau_with_everyone_and_every_set_piece_named_and_labels_that_never_overlap(
        rite, pages, timelines, opened, staged):
    timeline = timelines[rite]
    plates = _plates_of(timeline, staged[rite])
    assert len(plates) > len({t.cue.section for t in timeline.cues}) // 2
    page = opened(pages[rite])
    with page.checks(f"plates-{rite}") as p:
        heads = p.eval_on_selector_all("figure.plate h3", "els => els.map(e => e.textContent)")
        assert heads == [name for name, _, _ in plates]
        assert p.eval_on_selector_all("figure.plate", "fs => fs.map(f => f.dataset.at)") == [at for _, at, _ in plates]
        things = staged[rite].hall.things
        for n, (name, at, _) in enumerate(plates):
            p.select_option("#plate-stage", str(n))
            svg = p.query_selector("figure.plate.current svg")
            people = svg.eval_on_selector_all("g.person", "els => els.map(e => e.dataset.member)")
            assert sorted(people) == sorted(staged[rite].cues[at].stands), name  # everyone, as after its cue
            drawn = svg.eval_on_selector_all(".thing[data-thing]", "els => els.map(e => e.dataset.thing)")
            assert set(drawn) == _things_after(timeline, staged[rite], at), name
            labels = svg.eval_on_selector_all(".labels text.thing-label", "els => els.map(e => e.textContent)")
            assert sorted(labels) == sorted(things[t].name.split(" (")[0] for t in drawn), name  # each one named
            assert svg.eval_on_selector(".labels", "g => Number(g.dataset.dropped)") == 0, name
            for box in (None, "-14 -10 28 22", "-6 -9 12 10"):  # the whole ground, the 堂 and 庭, the 堂 alone
                if box:
                    svg.evaluate("(s, b) => s.setAttribute('viewBox', b)", box)
                boxes = svg.evaluate(LABEL_BOXES)
                assert len(boxes) > len(set(people)) // 4, name
                assert _overlapping(boxes) == [], (name, box)
        assert page.errors == []


def test_each_stage_is_plated_at_its_tableau_and_one_that_moves_much_at_several(timelines, staged):
    """升歌 with the 工 seated on their mats, 第一番射 with the pair on the 物 (not the stage as its first cue leaves
    it), 大射's 第二番射 in parts, none laying anything like its 81 routes on one snapshot."""
    plates = {rite: _plates_of(timelines[rite], staged[rite]) for rite in RITES}
    for rite, mat in (("dashe", "gong-tang"), ("xiangyinjiu", "gong-xi"), ("yanli", "gong-gongxi")):
        [(_, at, _)] = [p for p in plates[rite] if p[0] == "升歌"]
        gong = [s for who, s in staged[rite].cues[at].stands.items() if who.split("#")[0] in ("shanggong", "gong")]
        assert len(gong) >= 4 and {s.place for s in gong} == {mat}, rite  # all on the 工席, none at the gate
    for rite, at in (("dashe", "shang-ou-she"), ("xiangshe", "huo-1")):
        assert at in [a for name, a, _ in plates[rite] if name.startswith("第一番射")]
        stands = staged[rite].cues[at].stands
        assert (stands["shang-ou-shangshe"].place, stands["shang-ou-xiashe"].place) == ("wu-shang", "wu-xia"), rite
    second = [(name, ids) for name, _, ids in plates["dashe"] if name.startswith("第二番射")]
    assert len(second) >= 3
    for name, ids in second:
        routes = {tuple((round(q.x, 2), round(q.y, 2)) for q in w.route) for c in ids
                  for w in staged["dashe"].cues[c].derivation.walks if w.length > 0.3}
        assert len(routes) <= 40, (name, len(routes))
    assert all(any(p[0] == s for p in plates["dashe"]) or any(p[0].startswith(s + " ") for p in plates["dashe"])
               for s in {t.cue.section for t in timelines["dashe"].cues})  # every stage has its plate


def test_plate_at_adds_a_plate_at_any_cue_and_an_unknown_one_is_a_usage_error_naming_the_nearest(tmp_path, capsys):
    out = tmp_path / "page.html"
    assert main(["sheet", "xiangyinjiu", "--plate-at", "xian-bin-sheng", "-o", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert 'data-at="xian-bin-sheng"' in page and 'data-at="xian-bin"' in page  # the stage in two: before, after
    assert '<h3>獻賓 <small class="part">1/2</small></h3>' in page
    capsys.readouterr()
    assert main(["sheet", "xiangyinjiu", "--plate-at", "xian-bin-shen", "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--plate-at" in err and "xian-bin-shen" in err and "xian-bin-sheng" in err
    mini = tmp_path / "mini.yaml"
    mini.write_text(MINI.read_text(encoding="utf-8"), encoding="utf-8")
    assert main(["sheet", str(mini), "--plate-at", "x", "-o", str(out)]) == 2
    assert "has no blocking, so no plates" in capsys.readouterr().err


def test_selecting_a_cue_draws_its_walks_with_their_times_and_a_track_follows_a_person(pages, timelines, opened,
                                                                                          staged):
    timeline = timelines["xiangyinjiu"]
    on_ground = staged["xiangyinjiu"].cues
    cue = next(t.cue.id for t in timeline.cues if len(on_ground[t.cue.id].derivation.walks) >= 2)
    walks = on_ground[cue].derivation.walks
    page = opened(pages["xiangyinjiu"])
    with page.checks("plates-walks") as p:
        p.click(f'#cues tr[data-cue="{cue}"]')
        svg = p.query_selector("figure.plate.current svg")
        assert svg.eval_on_selector_all("polyline.walk", "els => els.length") == len(walks)
        times = svg.eval_on_selector_all("text.label.time", "els => els.map(e => e.textContent)")
        assert sorted(times) == sorted(f"{round(float(w.seconds), 1):g} s" for w in walks if w.length > 0.3)
        who = walks[0].who
        p.select_option("#track-person", who)
        every = [w for t in timeline.cues for w in on_ground[t.cue.id].derivation.walks if w.who == who]
        assert svg.eval_on_selector_all("polyline.track", "els => els.length") == len(every) > 1
        assert _overlapping(svg.evaluate(LABEL_BOXES)) == []
        assert page.errors == []


@pytest.mark.parametrize("rite", ["xiangyinjiu", pytest.param("dashe", marks=pytest.mark.slow)])
def test_print_gives_the_whole_timeline_a_page_per_plate_and_the_run_sheet(rite, pages, timelines, opened, tmp_path,
                                                                          staged):
    from pypdf import PdfReader

    page = opened(pages[rite], width=1047)
    with page.checks(f"print-{rite}") as p:
        p.emulate_media(media="print")
        p.evaluate("window.dispatchEvent(new Event('beforeprint'))")
        # the whole rite in bands, each a slice of its time, one after another; what each draws is clipped to the box
        # the page's width scales
        bands = p.eval_on_selector_all("#timeline-panel svg", """ss => ss.map(s => { const clip =
            s.querySelector('clipPath rect'); return [s.dataset.slice, clip.x.baseVal.value + clip.width.baseVal.value,
            s.viewBox.baseVal.width, s.getBoundingClientRect().width]; })""")
        slices = [tuple(map(float, band[0].split())) for band in bands]
        duration = p.evaluate("JSON.parse(document.getElementById('rite-data').textContent).duration")
        assert slices[0][0] == 0 and slices[-1][1] == pytest.approx(duration)
        assert all(a[1] == pytest.approx(b[0]) for a, b in zip(slices, slices[1:], strict=False))
        assert len(bands) >= 2 and all(clip <= width + 1 and shown <= 1047 for _, clip, width, shown in bands)
        # every printed panel of every plate has its north arrow with 北, drawn where it shows
        norths = p.eval_on_selector_all("figure.plate svg.plate-panel", """ps => ps.map(p =>
            [...p.querySelectorAll('.north-label')].filter(t => t.textContent === '北' && t.getBBox().width > 0
             && p.querySelector('path.north')).length)""")
        assert norths and all(n == 1 for n in norths), norths
        counts = []
        for plates in ("", "none"):
            p.evaluate("d => { const s = document.getElementById('plates'); if (s) s.style.display = d; }", plates)
            pdf = tmp_path / f"{rite}{plates}.pdf"
            p.pdf(path=str(pdf), format="A4", landscape=True, print_background=True)
            counts.append(len(PdfReader(str(pdf)).pages))
        plated = len(_plates_of(timelines[rite], staged[rite]))
        assert counts[0] - counts[1] == plated  # one page for each plate
        reader = PdfReader(str(tmp_path / f"{rite}.pdf"))
        printed = [n for n, pg in enumerate(reader.pages) if "as at" in pg.extract_text()]
        assert len(printed) == plated
        for n in printed:  # every word of a plate's page, the labels of the 堂, 庭 and 侯 above all, 6 pt or more
            small = [(size, text) for size, text in _text_sizes(reader.pages[n]) if size < 6 - 0.01]
            assert small == [], (n, small[:5])
        filled = _filled(tmp_path / f"{rite}.pdf")
        assert [n for n in printed if filled[n] < 2 / 3] == [], filled  # no plate's page a third empty
        assert filled[printed[0] - 1] >= 2 / 3, filled  # the timeline's page, before the plates: its bands fill it
        assert counts[1] <= 16, counts  # the notices and timeline, then the run sheet: 大射 in 15


def _text_sizes(page: Any) -> list[tuple[float, str]]:
    """Each run of text on a PDF page with the size it prints at (pt): its font size through both matrices."""
    found: list[tuple[float, str]] = []

    def visit(text: str, cm: list[float], tm: list[float], _font: Any, size: float) -> None:
        if text.strip():
            found.append((size * math.hypot(tm[2], tm[3]) * math.hypot(cm[2], cm[3]), text.strip()))

    page.extract_text(visitor_text=visit)
    return found


def _filled(pdf: Path) -> list[float]:
    """How far down each page of *pdf* its ink reaches, as a share of the sheet inside its 10 mm margins
    (pdftoppm at 20 dpi, grey)."""
    folder = pdf.with_suffix("")
    folder.mkdir()
    subprocess.run(["pdftoppm", "-r", "20", "-gray", str(pdf), str(folder / "p")], check=True, timeout=120)
    out = []
    for image in sorted(folder.glob("p-*.pgm"), key=lambda f: int(f.stem.split("-")[1])):
        magic, size, _, pixels = image.read_bytes().split(b"\n", 3)
        assert magic == b"P5"
        w, h = map(int, size.split())
        margin = round(h * 10 / 210)
        inked = [n for n in range(margin, h - margin) if min(pixels[n * w:(n + 1) * w]) < 200]
        out.append((max(inked, default=margin) - margin + 1) / (h - 2 * margin))
    return out


def _spans(text: str) -> set[int]:
    """The cue numbers a printed walk's label names: "1–3,5" → {1, 2, 3, 5}."""
    out: set[int] = set()
    for part in text.split(","):
        a, _, b = part.partition("–")
        out |= set(range(int(a), int(b or a) + 1))
    return out


@pytest.mark.parametrize("rite", ["xiangyinjiu", pytest.param("dashe", marks=pytest.mark.slow)])
def test_each_printed_plate_draws_its_stages_walks_numbered_as_its_list(rite, pages, timelines, opened, staged):
    stages = [ids for _, _, ids in _plates_of(timelines[rite], staged[rite])]
    page = opened(pages[rite], width=1047)
    with page.checks(f"print-walks-{rite}") as p:
        shown = "els => els.filter(e => getComputedStyle(e).display !== 'none').length"  # printed: the panels show it
        assert p.eval_on_selector_all(".content > .print-walks", shown) == 0  # on screen, nothing of it
        p.emulate_media(media="print")
        figures = p.query_selector_all("figure.plate")
        assert len(figures) == len(stages)
        walked = 0
        for figure, ids in zip(figures, stages, strict=True):
            walks = [(n, w) for n, cue in enumerate(ids, 1) for w in staged[rite].cues[cue].derivation.walks
                     if round(w.length, 2) > 0.3]
            routes = {tuple((round(q.x, 2), round(q.y, 2)) for q in w.route) for _, w in walks}
            drawn = figure.eval_on_selector_all(".content > .print-walks polyline.print-walk",
                                                "els => els.map(e => e.getAttribute('points'))")
            assert len(drawn) == len(routes), ids[0]  # each route once, however many walk it
            assert {tuple(tuple(float(v) for v in pt.split(",")) for pt in d.split()) for d in drawn} == routes
            assert figure.eval_on_selector_all(".content > .print-walks", shown) == 1  # printed (empty: no walks)
            clipped = figure.evaluate("f => Array.from(f.querySelectorAll('.plate-cues li')).filter(li => "
                                      "li.getBoundingClientRect().bottom > f.getBoundingClientRect().bottom).length")
            assert clipped == 0, ids[0]  # the list explains every number: all of it on the page
            labels = figure.eval_on_selector_all(".walk-labels text", "els => els.map(e => e.textContent)")
            assert set().union(*map(_spans, labels)) == {n for n, _ in walks}, ids[0]  # every cue that walks, named
            assert len(labels) <= len(routes)
            svg = figure.query_selector("svg.plate-svg")
            assert svg.eval_on_selector(".walk-labels", "g => Number(g.dataset.dropped)") == 0, ids[0]
            svg.evaluate("s => { s.style.display = 'block'; }")  # the whole court shown, to measure its labels
            assert _overlapping(svg.evaluate(LABEL_BOXES)) == [], ids[0]
            svg.evaluate("s => { s.style.display = ''; }")
            walked += bool(walks)
        assert walked > len(stages) // 2
        assert page.errors == []


@pytest.mark.parametrize("rite", RITES)
def test_every_walk_the_page_draws_keeps_off_the_walls_and_a_track_is_its_walks_joined(rite, timelines, productions,
                                                                                          staged):
    """What a plate and a track draw (plates_data, as rounded for the page) for every cue of each blocked rite:
    each segment crosses no wall and leaves the 堂 only by a stair, and each walk starts where its walker stood."""
    from yuesheng.staging.model import Point
    from yuesheng.staging.routes import blocked
    from yuesheng.web.plates import plates_data

    timeline = timelines[rite]
    plates = plates_data(productions[rite], timeline.names)
    assert plates is not None
    data = json.loads(plates.json)
    hall = staged[rite].hall
    stairs = {frozenset(((round(s.top.x, 2), round(s.top.y, 2)), (round(s.foot.x, 2), round(s.foot.y, 2))))
              for s in hall.stairs}
    at: dict[str, tuple[float, float]] = {}
    walks = 0
    for t in timeline.cues:
        cue = data["cues"].get(t.cue.id)
        if cue is None:
            continue
        for who, route, *_ in cue["walks"]:
            assert who not in at or at[who] == tuple(route[0]), (t.cue.id, who)  # no jump before a walk
            for p, q in zip(route, route[1:], strict=False):
                if frozenset((tuple(p), tuple(q))) not in stairs:
                    assert not blocked(hall, Point(*p), Point(*q)), (t.cue.id, who, p, q)
            at[who] = tuple(route[-1])
            walks += 1
        walked = {w[0] for w in cue["walks"]}
        for who, x, y, *_ in cue["set"]:
            assert who not in walked or at[who] == (x, y), (t.cue.id, who)  # he stands where his walk ends
            at[who] = (x, y)
    assert walks > 100
