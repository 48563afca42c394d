"""Sides: each person's own book of the rite, as a marching band's dot book is each marcher's.

For each person, in the order of his cues (those he acts in — his role or one the texts make him, in the cue's
``who`` or ``performers`` — and those that walk or turn him): the warning (the cue just before, seen, and the
music sounding as his begins, heard), where he stands as it begins, where he goes (his numbered legs, with their
walk times), the way he faces after it, what he does and says (the action and its words, with the text's quote,
page and layer), the things the action names him carrying or handing (read from its words: 執弓, 授爵), who stands
beside him after it, and a small plate of the move; his whole track (every leg, numbered) on the first page.

``sides_data`` is the book as plain data (``--format json``), ``sides_html`` the page (``sides.html.j2``: the
plates drawn by the template from numbers made here), ``print_pdf`` the page printed by Chromium, headless, with
a page turn before each person and none inside a cue.
"""

from __future__ import annotations

import math
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.errors import PrintError, YueshengError

if TYPE_CHECKING:
    from yuesheng.cuesheet.model import Cue, CueSheet
    from yuesheng.production import Production
    from yuesheng.staging.model import Facing, Hall, Point
    from yuesheng.staging.motion import Leg, Motion
    from yuesheng.staging.persons import Person
    from yuesheng.staging.rite import StagedRite

PAPERS = {"a5": "A5", "a4": "A4"}
BESIDE = 1.5  # 步: who stands this near him after a cue stands beside him
MARGIN = 3.0  # 步 round a move on its plate
SMALLEST = (14.0, 9.0)  # 步: a move's plate shows at least this much
_CARRY = {"執": "carries", "奉": "carries", "挾": "carries", "搢": "carries", "取": "takes up", "受": "receives",
          "授": "hands", "賜": "hands", "奠": "sets down", "反": "returns"}
_THINGS = ("虚爵", "乘矢", "角觶", "弓", "矢", "爵", "觶", "觚", "散", "旌", "算", "扑", "瑟", "笙", "脯", "醢", "俎",
           "幂", "巾", "豐", "楅", "籌", "鼓", "磬", "決", "拾")
# a verb, at most two characters and no 于 or 於 (which bring in a place: 奠于中庭), then a thing
_NAMED = re.compile(f"([{''.join(_CARRY)}])(?:(?![于於])[^，。、\\s]){{0,2}}?({'|'.join(_THINGS)})")


def sides_data(production: Production, people: Sequence[Person]) -> dict[str, Any]:
    """The book of *people* (each member of a group his own) as plain data."""
    from yuesheng.staging.persons import persons

    sheet, staged, motion = production.sheet, production.staged, production.motion
    assert staged is not None and motion is not None  # the command checks the blocking first
    labels = {m: p.label for p in persons(sheet, staged.same) for m in p.members}
    books = [_book(member, labels, sheet, staged, motion, production) for p in people for member in p.members]
    return {"rite": sheet.rite_id, "rite_name": sheet.rite_name, "hall": _hall(staged.hall),
            "people": [b for b in books if b is not None]}


def acts_in(member: str, sheet: CueSheet, staged: StagedRite, motion: Motion) -> list[str]:
    """The cues *member* acts in, in order: his role (or one the blocking makes him) named by the cue, or a walk
    or a turn of his at it."""
    from yuesheng.staging.stage import members

    roles = {r for r in sheet.performers if member in members(r, sheet, staged.same)}
    walked = {leg.cue for leg in motion.legs(member)} if member in motion.members else set()
    out, before = [], None
    for cue_id in motion.cues:
        stand = staged.cues[cue_id].stands.get(member)
        now = (stand.point, stand.facing) if stand else None
        cue = sheet.cue(cue_id)
        if roles & {*cue.who, *cue.performers} or cue_id in walked or (before is not None and now != before):
            out.append(cue_id)
        before = now
    return out


def _book(member: str, labels: Mapping[str, str], sheet: CueSheet, staged: StagedRite, motion: Motion,
          production: Production) -> dict[str, Any] | None:
    cues = acts_in(member, sheet, staged, motion)
    legs = motion.legs(member) if member in motion.members else ()
    hall = staged.hall
    stands = _stands(member, cues, staged)
    return {"member": member, "label": labels.get(member, member), "cues": [
        _cue(member, cue_id, labels, sheet, staged, motion, production) for cue_id in cues],
        "track": {"legs": [_leg(leg, hall) for leg in legs], "box": _track_box(legs, stands, hall),
                  "stands": stands}}


def _cue(member: str, cue_id: str, labels: Mapping[str, str], sheet: CueSheet, staged: StagedRite,
         motion: Motion, production: Production) -> dict[str, Any]:
    from yuesheng.timeline.model import clock, ticks

    hall = staged.hall
    cue = sheet.cue(cue_id)
    start, end = motion.span(cue_id)
    here = _before(member, cue_id, staged, motion)
    stand = staged.cues[cue_id].stands.get(member)
    legs = [leg for leg in motion.legs(member) if leg.cue == cue_id] if member in motion.members else []
    after = staged.cues[cue_id].stands
    beside = sorted((labels.get(w, w) for w, s in after.items()
                     if stand is not None and w != member and s.point.distance(stand.point) <= BESIDE))
    from fractions import Fraction

    return {"id": cue.id, "section": cue.section, "start": clock(ticks(Fraction(start).limit_denominator(1000))),
            "seconds": round(end - start, 1), "warning": _warning(cue_id, motion, sheet),
            "at": {"place": _place_name(hall, here[0]) if here else "",
                   "facing": here[1].hanzi + "面" if here and here[1] else ""},
            "legs": [_leg(leg, hall) for leg in legs],
            "facing": stand.facing.hanzi + "面" if stand and stand.facing else "",
            "stands": _place_name(hall, stand.place) if stand else "",
            "action": cue.action, "words": cue.words, "cite": _cite(cue), "music": _pieces(cue),
            "things": named_things(cue.action), "beside": beside,
            "gestures": [g.name for g in motion.gestures(cue_id)],
            "plate": _plate(member, legs, after, hall, labels)} | ({"note": cue.note} if cue.note else {})


def _before(member: str, cue_id: str, staged: StagedRite, motion: Motion) -> tuple[str, Facing | None] | None:
    """Where *member* stands as *cue_id* begins: after the cue before it, or from the start (his place, facing)."""
    i = motion.cues.index(cue_id)
    if i:
        s = staged.cues[motion.cues[i - 1]].stands.get(member)
        return (s.place, s.facing) if s else None
    at = motion.position(member, -math.inf)
    return (at.place or (at.leg.origin if at.leg else ""), at.facing) if at else None


def _warning(cue_id: str, motion: Motion, sheet: CueSheet) -> dict[str, Any]:
    """What comes just before *cue_id*: the cue before it (seen), and the music sounding as it begins (heard)."""
    cues = motion.cues
    i = cues.index(cue_id)
    start = motion.span(cue_id)[0]
    before = sheet.cue(cues[i - 1]) if i else None
    heard = [p for c in cues[:i] if sheet.cue(c).is_music and motion.span(c)[0] <= start < motion.span(c)[1] + 1e-6
             for p in _pieces(sheet.cue(c))]
    return {"cue": before.id if before else "", "seen": (before.action or " ".join(_pieces(before))) if before else
            "the rite begins", "heard": list(dict.fromkeys(heard))}


def _pieces(cue: Cue) -> list[str]:
    return [p.piece.title for p in cue.pieces]


def _cite(cue: Cue) -> dict[str, str]:
    """The cue's quote, its page and the layer of the text it is in (經, 記, 鄭注 …)."""
    return {"page": cue.cite.where, "quote": cue.cite.quote, "layer": quote_layer(cue.cite.page, cue.cite.quote)}


def quote_layer(page_id: str, quote: str) -> str:
    """The layer of the page (經, 記, 鄭注, 釋曰 …) where *quote* begins; '' where it is not found on the page."""
    from yuesheng.characters import display
    from yuesheng.sources import page

    text = "周禮" if page_id.startswith("周禮") else "yili"
    try:
        found = page(page_id.removeprefix("周禮注疏").strip(), text="zhouli" if text == "周禮" else "yili")
    except YueshengError:
        return ""
    first = display(re.sub(r"\s", "", quote.split("…")[0]))
    return next((p.kind for p in found.parts if first and first in display(p.text)), "")


def named_things(action: str) -> list[dict[str, str]]:
    """The things the action's words name carried, taken, handed or set down: 執弓 → carries 弓."""
    return [{"how": _CARRY[m[1]], "what": m[2], "words": m[0]} for m in _NAMED.finditer(action)]


def _leg(leg: Leg, hall: Hall) -> dict[str, Any]:
    return {"n": leg.number, "cue": leg.cue, "from": _place_name(hall, leg.origin), "to": _place_name(hall, leg.to),
            "seconds": round(leg.seconds, 1), "steps": leg.length, "pace": "趨" if leg.run else "行",
            "route": [[round(p.x, 2), round(p.y, 2)] for p in leg.route],
            "mid": _middle(leg.route)}


def _middle(route: Sequence[Point]) -> list[float]:
    """The point half way along *route*, where its number is drawn."""
    lengths = [a.distance(b) for a, b in zip(route, route[1:], strict=False)]
    left = sum(lengths) / 2
    for (a, b), d in zip(zip(route, route[1:], strict=False), lengths, strict=True):
        if left <= d and d > 0:
            f = left / d
            return [round(a.x + (b.x - a.x) * f, 2), round(a.y + (b.y - a.y) * f, 2)]
        left -= d
    return [round(route[-1].x, 2), round(route[-1].y, 2)]


def _place_name(hall: Hall, place: str) -> str:
    return hall.places[place].name if place in hall.places else place


def _stands(member: str, cues: Iterable[str], staged: StagedRite) -> list[dict[str, Any]]:
    """The places *member* stands at through his cues, each once, for the track."""
    seen: dict[str, dict[str, Any]] = {}
    for cue_id in cues:
        s = staged.cues[cue_id].stands.get(member)
        if s is not None and s.place not in seen:
            seen[s.place] = {"name": _place_name(staged.hall, s.place), "at": [round(s.point.x, 2),
                                                                              round(s.point.y, 2)]}
    return list(seen.values())


def _track_box(legs: Sequence[Leg], stands: Sequence[Mapping[str, Any]], hall: Hall) -> list[float]:
    """The ground his whole track covers, with the 堂 (to see where he is), at least a move's plate."""
    points = [(p.x, p.y) for leg in legs for p in leg.route] + [tuple(s["at"]) for s in stands]
    points += [(hall.tang[0].x, hall.tang[0].y), (hall.tang[1].x, hall.tang[1].y)]
    return _box(points, MARGIN, SMALLEST)


def _box(points: Sequence[tuple[float, float]], margin: float, least: tuple[float, float] = (0.0, 0.0)) -> list[float]:
    """x, y, width, height round *points* with *margin*, at least *least* wide and deep."""
    x0, x1 = min(p[0] for p in points) - margin, max(p[0] for p in points) + margin
    y0, y1 = min(p[1] for p in points) - margin, max(p[1] for p in points) + margin
    w, h = max(x1 - x0, least[0]), max(y1 - y0, least[1])
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    return [round(cx - w / 2, 2), round(cy - h / 2, 2), round(w, 2), round(h, 2)]


def _plate(member: str, legs: Sequence[Leg], after: Mapping[str, Any], hall: Hall,
           labels: Mapping[str, str]) -> dict[str, Any]:
    """A small plate of the move: the ground round it, the others standing after the cue, his legs and stand."""
    mine = after.get(member)
    points = [(p.x, p.y) for leg in legs for p in leg.route] + ([(mine.point.x, mine.point.y)] if mine else [])
    if not points:
        return {}
    box = _box(points, MARGIN, SMALLEST)
    x, y, w, h = box
    others = [{"at": [round(s.point.x, 2), round(s.point.y, 2)], "name": labels.get(who, who)}
              for who, s in sorted(after.items()) if who != member
              and x <= s.point.x <= x + w and y <= s.point.y <= y + h]
    face = list(mine.facing.vector) if mine and mine.facing else None
    return {"box": box, "others": others, "legs": [_leg(leg, hall) for leg in legs],
            "me": {"at": [round(mine.point.x, 2), round(mine.point.y, 2)],
                   "face": [round(v, 2) for v in face] if face else None} if mine else None}


def _hall(hall: Hall) -> dict[str, Any]:
    """The hall as the plates draw it: the 堂, the walls and the stairs."""
    (x0, y0), (x1, y1) = (hall.tang[0].x, hall.tang[0].y), (hall.tang[1].x, hall.tang[1].y)
    return {"name": hall.name, "tang": [x0, y0, x1 - x0, y1 - y0],
            "walls": [" ".join(f"{p.x:g},{p.y:g}" for p in w.points) for w in hall.walls],
            "stairs": [[s.top.x, s.top.y, s.foot.x, s.foot.y] for s in hall.stairs]}


def sides_html(data: Mapping[str, Any], paper: str = "a5") -> str:
    """The book as one HTML page, its text font embedded, to print on *paper* (a5 or a4)."""
    from yuesheng.web.sheet import environment, with_fonts

    page = environment().get_template("sides.html.j2").render(book=data, paper=PAPERS[paper])
    return with_fonts(page)


def print_pdf(html: str, *, timeout: float = 900.0) -> bytes:
    """*html* printed to PDF by headless Chromium (PrintError if it cannot be found or fails). Chromium runs in a
    process group of its own, killed whole if this is interrupted."""
    import os
    import signal
    import subprocess

    from yuesheng.process import bound_to_us

    browser = next((found for name in ("chromium", "chromium-browser", "google-chrome")
                    if (found := shutil.which(name))), None)
    if browser is None:
        raise PrintError("cannot print the sides to PDF: no Chromium found (install chromium, or use --format html "
                         "and print the page from a browser)")
    with tempfile.TemporaryDirectory(prefix="yuesheng-sides-") as tmp:
        source, out = Path(tmp) / "sides.html", Path(tmp) / "sides.pdf"
        source.write_text(html, encoding="utf-8")
        command = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                   "--no-first-run", f"--user-data-dir={tmp}/profile", f"--print-to-pdf={out}", source.as_uri()]
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
                                 preexec_fn=bound_to_us())
        try:
            _, err = child.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise PrintError(f"Chromium did not print the sides within {timeout:g} s") from None
        finally:
            if child.poll() is None:
                os.killpg(child.pid, signal.SIGKILL)
                child.wait()
        if not out.exists() or out.stat().st_size == 0:
            tail = err.decode("utf-8", "replace").strip().splitlines()[-3:]
            raise PrintError(f"Chromium could not print the sides (exit {child.returncode}): {' / '.join(tail)}")
        return out.read_bytes()
