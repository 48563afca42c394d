"""The page plays the rite (issue 30 §1): its transport places every member as ``Production.motion`` does, plays,
jumps to a cue, follows a person and plays a sound file beside the page in step (``web/transport.py``, the
page's ``transport.js.j2``)."""

from __future__ import annotations

import json
import math
import re
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

import yuesheng
from yuesheng import caches
from yuesheng.cli import main
from yuesheng.staging.model import Point
from yuesheng.staging.persons import person
from yuesheng.timeline import TICKS_PER_SECOND
from yuesheng.web.transport import key, transport_data, transport_json

INSTANTS = 20


@pytest.fixture(scope="module")
def dashe(repertoire):
    production = yuesheng.produce(yuesheng.load("dashe", repertoire=repertoire))
    assert production.motion is not None
    return production


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("transport") / "dashe.html"
    assert main(["sheet", "dashe", "-o", str(path)]) == 0
    return Path(path)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from test_sheet import _chromium

    with _chromium() as b:
        yield b


def _off_route(p: Point, route: tuple[Point, ...]) -> float:
    def to_segment(a: Point, b: Point) -> float:
        dx, dy = b.x - a.x, b.y - a.y
        d2 = dx * dx + dy * dy
        f = 0.0 if d2 == 0 else max(0.0, min(1.0, ((p.x - a.x) * dx + (p.y - a.y) * dy) / d2))
        return math.hypot(p.x - a.x - f * dx, p.y - a.y - f * dy)

    return min(to_segment(a, b) for a, b in zip(route, route[1:], strict=False))


def _instants(dashe: Any) -> list[float]:
    """Half the instants spread evenly over the rite, half in the middle of walks spread over it (so that walkers are
    drawn at them)."""
    motion = dashe.motion
    end = max(b for _, b in (motion.span(c) for c in motion.cues))
    even = [end * (k + 0.5) / (INSTANTS // 2) for k in range(INSTANTS // 2)]
    legs = sorted((leg for m in motion.members for leg in motion.legs(m) if leg.seconds > 2), key=lambda g: g.start)
    walking = [legs[len(legs) * k // (INSTANTS // 2)] for k in range(INSTANTS // 2)]
    return even + [round(g.start + g.seconds * 0.37, 3) for g in walking]


def _open(browser: Any, url: str) -> Any:
    tab = browser.new_page(viewport={"width": 1440, "height": 900})
    errors: list[str] = []
    tab.on("pageerror", lambda e: errors.append(str(e)))
    tab.errors = errors
    tab.goto(url)
    tab.wait_for_selector("html[data-ready=true]", timeout=30_000)
    return tab


def _drawn(tab: Any) -> dict[str, str]:
    drawn: dict[str, str] = tab.eval_on_selector_all("#player [data-member]", "els => Object.fromEntries(els.map(e => "
                                                             "[e.dataset.member, e.dataset.at]))")
    return drawn


def test_the_page_carries_every_members_steps_and_what_sounds(dashe):
    data = transport_data(dashe)
    assert data is not None
    motion = dashe.motion
    assert set(data["tracks"]) == set(motion.members)
    for m in motion.members:
        walks = [s for s in data["tracks"][m]["steps"] if s[0] == "go"]
        assert [w[3] for w in walks] == [leg.number for leg in motion.legs(m)]
        assert all(len(w[5]) == len(w[6]) and w[6][0] == 0 and w[6][-1] == pytest.approx(1) for w in walks)
    assert data["sung"] and data["music"] and any("節" in text for _, text in data["sounds"])
    assert json.loads(json.dumps(data)) == data  # no inf or nan: the page reads it as JSON


def test_the_data_are_kept_and_an_entry_not_whole_is_made_again(dashe):
    made = transport_json(dashe)
    assert made is not None and json.loads(made) == transport_data(dashe)
    folder = caches.folder("transport")
    assert folder is not None
    assert folder.entries() and transport_json(dashe) == made  # read back
    for entry, _, _ in folder.entries():
        folder.write(entry, made[: len(made) // 2].encode(), entries=8)  # cut short: a miss, made again
    assert transport_json(dashe) == made


def test_the_kept_data_are_keyed_by_the_events_the_page_names_and_the_words_sung(dashe):
    """Another time, text or 節 of an event the transport names, or other words of a piece, is another entry; a
    pitch, or a note of another part, is not (the data do not read them)."""
    from dataclasses import replace

    from yuesheng.timeline import EventKind
    from yuesheng.web.transport import _inputs

    timeline, doc = dashe.timeline, dashe.sheet
    events = timeline.events
    sung = next(n for n, e in enumerate(events) if e.kind is EventKind.NOTE and e.part == "歌")
    played = next(n for n, e in enumerate(events) if e.kind is EventKind.NOTE and e.part not in ("歌", ""))
    stroke = next(n for n, e in enumerate(events) if e.kind is EventKind.DRUM and e.jie)

    def changed(n: int, **fields: Any) -> Any:
        new = events[:n] + (events[n]._replace(**fields),) + events[n + 1:]
        return replace(dashe, timeline=replace(timeline, events=new))

    piece = next(c for c in doc.cues if c.pieces).pieces[0].piece
    stanza = replace(piece.stanzas[0], notes=(replace(piece.stanzas[0].notes[0], lyric="某"),
                                             *piece.stanzas[0].notes[1:]))
    reworded = replace(piece, stanzas=(stanza, *piece.stanzas[1:]))
    cues = tuple(replace(c, pieces=tuple(replace(r, piece=reworded) if r.piece is piece else r for r in c.pieces))
                 for c in doc.cues)
    other_words = replace(dashe, sheet=replace(doc, cues=cues))  # the piece's words wherever it is sung
    base = _inputs(dashe)
    assert base is not None
    for other in (changed(sung, start_tick=events[sung].start_tick + 1), changed(sung, text="x"),
                  changed(stroke, jie=events[stroke].jie + 1), other_words):
        assert _inputs(other) != base
    for same in (changed(sung, cents=events[sung].cents + 5),
                 changed(played, start_tick=events[played].start_tick + 1)):
        assert _inputs(same) == base


def test_every_name_persons_reads_follows_the_member_it_names(dashe):
    data = transport_data(dashe)
    assert data is not None
    names = data["names"]
    sheet, same = dashe.sheet, dashe.staged.same
    named = [m.name for m in sheet.performers.values()]
    roles = [r for r, m in sheet.performers.items()
             if m.count > 1 and f"{r}#2" in dashe.motion.members and named.count(m.name) == 1]
    assert roles
    for role in roles:
        label = f"{sheet.performers[role].name} 2"
        assert names[key(label)] == names[key(f"{role}#2")] == person(label, sheet, same).members[0]
    assert key("卿 1") not in names  # a name three roles share: each by its id


def _page_key(data: dict[str, Any], name: str) -> str:
    """*name* as the page's script makes it a key: NFKC, each character through the data's fold table, no spaces
    or '#', lower case."""
    import unicodedata

    folded = "".join(data["fold"].get(c, c) for c in unicodedata.normalize("NFKC", name))
    return re.sub(r"[\s#]", "", folded).lower()


@pytest.mark.parametrize(("query", "member"), [("負侯者 2", "fuhouzhe#2"), ("负侯者 2", "fuhouzhe#2"),
                                               ("小乐正", "xiaoyuezheng"), ("隶仆人", "lipuren"),
                                               ("隷僕人", "lipuren"), ("钟人", "zhongren")])
def test_a_name_in_simplified_or_variant_characters_follows_the_member_it_names(dashe, query, member):
    data = transport_data(dashe)
    assert data is not None and member in data["tracks"]
    assert data["names"][_page_key(data, query)] == member == person(query, dashe.sheet, dashe.staged.same).members[0]


@pytest.mark.browser
def test_at_20_instants_everyone_is_drawn_where_motion_places_him(browser, page, dashe):
    """Standing people where ``plan --at`` has them (``Motion.position``), walkers on their routes, within 0.1 步;
    the first instant set by the scrub bar, the rest through the test hook."""
    motion = dashe.motion
    tab = _open(browser, page.as_uri())
    try:
        walkers = standing = 0
        for n, t in enumerate(_instants(dashe)):
            if n == 0:
                tab.eval_on_selector("#scrub", "(e, t) => { e.value = t; e.dispatchEvent(new Event('input')); }",
                                     round(t, 1))
                t = round(t, 1)
            else:
                tab.evaluate("t => yueshengTransport.seek(t)", t)
            assert float(tab.get_attribute("#player", "data-t")) == pytest.approx(t, abs=1e-3)
            drawn = _drawn(tab)
            for m in motion.members:
                p = motion.position(m, t)
                if p is None:
                    assert drawn[m] == "", f"{m} drawn at {t} before he comes on the ground"
                    continue
                x, y = map(float, drawn[m].split(","))
                assert math.hypot(x - p.point.x, y - p.point.y) <= 0.1, f"{m} at {t}: drawn {x, y}, is {p.point}"
                if p.leg is not None:
                    walkers += 1
                    assert _off_route(Point(x, y), p.leg.route) <= 0.1
                else:
                    standing += 1
        assert walkers >= INSTANTS // 2 and standing > 100
        assert tab.errors == []
    finally:
        tab.close()


@pytest.mark.browser
def test_playing_at_x60_moves_the_time_and_a_cue_clicked_is_jumped_to(browser, page, dashe):
    tab = _open(browser, page.as_uri())
    try:
        assert "silent" in tab.inner_text("#sound-state")  # no sound beside it, and it says so
        tab.select_option("#speed", "60")
        tab.click("#play")
        tab.wait_for_timeout(1500)
        tab.click("#pause")
        t = float(tab.get_attribute("#player", "data-t"))
        assert 30 < t < 60 * 4  # a second and a half at ×60, give or take a slow frame
        assert tab.evaluate("yueshengTransport.frames()") > 5
        cue = dashe.timeline.cues[40]
        tab.eval_on_selector(f'#cues tr[data-cue="{cue.cue.id}"] td', "e => e.click()")
        start = cue.start_tick / TICKS_PER_SECOND
        assert float(tab.get_attribute("#player", "data-t")) == pytest.approx(start, abs=1e-3)
        in_play = tab.eval_on_selector_all("#cues tr.in-play", "rs => rs.map(r => r.dataset.cue)")
        assert in_play == [dashe.motion.cue_at(start)]
        assert tab.errors == []
    finally:
        tab.close()


@pytest.mark.browser
def test_following_a_person_keeps_him_in_frame_and_draws_his_numbered_legs(browser, page, dashe):
    motion = dashe.motion
    member = max(motion.members, key=lambda m: sum(g.length for g in motion.legs(m)))  # the one who walks most
    legs = motion.legs(member)
    base, _, n = member.partition("#")
    name = dashe.timeline.names.get(base, base) + (f" {n}" if n else "")
    tab = _open(browser, page.as_uri() + "?follow=" + name)
    try:
        assert tab.eval_on_selector("#follow", "e => e.value") == member
        assert tab.eval_on_selector_all("#player .follow-track polyline", "ls => ls.length") == len(legs)
        numbers = tab.eval_on_selector_all("#player .leg-no", "ts => ts.map(t => t.textContent)")
        assert [int(n) for n in numbers] == [g.number for g in legs]
        leg = max(legs, key=lambda g: g.length)
        tab.evaluate("t => yueshengTransport.seek(t)", leg.start)
        tab.select_option("#speed", "5")
        tab.click("#play")
        for _ in range(4):
            tab.wait_for_timeout(400)
            inside = tab.evaluate("""m => { const at = document.querySelector(`#player [data-member="${m}"]`)
                .dataset.at.split(',').map(Number);
              const [x, y, w, h] = document.getElementById('player-plate').getAttribute('viewBox').split(' ')
                .map(Number);
              return at[0] > x && at[0] < x + w && at[1] > y && at[1] < y + h; }""", member)
            assert inside
        assert tab.errors == []
    finally:
        tab.close()


_LABELS = """() => Array.from(document.querySelectorAll('#player .mover-label'))
  .filter((e) => e.getClientRects().length).map((e) => { const r = e.getBoundingClientRect();
    return [e.textContent, r.left, r.top, r.right, r.bottom]; })"""


@pytest.mark.browser
def test_the_names_on_the_playing_plate_cover_no_other_and_are_readable_on_the_whole_ground(browser, page, dashe):
    """大射儀's whole ground is a few px a 步: the names beside the 堂 are placed clear of each other, each at least
    10 px high, those that do not fit left out (his mark's title still names him); zoomed in, nearly everyone's
    name is shown."""
    motion = dashe.motion
    busiest = max(motion.cues, key=lambda c: sum(1 for m in motion.members for g in motion.legs(m) if g.cue == c))
    at = motion.span(busiest)[0] + 5
    tab = _open(browser, page.as_uri())
    try:
        tab.evaluate("t => yueshengTransport.seek(t)", at)
        on_ground = len(motion.at(at))
        for view in (-1, 0):  # the whole ground, then the 堂 and 庭
            options = tab.eval_on_selector_all("#player-view option", "os => os.map((o) => o.value)")
            tab.select_option("#player-view", options[view])
            shown = tab.evaluate(_LABELS)
            assert all(bottom - top >= 10 for _, _, top, _, bottom in shown)
            for i, a in enumerate(shown):
                for b in shown[i + 1:]:
                    overlap = min(a[3], b[3]) - max(a[1], b[1]), min(a[4], b[4]) - max(a[2], b[2])
                    assert min(overlap) <= 1, (a, b)
            assert len(shown) >= (on_ground // 3 if view == -1 else on_ground * 2 // 3), (view, len(shown), on_ground)
        assert tab.errors == []
    finally:
        tab.close()


@pytest.mark.browser
def test_follow_in_the_address_reads_a_name_in_simplified_characters(browser, page):
    tab = _open(browser, page.as_uri() + "?follow=" + quote("负侯者 2"))
    try:
        assert tab.eval_on_selector("#follow", "e => e.value") == "fuhouzhe#2" and tab.errors == []
    finally:
        tab.close()


def _with_sound(page: Path, folder: Path, sound: dict[str, Any]) -> Path:
    """*page* with an ``#audio-data`` island (as ``sheet --audio`` writes it) beside its rite data."""
    html = page.read_text(encoding="utf-8")
    island = f'<script type="application/json" id="audio-data">{json.dumps(sound)}</script>\n'
    out = folder / "with-sound.html"
    out.write_text(html.replace('<script type="application/json" id="rite-data">', island +
                                '<script type="application/json" id="rite-data">', 1), encoding="utf-8")
    return out


def _silence(path: Path, seconds: float) -> None:
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\0\0" * int(8000 * seconds))


@pytest.mark.browser
def test_a_sound_file_missing_beside_the_page_is_said_plainly(browser, page, tmp_path):
    path = _with_sound(page, tmp_path, {"src": "no-such.flac", "map": None, "rite": "dashe"})
    tab = _open(browser, path.as_uri())
    try:
        tab.wait_for_function("document.getElementById('sound-state').classList.contains('warn')", timeout=10_000)
        assert re.search(r"cannot find the sound file no-such\.flac", tab.inner_text("#sound-state"))
    finally:
        tab.close()


@pytest.mark.browser
def test_at_x1_the_sound_is_the_clock_through_its_map(browser, page, tmp_path):
    """A file whose 30 s sound the rite's 1000–1060 s (a map that halves the time): the page's time follows the
    sound's through the map, within 0.25 s."""
    _silence(tmp_path / "rite.wav", 30)
    path = _with_sound(page, tmp_path, {"src": "rite.wav", "map": [[1000, 0], [1060, 30]], "rite": "dashe"})
    tab = _open(browser, path.as_uri())
    try:
        tab.wait_for_function("document.getElementById('sound-state').textContent.startsWith('sound: rite.wav')",
                              timeout=10_000)
        tab.evaluate("yueshengTransport.seek(1010)")
        tab.click("#play")
        tab.wait_for_timeout(1500)
        page_t, file_t = tab.evaluate("""() => [Number(document.getElementById('player').dataset.t),
                                                yueshengTransport.audio().currentTime]""")
        assert file_t > 5.2  # the sound plays, from 5 s into the file (1010 s of the rite)
        assert page_t == pytest.approx(1000 + 2 * file_t, abs=0.25 * 2)
        assert page_t > 1012  # the rite runs at twice the sound's pace where the map says so
    finally:
        tab.close()


@pytest.mark.browser
def test_the_music_in_play_is_named_with_its_piece_stanza_and_line_and_calls_show_as_they_sound(browser, page,
                                                                                                 dashe):
    from yuesheng.outputs.frames import Sounding

    sounding = Sounding(dashe.timeline, dashe.sheet)
    syllable = sounding.syllables[len(sounding.syllables) // 2]
    call = next(s for s in sounding.sounds if "節" not in s.text)
    jie = next(s for s in sounding.sounds if "節" in s.text)
    tab = _open(browser, page.as_uri())
    try:
        at = syllable.start + 0.01
        tab.evaluate("t => yueshengTransport.seek(t)", at)
        sung = tab.inner_text("#now-sung")
        assert sung == f"{syllable.piece}, stanza {syllable.stanza}: {syllable.line}"
        assert tab.inner_text("#now-sung b") == syllable.line[syllable.index]
        playing = sounding.playing(at)
        assert playing is not None and tab.inner_text("#now-music") == f"music: {playing.text}"
        for sound in (call, jie):
            tab.evaluate("t => yueshengTransport.seek(t)", sound.start + 0.05)
            assert sound.text in tab.inner_text("#now-heard")
        tab.evaluate("t => yueshengTransport.seek(t)", call.start - 5)
        assert call.text not in tab.inner_text("#now-heard")
    finally:
        tab.close()

