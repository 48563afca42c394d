"""Reading a hall file and a blocking file: YAML → Hall, Blocking; every problem with file:line:col.

A hall (``blocking/RITE.hall.yaml``)::

    format: yuesheng-hall/1
    hall: {id: xu, name: 州序, shi: false}
    assumptions: {beam: {value: 2, text: 五架之屋: 2 步 between beams}}
    tang: {x0: -6, y0: -8, x1: 6, y1: 0}           # the raised 堂: north-west and south-east corners
    stairs:                                         # on the 堂廉 (y1), run southward; whose stair it is
      zuojie: {name: 阼階, x: 3, run: 1.5, estimate: …, whose: {of: [主人], cite: {page: 5-4b, quote: …}}}
      xijie: {name: 西階, x: -3, run: 1.5, estimate: …, whose: {of: [賓], rest: true, cite: …}}
    walls: [{name: 西序, points: [[-4, -8], [-4, -1]], estimate: …}]
    places:
      xi: {name: 洗, at: [7, 8], cite: {page: 5-2b, quote: 設洗于阼階東南}}
      zhong-xi: {name: 中西, of: zhong, dir: 西, dist: 1, facing: 東面, estimate: 1 步 assumed}

A place is at a point (``at``) or at ``dist`` 步 from another place in a direction (``of``, ``dir``). Every place,
wall and stair cites a page or says why it is estimated (``estimate``). A stair's ``whose`` says whose it is: the
ranks the text sends up it (``of``, by the names performers have), and ``rest: true`` on the stair of everyone no
other stair names; a rank on two stairs, or the rest on two, is an error.

A blocking (``blocking/RITE.yaml``) states moves only: a person stays where the last move put him::

    format: yuesheng-blocking/1
    rite: xiangshe
    hall: xiangshe.hall.yaml
    start:                      # where everyone stands before the first cue
      - {who: [bin, zhongbin], to: menwai-bin, file: 東上, estimate: they come from the 賓's house}
    cues:
      ru-men:
        gestures: [揖]
        moves:
          - {who: zhuren, to: men-you, facing: 西面, cite: {page: 5-4a, quote: 先入入門右西面}}
          - {who: zhongbin, to: men-zuo, facing: 東面, file: 北上, cite: {page: 5-4a, quote: 衆賓皆入門左東面北上}}

A move's ``who`` is one performer id or a list (a file, in that order; a performer with a count stands as that many);
``via`` lists places the route passes; ``run: true`` is 趨; ``offset: [dx, dy]`` in 步 from the place; ``spacing``
the 步 between the members of a file (1 by default).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yuesheng.checking import Checker
from yuesheng.cuesheet.model import CueSheet, Reading
from yuesheng.errors import InvalidInputError
from yuesheng.limits import PLACE_CHAIN, PLACES, REACH, ROUTE_NODES, TANG_DEPTH, TANG_WIDTH, VIA, WALL_CORNERS
from yuesheng.staging.model import (
    Assumption,
    Blocking,
    CueBlocking,
    Facing,
    FileHead,
    Hall,
    Move,
    Place,
    Point,
    Source,
    Stair,
    Statement,
    Thing,
    Turns,
    Wall,
    Whose,
)
from yuesheng.staging.paths import BLOCKING_FORMAT, HALL_FORMAT, hall_named
from yuesheng.text import did_you_mean
from yuesheng.yamlload import Document, PathKey, load

_EPS = 0.01  # 步: a stair's top lies this far inside the 堂, so that only the stair leads onto it


def _number(c: Checker, value: Any, path: PathKey) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        c.error(path, f"expected a number of 步, got {value!r}", "schema")
        return None
    if not abs(value) <= REACH:
        c.error(path, f"{value:.6g} 步 is beyond any hall (at most {REACH:,} either way; docs/limits.md)", "limits")
        return None
    return float(value)


def _pair(c: Checker, value: Any, path: PathKey) -> Point | None:
    if not isinstance(value, list) or len(value) != 2:
        c.error(path, f"expected [x, y] in 步, got {value!r}", "schema")
        return None
    x, y = _number(c, value[0], path + (0,)), _number(c, value[1], path + (1,))
    return None if x is None or y is None else Point(x, y)


def _source(c: Checker, raw: dict[str, Any], path: PathKey) -> Source:
    """A ``cite: {page, quote}`` or an ``estimate: reason``; one of the two is required."""
    cite, estimate = raw.get("cite"), raw.get("estimate")
    if isinstance(cite, dict) and isinstance(cite.get("page"), str) and isinstance(cite.get("quote"), str):
        return Source(cite["page"], cite["quote"], estimate if isinstance(estimate, str) else "")
    if cite is not None:
        c.error(path + ("cite",), "expected cite: {page: 5-4a, quote: …}", "schema")
    if isinstance(estimate, str) and estimate.strip():
        return Source(estimate=estimate)
    if cite is None:
        c.error(path, "no source: give cite: {page, quote} or estimate: the reason the value is estimated", "cite")
    return Source(estimate="?")


def _facing(c: Checker, value: Any, path: PathKey) -> Facing | None:
    if value is None:
        return None
    facing = Facing.parse(value) if isinstance(value, str) else None
    if facing is None:
        c.error(path, f"unknown facing {value!r}: expected one of {', '.join(f.hanzi + '面' for f in Facing)}",
                "schema")
    return facing


def _head(c: Checker, value: Any, path: PathKey) -> FileHead | None:
    if value is None:
        return None
    head = FileHead.parse(value) if isinstance(value, str) else None
    if head is None:
        c.error(path, f"unknown file head {value!r}: expected one of {', '.join(h.hanzi for h in FileHead)}", "schema")
    return head


def _checked(doc: Document, fmt: str) -> tuple[Checker, dict[str, Any]]:
    c = Checker(doc)
    data = doc.data if isinstance(doc.data, dict) else {}
    if not isinstance(doc.data, dict):
        c.error((), "expected a mapping at the top of the file", "schema")
    elif data.get("format") != fmt:
        c.error(("format",), f"format {data.get('format')!r}: expected {fmt!r}", "schema")
    return c, data


# --- the hall ------------------------------------------------------------------------------------------------------


def load_hall(path: str | Path, readings: Mapping[str, str] | None = None,
              declared: Mapping[str, Reading] | None = None) -> Hall:
    """The hall in the file at *path*, drawn under *readings* (reading id → option; a reading of the hall not given
    there at its ``default``); InvalidInputError with every problem. *declared*: the cue sheet's readings, which
    every reading of the hall must be, with the same options and its default the sheet's chosen."""
    doc = load(path, HALL_FORMAT)
    c, data = _checked(doc, HALL_FORMAT)
    c.keys(data, (), ("format", "hall", "readings", "assumptions", "tang", "stairs", "walls", "places", "things",
                      "statements"))
    options = _hall_readings(c, data.get("readings", {}), declared)
    chosen = {rid: given if (given := (readings or {}).get(rid)) in opts else opts[0] for rid, opts in options.items()}
    data = _under(c, data, _Chosen(chosen, options))
    head = c.mapping(data.get("hall", {}), ("hall",), "hall: {id, name, shi}") or {}
    assumptions = tuple(
        Assumption(aid, value, str(raw.get("text", "")))
        for aid, raw in (c.mapping(data.get("assumptions", {}), ("assumptions",), "named parameters") or {}).items()
        if c.mapping(raw, ("assumptions", aid), "{value, text}") is not None
        and (value := _number(c, raw.get("value"), ("assumptions", aid, "value"))) is not None)
    tang_raw = c.mapping(data.get("tang", {}), ("tang",), "{x0, y0, x1, y1}") or {}
    corners = [_number(c, tang_raw.get(k), ("tang", k)) for k in ("x0", "y0", "x1", "y1")]
    x0, y0, x1, y1 = (v if v is not None else 0.0 for v in corners)
    stairs = _stairs(c, data.get("stairs", {}), y1)
    walls = [_wall(c, raw, ("walls", n)) for n, raw in enumerate(data.get("walls", []) or []) if raw is not _NOT_HERE]
    if message := WALL_CORNERS.check("the walls have", sum(len(w.points) for w in walls if w is not None),
                                     " corners"):
        c.error(("walls",), message, "limits", key=True)
        raise InvalidInputError(c.problems)
    if None not in corners:
        _tang_size(c, x1 - x0, y1 - y0)
    outline = (Point(x0, y0), Point(x1, y0), Point(x1, y1), Point(x0, y1), Point(x0, y0))
    walls.append(Wall("堂 (its edge)", outline, Source(estimate="the 堂's measures (tang) are the hall's assumptions")))
    places = _places(c, data.get("places", {}))
    _distinct(c, places)
    statements = tuple(st for n, raw in enumerate(data.get("statements", []) or [])
                       if raw is not _NOT_HERE and (st := _statement(c, raw, ("statements", n), places)) is not None)
    things = _things(c, data.get("things", {}), places)
    _route_nodes(c, walls, stairs, things)
    if c.problems:
        raise InvalidInputError(c.problems)
    return Hall(str(path), str(head.get("id", "")), str(head.get("name", "")), bool(head.get("shi", False)),
                (Point(x0, y0), Point(x1, y1)), places, tuple(w for w in walls if w is not None), stairs, assumptions,
                statements, things, chosen)


def _hall_readings(c: Checker, raw: Any, declared: Mapping[str, Reading] | None) -> dict[str, tuple[str, ...]]:
    """``readings: {fang: {options: [dongfang-xishi, zuoyou], default: dongfang-xishi, note: why}}``: where the
    commentators differ on the hall itself; each reading's options, its default first."""
    out = {}
    for rid, r in (c.mapping(raw, ("readings",), "reading id → {options, default, note}") or {}).items():
        path: PathKey = ("readings", rid)
        if (r := c.mapping(r, path, "{options, default, note}")) is None:
            continue
        c.keys(r, path, ("options", "default", "note"))
        options, default = r.get("options"), r.get("default")
        if not isinstance(options, list) or len(options) < 2 or not all(isinstance(o, str) for o in options):
            c.error(path + ("options",), f"expected the reading's options, two or more, got {options!r}", "schema")
            continue
        if default not in options:
            c.error(path + ("default",), f"expected one of {', '.join(options)}, got {default!r}", "schema")
            continue
        if declared is not None:
            _declared(c, path, rid, options, str(default), declared)
        out[rid] = (str(default), *(o for o in options if o != default))
    return out


def _declared(c: Checker, path: PathKey, rid: str, options: list[str], default: str,
              declared: Mapping[str, Reading]) -> None:
    """A reading of the hall is one of the cue sheet's (``--reading ID=OPTION`` chooses it), the same options, its
    default the sheet's chosen."""
    if rid not in declared:
        c.error(path, f"the cue sheet has no reading {rid!r}{did_you_mean(rid, list(declared), n=1)}: declare it there "
                "(its name, options and chosen; docs/cuesheet.md)", "reference", key=True)
    elif set(declared[rid].options) != set(options):
        c.error(path + ("options",), f"the cue sheet's reading {rid} has the options "
                f"{', '.join(declared[rid].options)}", "reference")
    elif declared[rid].chosen != default:
        c.error(path + ("default",), f"the cue sheet chooses {declared[rid].chosen} for reading {rid}", "reference")


_UNDER = ("walls", "places", "things", "statements")
_NOT_HERE = object()  # a wall or statement of another option: left in its list, so that each keeps its line


@dataclass(frozen=True, slots=True)
class _Chosen:
    """The option chosen of each reading of the hall, and the options each has."""

    option: Mapping[str, str]
    options: Mapping[str, tuple[str, ...]]


def _under(c: Checker, data: dict[str, Any], chosen: _Chosen) -> dict[str, Any]:
    """The hall's data under the *chosen* readings: an item with ``reading: ID=OPTION`` only under that option, a
    place's ``readings: {ID=OPTION: {at: …}}`` its keys under that option (``at`` in place of ``of``, or back)."""
    out = dict(data)
    for part in _UNDER:
        items = data.get(part)
        if isinstance(items, list):
            out[part] = [_NOT_HERE if (kept := _item(c, item, (part, n), chosen)) is None else kept
                         for n, item in enumerate(items)]
        elif isinstance(items, dict):
            out[part] = {key: kept for key, item in items.items()
                         if (kept := _item(c, item, (part, key), chosen)) is not None}
    return out


def _item(c: Checker, raw: Any, path: PathKey, chosen: _Chosen) -> Any:
    """One item under the *chosen* readings (None: not under them)."""
    if not isinstance(raw, dict) or not ("reading" in raw or "readings" in raw):
        return raw
    if "reading" in raw and not _holds(c, raw["reading"], path + ("reading",), chosen):
        return None
    item = {k: v for k, v in raw.items() if k not in ("reading", "readings")}
    for which, keys in (c.mapping(raw.get("readings", {}), path + ("readings",), "ID=OPTION → its keys") or {}).items():
        if _holds(c, which, path + ("readings", which), chosen) and \
                (keys := c.mapping(keys, path + ("readings", which), "the keys under that option")) is not None:
            if "at" in keys or "of" in keys:
                item = {k: v for k, v in item.items() if k not in ("at", "of", "dir", "dist")}
            item |= keys
    return item


def _holds(c: Checker, which: Any, path: PathKey, chosen: _Chosen) -> bool:
    """Whether ``ID=OPTION`` is chosen; an error for a reading or option the hall does not declare."""
    rid, _, option = str(which).partition("=")
    if option not in chosen.options.get(rid, ()):
        known = [f"{r}={o}" for r, opts in chosen.options.items() for o in opts]
        c.error(path, f"expected ID=OPTION of a reading the hall declares (readings:), got {which!r}"
                f"{did_you_mean(str(which), known, n=1)}", "reference")
        return False
    return chosen.option[rid] == option


def _tang_size(c: Checker, width: float, depth: float) -> None:
    """The 堂 within plausible sizes (``limits.TANG_WIDTH``, ``TANG_DEPTH``): x0 west of x1, y0 north of y1."""
    for key, size, (least, most), what in (("x1", width, TANG_WIDTH, "wide (x1 − x0)"),
                                           ("y1", depth, TANG_DEPTH, "deep (y1 − y0)")):
        if not least <= size <= most:
            c.error(("tang", key), f"a 堂 {size:g} 步 {what}: expected {least} to {most} 步, x0 west of x1 and y0 "
                    "north of y1 (docs/limits.md)", "limits")


def _route_nodes(c: Checker, walls: list[Wall | None], stairs: tuple[Stair, ...], things: dict[str, Thing]) -> None:
    """The points a route may turn at (``limits.ROUTE_NODES``), an error at the kind that brings the most."""
    counts = {"walls": 4 * sum(len(w.points) for w in walls if w is not None), "stairs": 2 * len(stairs),
              "things": 4 * len(things)}
    total = sum(counts.values())
    if message := ROUTE_NODES.check("the hall has", total, f" points a route may turn at ({counts['walls']} at wall "
                                    f"corners, {counts['stairs']} at stairs, {counts['things']} round set pieces)"):
        c.error((max(counts, key=lambda k: counts[k]),), message, "limits", key=True)


def _things(c: Checker, raw: Any, places: dict[str, Place]) -> dict[str, Thing]:
    """``things: {dahou: {name: 大侯, at: PLACE, size: [w, d], open, cite|estimate}}``: set pieces no walk goes
    through (``open: true``: one goes to its place, into the 次, up to the 楅)."""
    out = {}
    for tid, t in (c.mapping(raw, ("things",), "things by id") or {}).items():
        path: PathKey = ("things", tid)
        if (t := c.mapping(t, path, "{name, at, size}")) is None:
            continue
        c.keys(t, path, ("name", "at", "size", "open", "cite", "estimate", "note"))
        if t.get("at") not in places:
            c.error(path + ("at",), f"unknown place {t.get('at')!r}{did_you_mean(str(t.get('at')), list(places), n=1)}",
                    "reference")
            continue
        size = _pair(c, t.get("size"), path + ("size",))
        if size is not None and (size.x < 0 or size.y < 0):
            c.error(path + ("size",), f"expected its size in 步 east–west and north–south, got {t.get('size')!r}",
                    "schema")
        if size is not None:
            out[tid] = Thing(tid, str(t.get("name", tid)), places[t["at"]].point, (abs(size.x), abs(size.y)),
                             _source(c, t, path), c.doc.where(path, key=True)[0], t.get("open") is True)
    return out


def _distinct(c: Checker, places: dict[str, Place]) -> None:
    """Every named place a point of its own: 于中西 is west of the 中, not on it."""
    seen: dict[tuple[float, float], str] = {}
    for pid, place in places.items():
        key = (round(place.point.x, 2), round(place.point.y, 2))
        if key in seen:
            c.error(("places", pid), f"{place.name} is on the point of {places[seen[key]].name} "
                    f"({place.point.x:g}, {place.point.y:g}): distinct things are distinct points", "staging",
                    key=True)
        seen.setdefault(key, pid)


_KINDS = {"distance": ("a", "b", "steps"), "direction": ("a", "b", "dir"), "align": ("a", "b", "axis"),
          "file": ("a", "file"), "facing": ("a", "facing")}


def _statement(c: Checker, raw: Any, path: PathKey, places: dict[str, Place]) -> Statement | None:
    if (raw := c.mapping(raw, path, "{kind, a, …, cite}")) is None:
        return None
    kind = raw.get("kind")
    if kind not in _KINDS:
        c.error(path + ("kind",), f"unknown kind {kind!r}: expected one of {', '.join(_KINDS)}", "schema")
        return None
    c.keys(raw, path, (*_KINDS[kind], "kind", "along", "cite", "estimate", "note"))
    for key in _KINDS[kind]:
        if key not in raw:
            c.error(path, f"a {kind} statement needs {key!r}", "schema")
            return None
    for key in ("a", "b"):
        if key in raw and raw[key] not in places:
            c.error(path + (key,), f"unknown place {raw[key]!r}{did_you_mean(str(raw[key]), list(places), n=1)}",
                    "reference")
            return None
    value = str(raw.get("dir") or raw.get("file") or raw.get("facing") or raw.get("axis") or "")
    steps = _number(c, raw["steps"], path + ("steps",)) if kind == "distance" else 0.0
    line, col = c.doc.where(path)
    return Statement(kind, raw["a"], str(raw.get("b", "")), value, steps or 0.0, str(raw.get("along", "")),
                     _source(c, raw, path), line, col)


def _stairs(c: Checker, raw: Any, edge: float) -> tuple[Stair, ...]:
    out = []
    for sid, s in (c.mapping(raw, ("stairs",), "stairs by id") or {}).items():
        path = ("stairs", sid)
        if (s := c.mapping(s, path, "{name, x, run}")) is None:
            continue
        c.keys(s, path, ("name", "x", "run", "whose", "cite", "estimate"))
        x, run = _number(c, s.get("x"), path + ("x",)), _number(c, s.get("run"), path + ("run",))
        whose = _whose(c, s["whose"], path + ("whose",)) if "whose" in s else None
        if x is not None and run is not None:
            out.append(Stair(sid, str(s.get("name", sid)), Point(x, edge - _EPS), Point(x, edge + run),
                             _source(c, s, path), whose))
    _owners_once(c, out)
    return tuple(out)


def _whose(c: Checker, raw: Any, path: PathKey) -> Whose | None:
    """``whose: {of: [主人], rest: false, cite: …}``: the ranks whose stair it is, each a name the text uses."""
    if (raw := c.mapping(raw, path, "{of: [RANK, …], rest, cite}")) is None:
        return None
    c.keys(raw, path, ("of", "rest", "cite", "estimate"))
    of, rest = raw.get("of", []), raw.get("rest", False)
    if not isinstance(of, list) or not all(isinstance(r, str) and r.strip() for r in of):
        c.error(path + ("of",), f"expected a list of the ranks whose stair it is (主人, 賓), got {of!r}", "schema")
        of = []
    if not isinstance(rest, bool):
        c.error(path + ("rest",), f"expected true or false, got {rest!r}", "schema")
        rest = False
    if not of and not rest:
        c.error(path, "whose stair? give of: [RANK, …], or rest: true for everyone no other stair names", "schema")
    return Whose(tuple(of), rest, _source(c, raw, path))


def _owners_once(c: Checker, stairs: list[Stair]) -> None:
    """A rank on one stair, and one stair for the rest."""
    seen: dict[str, str] = {}
    rest = ""
    for stair in stairs:
        if stair.whose is None:
            continue
        for rank in stair.whose.of:
            if rank in seen:
                c.error(("stairs", stair.id, "whose", "of"), f"{rank} is already given the {seen[rank]}", "staging")
            seen.setdefault(rank, stair.name)
        if stair.whose.rest and rest:
            c.error(("stairs", stair.id, "whose", "rest"), f"the rest already go by the {rest}", "staging")
        rest = rest or (stair.name if stair.whose.rest else "")


def _wall(c: Checker, raw: Any, path: PathKey) -> Wall | None:
    if (raw := c.mapping(raw, path, "{name, points}")) is None:
        return None
    c.keys(raw, path, ("name", "points", "cite", "estimate"))
    points = [_pair(c, p, path + ("points", n)) for n, p in enumerate(raw.get("points", []) or [])]
    if len(points) < 2:
        c.error(path + ("points",), "a wall needs at least two points", "schema")
        return None
    return Wall(str(raw.get("name", "")), tuple(p for p in points if p is not None), _source(c, raw, path))


_PLACE_KEYS = ("name", "at", "of", "dir", "dist", "facing", "file", "cite", "estimate", "note")


def _places(c: Checker, raw: Any) -> dict[str, Place]:
    """Every place, those given relative to another (``of``) once that one is known, in any order: one pass over
    the places in the order their ``of`` allows (linear in their number), a chain at most ``PLACE_CHAIN`` long."""
    todo = dict(c.mapping(raw, ("places",), "places by id") or {})
    if message := PLACES.check("the hall has", len(todo), " places"):
        c.error(("places",), message, "limits", key=True)
        raise InvalidInputError(c.problems)
    waiting: dict[str, list[str]] = {}
    for pid, p in todo.items():
        if isinstance(p, dict) and "of" in p:
            waiting.setdefault(str(p["of"]), []).append(pid)
    stack = [(pid, 1) for pid, p in todo.items() if not (isinstance(p, dict) and "of" in p)]
    out: dict[str, Place] = {}
    failed: list[str] = []
    while stack:
        pid, depth = stack.pop()
        if depth > PLACE_CHAIN.value:
            c.error(("places", pid, "of"), f"{PLACE_CHAIN.check('a chain of', depth, ' places')}", "limits")
            failed.append(pid)
        elif (place := _place(c, pid, todo[pid], out)) is None:
            failed.append(pid)
        else:
            out[pid] = place
            stack += [(nxt, depth + 1) for nxt in waiting.get(pid, ())]
    while failed:  # what hangs from a place in error is not reported again
        failed += waiting.pop(failed.pop(), [])
    for pid in (pid for of, pids in waiting.items() if of not in out for pid in pids):
        c.error(("places", pid, "of"), f"place {of_name(todo[pid])!r} is unknown or in a cycle of 'of'"
                f"{did_you_mean(of_name(todo[pid]), list(todo), n=1)}", "reference")
    return {pid: out[pid] for pid in todo if pid in out}  # in the file's order


def of_name(raw: Any) -> str:
    """The place a relative place's ``of`` names, as text."""
    return str(raw.get("of")) if isinstance(raw, dict) else ""


def _place(c: Checker, pid: str, raw: Any, known: dict[str, Place]) -> Place | None:
    path: PathKey = ("places", pid)
    if (raw := c.mapping(raw, path, "{name, at} or {name, of, dir, dist}")) is None:
        return None
    c.keys(raw, path, _PLACE_KEYS)
    point = None
    if "at" in raw:
        point = _pair(c, raw["at"], path + ("at",))
    elif "of" in raw:
        direction = _facing(c, raw.get("dir"), path + ("dir",))
        dist = _number(c, raw.get("dist"), path + ("dist",))
        if direction is not None and dist is not None:
            dx, dy = direction.vector
            point = known[raw["of"]].point.shifted(dx * dist, dy * dist)
    else:
        c.error(path, "a place needs at: [x, y] or of: PLACE with dir and dist", "schema")
    if point is None:
        return None
    return Place(pid, str(raw.get("name", pid)), point, _source(c, raw, path), _facing(c, raw.get("facing"),
                 path + ("facing",)), _head(c, raw.get("file"), path + ("file",)), c.doc.where(path, key=True)[0])


# --- the blocking --------------------------------------------------------------------------------------------------


def shipped_blocking(rite: str) -> Path | None:
    """The blocking file shipped for *rite* (``blocking/RITE.yaml``), or None."""
    from yuesheng.music.repertoire import data_dir

    path = data_dir("blocking") / f"{rite}.yaml"
    return path if path.is_file() else None


def load_blocking(path: str | Path, sheet: CueSheet, readings: Mapping[str, str] | None = None) -> Blocking:
    """The blocking in the file at *path*, for the rite of *sheet*; its hall is read from the file it names (beside
    it), drawn under *readings* (else the sheet's chosen). Every performer, place and cue is checked against the sheet
    and the hall; InvalidInputError lists all."""
    doc = load(path, BLOCKING_FORMAT)
    c, data = _checked(doc, BLOCKING_FORMAT)
    c.keys(data, (), ("format", "rite", "hall", "same", "absent", "start", "cues", "plates"))
    if data.get("rite") != sheet.rite_id:
        c.error(("rite",), f"rite {data.get('rite')!r}, but the cue sheet is {sheet.rite_id!r}", "reference")
    chosen = {r.id: r.chosen for r in sheet.readings.values()} | dict(readings or {})
    hall = load_hall(_hall_path(c, Path(path), data.get("hall")), chosen, sheet.readings)
    same = _same(c, data.get("same", {}), sheet)
    absent = _thing_ids(c, data.get("absent", []), ("absent",), hall)
    start = tuple(m for n, raw in enumerate(data.get("start", []) or [])
                  if (m := _move(c, raw, ("start", n), sheet, hall)) is not None)
    cues: dict[str, CueBlocking] = {}
    ids = {cue.id for cue in sheet.cues}
    for cid, raw in (c.mapping(data.get("cues", {}), ("cues",), "cue id → {moves, gestures}") or {}).items():
        at: PathKey = ("cues", cid)
        if cid not in ids:
            c.error(at, f"no cue {cid!r} in {sheet.file}{did_you_mean(cid, sorted(ids), n=1)}", "reference",
                    key=True)
            continue
        if (raw := c.mapping(raw, at, "{moves, gestures}")) is None:
            continue
        c.keys(raw, at, ("moves", "gestures", "keep", "set", "clear", "turns", "note"))
        keep = raw.get("keep", "")
        if not isinstance(keep, str) or ("keep" in raw and not keep.strip()):
            c.error(at + ("keep",), "expected why the cue sheet's estimate is kept, e.g. keep: the 衆賓 drink in turn",
                    "schema")
        moves = tuple(m for n, m_raw in enumerate(raw.get("moves", []) or [])
                      if (m := _move(c, m_raw, at + ("moves", n), sheet, hall)) is not None)
        cues[cid] = CueBlocking(cid, moves, _gestures(c, raw.get("gestures", []) or [], at), doc.where(at, key=True)[0],
                                str(keep or ""), _thing_ids(c, raw.get("set", []), at + ("set",), hall),
                                _thing_ids(c, raw.get("clear", []), at + ("clear",), hall),
                                _turns(c, raw.get("turns"), at, sheet))
    plates = _plates(c, data.get("plates", []), sheet)
    if c.problems:
        raise InvalidInputError(c.problems)
    return Blocking(str(path), sheet.rite_id, hall, start, cues, same, frozenset(absent), plates)


def _plates(c: Checker, raw: Any, sheet: CueSheet) -> tuple[str, ...]:
    """``plates: [gong-sheng, shang-ou-she]``: the cues whose moments the plates show (a stage's tableau; two or
    more of one stage split its plate), in the sheet's order."""
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        c.error(("plates",), "expected a list of cue ids, e.g. [gong-sheng, shang-ou-she]", "schema")
        return ()
    order = {cue.id: n for n, cue in enumerate(sheet.cues)}
    for n, cid in enumerate(raw):
        if cid not in order:
            c.error(("plates", n), f"no cue {cid!r} in {sheet.file}{did_you_mean(cid, list(order), n=1)}", "reference")
        elif n and raw[n - 1] in order and order[raw[n - 1]] >= order[cid]:
            c.error(("plates", n), f"{cid} is not after {raw[n - 1]}: the plates go in the sheet's order", "schema")
    return tuple(raw)


def _hall_path(c: Checker, blocking: Path, name: Any) -> Path:
    """The hall file the blocking names (``paths.hall_named``), else an error at its ``hall:``."""
    found = hall_named(blocking, name)
    if isinstance(found, str):
        c.error(("hall",), found, "schema")
        raise InvalidInputError(c.problems)
    return found


def _thing_ids(c: Checker, raw: Any, path: PathKey, hall: Hall) -> tuple[str, ...]:
    """A list of the hall's things (``absent``, a cue's ``set`` and ``clear``)."""
    if not isinstance(raw, list) or not all(isinstance(t, str) for t in raw):
        c.error(path, "expected a list of the hall's things, e.g. [fu, zhong]", "schema")
        return ()
    for n, tid in enumerate(raw):
        if tid not in hall.things:
            c.error(path + (n,), f"unknown thing {tid!r}{did_you_mean(tid, list(hall.things), n=1)}", "reference")
    return tuple(raw)


def _gestures(c: Checker, raw: Any, at: PathKey) -> tuple[str, ...]:
    """A cue's formulas, each a name of the table (``data/staging.json``)."""
    from yuesheng.datafiles import data_table

    if not isinstance(raw, list) or not all(isinstance(g, str) for g in raw):
        c.error(at + ("gestures",), "expected a list of formulas, e.g. [再拜, 揖]", "schema")
        return ()
    table = data_table("staging")["gestures"]
    for n, name in enumerate(raw):
        if name not in table:
            c.error(at + ("gestures", n), f"unknown formula {name!r}{did_you_mean(name, list(table), n=1)} "
                    "(the table: yuesheng/data/staging.json)", "reference")
    return tuple(raw)


def _turns(c: Checker, raw: Any, at: PathKey, sheet: CueSheet) -> Turns | None:
    """A cue's ``turns: {who: GROUP, gestures: [盥, 洗], cite: {page, quote}}``: formulas the group makes in turn."""
    if raw is None:
        return None
    at = at + ("turns",)
    if (raw := c.mapping(raw, at, "{who, gestures, cite}")) is None:
        return None
    c.keys(raw, at, ("who", "gestures", "cite", "estimate", "note"))
    who = raw.get("who")
    if not isinstance(who, str) or who not in sheet.performers or sheet.performers[who].count < 2:
        c.error(at + ("who",), f"expected a group of the cue sheet (a performer with a count of 2 or more), got "
                f"{who!r}", "reference")
        return None
    gestures = _gestures(c, raw.get("gestures", []), at)
    if not gestures:
        c.error(at + ("gestures",), "expected the formulas made in turn, e.g. [盥, 洗]", "schema")
    return Turns(who, gestures, _source(c, raw, at))


def _same(c: Checker, raw: Any, sheet: CueSheet) -> dict[str, str]:
    """``same: {sima: xiang}``: one person under two ids (the 司馬 is the 相 in another office)."""
    out = {}
    for alias, person in (c.mapping(raw, ("same",), "id → the id of the same person") or {}).items():
        for n, name in enumerate((alias, person)):
            if not isinstance(name, str) or not _known(name, sheet):
                c.error(("same", alias), f"unknown performer {name!r}", "reference", key=n == 0)
        out[alias] = str(person)
    return out


def _known(person: str, sheet: CueSheet) -> bool:
    """A performer id, or some members of a group: ``zhongbin#2`` or ``zhongbin#4-8`` (within its count)."""
    base, sep, part = person.partition("#")
    if base not in sheet.performers:
        return False
    if not sep:
        return True
    first, _, last = part.partition("-")
    count = sheet.performers[base].count
    return first.isdigit() and (not last or last.isdigit()) and 1 <= int(first) <= int(last or first) <= count


_MOVE_KEYS = ("who", "to", "facing", "via", "file", "spacing", "run", "first", "offset", "cite", "estimate", "note")


def _move(c: Checker, raw: Any, path: PathKey, sheet: CueSheet, hall: Hall) -> Move | None:
    if (raw := c.mapping(raw, path, "{who, to, facing, cite}")) is None:
        return None
    c.keys(raw, path, _MOVE_KEYS)
    who = raw.get("who")
    people = [who] if isinstance(who, str) else who if isinstance(who, list) else []
    if not people or not all(isinstance(p, str) for p in people):
        c.error(path + ("who",), f"expected a performer id or a list of them, got {who!r}", "schema")
        return None
    for n, person in enumerate(people):
        if not _known(person, sheet):
            where = path + ("who",) + ((n,) if isinstance(who, list) else ())
            c.error(where, f"unknown performer {person!r}{did_you_mean(person, list(sheet.performers), n=1)}",
                    "reference")
    via = raw.get("via", []) or []
    if not isinstance(via, list):
        c.error(path + ("via",), f"expected a list of places the walk passes, got {via!r}", "schema")
        via = []
    if message := VIA.check("the walk passes", len(via), " places"):
        c.error(path + ("via",), message, "limits")
        return None
    places = [raw.get("to")] + list(via)
    flights = {s.id for s in hall.stairs}
    for n, place in enumerate(places):
        if place not in hall.places and (n == 0 or place not in flights):
            where = path + (("to",) if n == 0 else ("via", n - 1))
            c.error(where, f"unknown place {place!r}{did_you_mean(str(place), list(hall.places), n=1)}", "reference")
    offset = _pair(c, raw["offset"], path + ("offset",)) if "offset" in raw else Point(0, 0)
    spacing = _number(c, raw.get("spacing", 1), path + ("spacing",))
    if spacing is not None and spacing <= 0:
        c.error(path + ("spacing",), f"expected the 步 between members of a file, more than 0, got {spacing:g}",
                "schema")
    line, col = c.doc.where(path)
    return Move(tuple(people), str(raw.get("to")), _facing(c, raw.get("facing"), path + ("facing",)),
                _source(c, raw, path), tuple(str(v) for v in via),
                _head(c, raw.get("file"), path + ("file",)), spacing or 1.0, raw.get("run") is True,
                (offset.x, offset.y) if offset else (0.0, 0.0), line, col, raw.get("first") is True)
