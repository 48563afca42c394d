"""The show's read-only views, beside the operator's console: ``/observe`` for the stage manager and
``/cast/PERSON`` for a performer's phone (the routes are the console's: ``web/console``).

What they show is reckoned here from the player's status and the console's state, on the plan's times:

- **observe**: NOW, NEXT, the countdown (armed music's, else what is left of NOW's planned time) and the live plate
  of who stands where after NOW (``outputs/plan``'s plate of the staged rite, ``Production.staged``).
- **cast**: for one person (named as every command names one, ``staging/persons``), his cue now if he is in it,
  his next cue, where he goes at it (his stand after it, and his walk's route, drawn small: the plate cropped to
  his move, ``MARGIN`` 步 around it and at least ``AT_LEAST`` 步 each way), and the countdowns
  to it and to its warning cue (the GO point before the one that starts it: when he stands by).

A person is in a cue when the cue names his role (``who`` or ``performers``) or the staged rite walks one of his
members at it. Plates are drawn once a cue (a person) and kept.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yuesheng.timeline import TICKS_PER_SECOND, CueTiming

if TYPE_CHECKING:
    from yuesheng.live.cueing import PlayerStatus
    from yuesheng.production import Production
    from yuesheng.staging.persons import Person
    from yuesheng.staging.rite import StagedRite


MARGIN = 2.0  # 步 of ground shown around a performer's move on his plate
AT_LEAST = 10.0  # 步 each way a performer's plate shows, at the least: the hall around him, not his steps alone


@dataclass(frozen=True, slots=True)
class Part:
    """One cue a person is in: the cue, and where he stands after it (place id, '' where not staged)."""

    timing: CueTiming
    place: str


class Views:
    """What the views show of one production; the staged rite is read on first use (it may take a second)."""

    def __init__(self, production: Production) -> None:
        self.production = production
        self.timeline, self.sheet = production.timeline, production.sheet
        self.by_id = {t.cue.id: t for t in self.timeline.cues}
        self.lock = threading.Lock()
        self.plates: dict[tuple[str, str], str] = {}  # (cue, person's role#n or '') → SVG
        self.parts: dict[str, tuple[Part, ...]] = {}  # person's label → the cues he is in

    @property
    def staged(self) -> StagedRite | None:
        return self.production.staged

    def person(self, query: str) -> Person:
        """The person *query* names (UnknownNameError, AmbiguousNameError with the nearest names)."""
        from yuesheng.staging.persons import person

        staged = self.staged
        return person(query, self.sheet, staged.same if staged is not None else None)

    # -- observe -------------------------------------------------------------------------------------

    def observe(self, state: dict[str, Any]) -> dict[str, Any]:
        """The stage manager's view of the console's *state*: NOW, NEXT, the countdown, the plate to show."""
        return {"view": "observe", "rite": state["rite"], "current": state["current"], "next": state["next"],
                "n": state["n"], "count": state["count"], "armed": state["armed"], "ended": state["ended"],
                "in_cue_s": state["in_cue_s"], "elapsed_s": state["elapsed_s"], "overrun_s": state["overrun_s"],
                "left_s": _left(state), "plate": state["current"]["id"] if state["current"] else None,
                "staged": self.production.ground is not None}

    def plate(self, cue_id: str, who: Person | None = None) -> str | None:
        """The plate of everyone as he stands after *cue_id* (or, for *who*, him alone and his walk at it, drawn
        small); None where the rite is not staged or the cue has no place on the ground."""
        from yuesheng.outputs.plan import plan_data, plan_svg

        key = (cue_id, who.label if who is not None else "")
        with self.lock:
            if key in self.plates:
                return self.plates[key]
        staged = self.staged
        on_ground = staged.cues.get(cue_id) if staged is not None else None
        if staged is None or on_ground is None:
            return None
        data = plan_data(staged.hall, self.sheet, at=cue_id, staged=on_ground)
        if who is not None:
            mine = set(who.members)
            data["people"] = [p for p in data["people"] if p["id"] in mine]
            data["walks"] = [w for w in data["walks"] if w["who"] in mine]
        svg = plan_svg(data, crop=move_box(data) if who is not None else None)
        with self.lock:
            self.plates[key] = svg
        return svg

    # -- cast ----------------------------------------------------------------------------------------

    def parts_of(self, who: Person) -> tuple[Part, ...]:
        """The cues *who* is in, in the rite's order."""
        with self.lock:
            if who.label in self.parts:
                return self.parts[who.label]
        staged = self.staged
        mine = set(who.members)
        out = []
        for t in self.timeline.cues:
            on_ground = staged.cues.get(t.cue.id) if staged is not None else None
            walks = on_ground is not None and any(w.who in mine for w in on_ground.derivation.walks)
            if who.role in t.cue.who or who.role in t.cue.performers or walks:
                stand = next((on_ground.stands[m] for m in who.members if m in on_ground.stands), None) \
                    if on_ground is not None else None
                out.append(Part(t, stand.place if stand is not None else ""))
        with self.lock:
            self.parts[who.label] = tuple(out)
        return self.parts[who.label]

    def cast(self, who: Person, status: PlayerStatus, state: dict[str, Any]) -> dict[str, Any]:
        """A performer's view: his cue now, his next, where he goes, the countdowns to it and its warning."""
        current = self.by_id.get(status.current) if status.current else None
        after = current.start_tick if current is not None else status.begin_tick - 1
        parts = self.parts_of(who)
        now = next((p for p in parts if current is not None and p.timing.cue.id == current.cue.id), None)
        upcoming = next((p for p in parts if p.timing.start_tick > after), None)
        out: dict[str, Any] = {"view": "cast", "person": who.label, "rite": state["rite"], "ended": state["ended"],
                               "current": state["current"], "now": self._part(now), "next": self._part(upcoming),
                               "in_s": None, "warning": None, "warning_in_s": None, "cues": len(parts)}
        if upcoming is None:
            return out
        warning = self._warning(upcoming.timing, status)
        out["warning"] = self._point(warning, status)
        if state["in_cue_s"] is not None and current is not None:
            out["in_s"] = round(max(0.0, (upcoming.timing.start_tick - current.start_tick) / TICKS_PER_SECOND
                                    - state["in_cue_s"]), 3)
            if warning is not None:
                out["warning_in_s"] = round(max(0.0, (warning.start_tick - current.start_tick) / TICKS_PER_SECOND
                                                - state["in_cue_s"]), 3)
        return out

    def _part(self, part: Part | None) -> dict[str, Any] | None:
        if part is None:
            return None
        from yuesheng.live.cueing import label

        cue = part.timing.cue
        staged = self.staged
        place = staged.hall.places.get(part.place) if staged is not None and part.place else None
        return {"id": cue.id, "action": label(part.timing), "section": cue.section, "words": cue.words,
                "note": cue.note, "where": place.name if place is not None else part.place,
                "staged": staged is not None and cue.id in staged.cues}

    def _warning(self, timing: CueTiming, status: PlayerStatus) -> CueTiming | None:
        """The GO point before the one that starts *timing*: at its GO he stands by."""
        points = [self.by_id[c] for c in status.actions]
        starts = [n for n, p in enumerate(points) if p.start_tick <= timing.start_tick]
        own = starts[-1] if starts else 0
        return points[own - 1] if own > 0 else None

    def _point(self, timing: CueTiming | None, status: PlayerStatus) -> dict[str, Any] | None:
        if timing is None:
            return None
        from yuesheng.live.cueing import label

        return {"id": timing.cue.id, "n": status.actions.index(timing.cue.id) + 1, "action": label(timing)}


def _left(state: dict[str, Any]) -> float | None:
    """The countdown the stage manager watches: armed music's, else what is left of NOW's planned time."""
    if state["armed"] and state["armed"]["in_s"] is not None:
        return float(state["armed"]["in_s"])
    if state["current"] is None or state["in_cue_s"] is None:
        return None
    return round(float(state["current"]["planned_s"]) - float(state["in_cue_s"]), 3)


def move_box(data: dict[str, Any]) -> tuple[float, float, float, float] | None:
    """The ground a performer's plate shows: his walks and where he stands, ``MARGIN`` 步 around, at least ``AT_LEAST``
    步 each way so that the hall around him shows (None: he is not on the ground at the cue)."""
    points = [p["at"] for p in data["people"]] + [xy for w in data["walks"] for xy in w["route"]]
    if not points:
        return None
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    box = [min(xs) - MARGIN, min(ys) - MARGIN, max(xs) + MARGIN, max(ys) + MARGIN]
    for low, high in ((0, 2), (1, 3)):
        short = AT_LEAST - (box[high] - box[low])
        if short > 0:
            box[low], box[high] = box[low] - short / 2, box[high] + short / 2
    return box[0], box[1], box[2], box[3]
