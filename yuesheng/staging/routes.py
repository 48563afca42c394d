"""Routes through the hall: the shortest walk from one point to another that crosses no wall, leaves or reaches the
堂 only by a stair the walker may take, keeps ``CLEAR`` 步 from every set piece standing (``Thing``: a 侯 with its 个,
a 乏, an instrument of the 縣, the 次, the 楅, the 中), and passes through the places a move names (``via``: 由楹內,
出于司馬之南).

A shortest walk among walls turns only at their ends and corners, so the graph (plain dicts, node → neighbour →
edge, its nodes (x, y) tuples) has just those — points just off each end and corner of a wall, and just off each
corner of a set piece's footprint grown by ``CLEAR`` (in the graph it is a wall) — and the stairs' tops and feet;
two nodes are joined when they see each other: the segment between them meets no wall (touching counts: no slipping
through a corner). A stair is an edge of its own, from its top to its foot, taken only by those whose stair it is
(``stairs``: rank, or the stair the text names). A walk's two ends join the graph for its search only; an end within
``CLEAR`` of a set piece (its player, the one who sets it) may come as near as that, but never through it. The
search is networkx's bidirectional Dijkstra, written out step for step (``_shortest``; networkx found the same
routes, ties broken alike, at twice the cost). A wall test looks only at the walls and set pieces whose bounding box
meets the walk's, and in them at the segments whose own box does.

People standing still are a soft cost (``people``): a route that passes within ``CLEAR`` of one is searched again
around him (and around whoever the new route passes), and kept only if a way round exists; a person within ``CLEAR``
of the walk's own stops cannot be avoided and is not tried.

A route, once found, is kept on disk (``routecache``: keyed by the hall's walls and stairs and this code, each walk
by its stops and a digest of what it kept clear of), so a process that finds every walk of a rite there builds no
graph.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable
from functools import cache
from heapq import heappop, heappush
from itertools import count
from typing import Any

from yuesheng.errors import NoRouteError
from yuesheng.staging import routecache
from yuesheng.staging.model import Hall, Point

_EPS = 1e-9
_AROUND = 0.05  # 步: a walk turns this far off the end or corner of a wall, never on it
CLEAR = 0.3  # 步: how far a walk keeps from a set piece, and (where it can) from someone standing
_TRIES = 4  # detours round people standing, for each leg of a route

Box = tuple[float, float, float, float]  # a footprint: x0, y0, x1, y1
_Segment = tuple[str, float, float, float, float, float, float, float, float]  # name, a, b, bounding box
_Group = tuple[float, float, float, float, tuple[_Segment, ...]]  # segments (a wall's, a box's) and their bounding box


def _group(segments: tuple[_Segment, ...]) -> tuple[_Group, ...]:
    """*segments* as one group, tested only where the segment tested meets their bounding box (none: no group)."""
    if not segments:
        return ()
    return ((min(s[5] for s in segments), max(s[6] for s in segments), min(s[7] for s in segments),
             max(s[8] for s in segments), segments),)


def _box_segments(name: str, box: Box) -> tuple[_Segment, ...]:
    x0, y0, x1, y1 = box
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0))
    return tuple((name, ax, ay, bx, by, min(ax, bx), max(ax, bx), min(ay, by), max(ay, by))
                 for (ax, ay), (bx, by) in zip(corners, corners[1:], strict=False))


def grown(box: Box, margin: float = CLEAR) -> Box:
    return box[0] - margin, box[1] - margin, box[2] + margin, box[3] + margin


def _inside(p: Point, box: Box) -> bool:
    return box[0] < p.x < box[2] and box[1] < p.y < box[3]


def _on(p: Point, box: Box) -> bool:
    return box[0] <= p.x <= box[2] and box[1] <= p.y <= box[3]


@cache
def _segments(hall: Hall) -> tuple[_Group, ...]:
    """Every wall segment of *hall* (its wall's name, its ends and its bounding box: x0, x1, y0, y1), a group for each
    wall."""
    return tuple(group for wall in hall.walls for group in _group(tuple(
        (wall.name, a.x, a.y, b.x, b.y, min(a.x, b.x), max(a.x, b.x), min(a.y, b.y), max(a.y, b.y))
        for a, b in wall.segments())))


@cache
def _fence(hall: Hall, things: tuple[Box, ...]) -> tuple[_Group, ...]:
    """The walls and every set piece grown by ``CLEAR``: what the graph's edges may not meet."""
    return _segments(hall) + tuple(g for _, _, _, grown_segments in _zones(things) for g in grown_segments)


@cache
def _zones(things: tuple[Box, ...]) -> tuple[tuple[Box, Box, tuple[_Group, ...], tuple[_Group, ...]], ...]:
    """Each of *things*: its footprint, the footprint grown by ``CLEAR``, and the segments of each."""
    return tuple((box, grown(box), _group(_box_segments("a set piece", box)),
                  _group(_box_segments("a set piece", grown(box)))) for box in things)


def _fence_at(hall: Hall, things: tuple[Box, ...], ends: tuple[Point, ...]) -> tuple[_Group, ...]:
    """The fence for a segment from *ends*: a set piece whose reach holds an end is only itself to that segment
    (its player comes up to it), and nothing where the end is on it (the one who sets it)."""
    zones = _zones(things)
    if not any(_inside(e, reach) for _, reach, _, _ in zones for e in ends):
        return _fence(hall, things)
    out = list(_segments(hall))
    for box, reach, bare, grown_segments in zones:
        if not any(_on(e, box) for e in ends):
            out += bare if any(_inside(e, reach) for e in ends) else grown_segments
    return tuple(out)


def _meets(px: float, py: float, qx: float, qy: float, ax: float, ay: float, bx: float, by: float) -> bool:
    """Whether segment pq meets segment ab at all: crossing it, touching it or running along it."""
    d1 = (bx - ax) * (py - ay) - (by - ay) * (px - ax)
    d2 = (bx - ax) * (qy - ay) - (by - ay) * (qx - ax)
    d3 = (qx - px) * (ay - py) - (qy - py) * (ax - px)
    d4 = (qx - px) * (by - py) - (qy - py) * (bx - px)
    if ((d1 > _EPS and d2 < -_EPS) or (d1 < -_EPS and d2 > _EPS)) and \
            ((d3 > _EPS and d4 < -_EPS) or (d3 < -_EPS and d4 > _EPS)):
        return True
    return any(abs(d) <= _EPS and min(sx, tx) - _EPS <= cx <= max(sx, tx) + _EPS
               and min(sy, ty) - _EPS <= cy <= max(sy, ty) + _EPS
               for d, sx, sy, tx, ty, cx, cy in ((d1, ax, ay, bx, by, px, py), (d2, ax, ay, bx, by, qx, qy),
                                                 (d3, px, py, qx, qy, ax, ay), (d4, px, py, qx, qy, bx, by)))


def crosses(p: Point, q: Point, a: Point, b: Point) -> bool:
    """Whether segment pq meets segment ab at all: crossing it, touching it or running along it. A walk may not even
    touch a wall: one that could slip through the corner where two walls meet."""
    return _meets(p.x, p.y, q.x, q.y, a.x, a.y, b.x, b.y)


def _first(groups: Iterable[_Group], p: Point, q: Point) -> str:
    return _first_xy(groups, p.x, p.y, q.x, q.y)


def _first_xy(groups: Iterable[_Group], px: float, py: float, qx: float, qy: float) -> str:
    """The name of the first segment of *groups* the segment from (px, py) to (qx, qy) meets, or ''. A group whose
    bounding box it misses is passed over whole (each of its segments would be)."""
    x0, x1 = (px - _EPS, qx + _EPS) if px <= qx else (qx - _EPS, px + _EPS)
    y0, y1 = (py - _EPS, qy + _EPS) if py <= qy else (qy - _EPS, py + _EPS)
    dx, dy, eps = qx - px, qy - py, _EPS
    for gx0, gx1, gy0, gy1, segments in groups:
        if gx1 < x0 or gx0 > x1 or gy1 < y0 or gy0 > y1:
            continue
        for name, ax, ay, bx, by, sx0, sx1, sy0, sy1 in segments:
            if sx1 < x0 or sx0 > x1 or sy1 < y0 or sy0 > y1:
                continue
            ex, ey = bx - ax, by - ay  # _meets inline: its figures, in its order (the same floats)
            d1 = ex * (py - ay) - ey * (px - ax)
            d2 = ex * (qy - ay) - ey * (qx - ax)
            d3 = dx * (ay - py) - dy * (ax - px)
            d4 = dx * (by - py) - dy * (bx - px)
            if ((d1 > eps and d2 < -eps) or (d1 < -eps and d2 > eps)) and \
                    ((d3 > eps and d4 < -eps) or (d3 < -eps and d4 > eps)):
                return name
            if (-eps <= d1 <= eps or -eps <= d2 <= eps or -eps <= d3 <= eps or -eps <= d4 <= eps) and \
                    _meets(px, py, qx, qy, ax, ay, bx, by):  # touching, or along it: rare
                return name
    return ""


def blocked(hall: Hall, p: Point, q: Point, things: tuple[Box, ...] = ()) -> str:
    """The name of the first wall (or 'a set piece', kept ``CLEAR`` of) the segment pq meets, or ''."""
    return _first(_fence_at(hall, things, (p, q)) if things else _segments(hall), p, q)


def distance_to_box(p: Point, q: Point, box: Box) -> float:
    """The least distance between segment pq and the box (0 where they meet)."""
    if _first(_group(_box_segments("box", box)), p, q) or _inside(p, box):
        return 0.0
    x0, y0, x1, y1 = box
    corners = (Point(x0, y0), Point(x1, y0), Point(x1, y1), Point(x0, y1))
    edges = list(zip(corners, corners[1:] + corners[:1], strict=True))
    return min(min(_to_segment(c, p, q) for c in corners), min(_to_segment(e, a, b) for e in (p, q) for a, b in edges))


def _to_segment(c: Point, a: Point, b: Point) -> float:
    """The distance from *c* to segment ab."""
    dx, dy = b.x - a.x, b.y - a.y
    span = dx * dx + dy * dy
    t = 0.0 if span == 0 else max(0.0, min(1.0, ((c.x - a.x) * dx + (c.y - a.y) * dy) / span))
    return c.distance(Point(a.x + t * dx, a.y + t * dy))


def _corners(box: Box) -> list[Point]:
    """The points just off the corners of *box* grown by ``CLEAR``, where a walk round it turns."""
    x0, y0, x1, y1 = grown(box, CLEAR + _AROUND)
    return [Point(round(x, 4), round(y, 4)) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]


Node = tuple[float, float]  # a point of the graph: a tuple hashes in C, a frozen Point in Python
Edge = list[Any]  # [length, the stair's id or ''], one list for both ways, as networkx keeps an edge's data
Graph = dict[Node, dict[Node, Edge]]  # node → neighbour → edge, in the order they were added


def _join(graph: Graph, a: Node, b: Node, weight: float, stair: str | None = None) -> None:
    """Add the edge ab (and either end not yet in *graph*), or set the length (and the stair, if given) of the one
    there: networkx's ``add_edge`` and ``add_weighted_edges_from``, whose order of nodes and neighbours the search
    follows."""
    edges_a = graph.setdefault(a, {})
    edges_b = graph.setdefault(b, {})
    edge = edges_a.get(b)
    if edge is None:
        edge = edges_a[b] = edges_b[a] = [weight, stair or ""]
    else:
        edge[0] = weight
        if stair is not None:
            edge[1] = stair


def _drop(graph: Graph, nodes: Iterable[Node]) -> None:
    """Take *nodes* out of *graph*, with their edges (a node not there, or named twice, is passed over)."""
    for node in nodes:
        edges = graph.pop(node, None)
        for other in edges or ():
            del graph[other][node]


def _xy(p: Point) -> Node:
    return p.x, p.y


def _apart(a: Node, b: Node) -> float:
    return math.hypot(a[0] - b[0], a[1] - b[1])  # Point.distance


@cache
def _graph(hall: Hall, things: tuple[Box, ...] = ()) -> Graph:
    """The hall's visibility graph round *things*: the nodes in order of x then y, each pair that sees each other
    joined, then the stairs."""
    fence = _fence(hall, things)
    nodes = {s.top for s in hall.stairs} | {s.foot for s in hall.stairs}
    nodes |= {pt.shifted(dx, dy) for w in hall.walls for pt in w.points
              for dx, dy in ((_AROUND, _AROUND), (_AROUND, -_AROUND), (-_AROUND, _AROUND), (-_AROUND, -_AROUND))}
    nodes |= {c for box in things for c in _corners(box)}
    nodes = {n for n in nodes if not any(_inside(n, reach) for _, reach, _, _ in _zones(things))}  # never reached
    ordered = [_xy(p) for p in sorted(nodes, key=lambda p: (p.x, p.y))]
    graph: Graph = {node: {} for node in ordered}
    for i, p in enumerate(ordered):
        for q in ordered[i + 1:]:
            if not _first_xy(fence, *p, *q):
                _join(graph, p, q, _apart(p, q), "")
    for s in hall.stairs:
        _join(graph, _xy(s.top), _xy(s.foot), s.top.distance(s.foot), s.id)
    return graph


def _leg(hall: Hall, p: Point, q: Point, stairs: frozenset[str] | None, things: tuple[Box, ...],
         people: tuple[Box, ...] = ()) -> list[Point]:
    """The shortest route p → q: straight if nothing is in the way, else through the graph (each end, and the
    corners of the reach of each of *people*, joined to the nodes they see for the search, and taken out again); a
    stair only if it is one of *stairs* (None: any)."""
    if not blocked(hall, p, q, things + people):
        return [p, q]
    graph = _graph(hall, things)
    added = [end for end in dict.fromkeys((_xy(p), _xy(q))) if end not in graph]
    for end in added:
        graph.setdefault(end, {})
        for node in _seen(hall, things, end):
            _join(graph, end, node, _apart(end, node))
    around = [_xy(c) for box in people for c in _corners(box) if _xy(c) not in graph]
    for node in around:
        fence = _fence_at(hall, things + people, (Point(*node),))
        graph.setdefault(node, {})
        for other in list(graph):
            if other != node and not _first_xy(fence, *node, *other):
                _join(graph, node, other, _apart(node, other))
    try:
        path = _shortest(graph, _xy(p), _xy(q), stairs, _reach(people))
    finally:
        _drop(graph, added + around)
    if path is None:
        raise NoRouteError(f"no route from ({p.x:g}, {p.y:g}) to ({q.x:g}, {q.y:g}) in {hall.name}")
    return [Point(*node) for node in path]


def _shortest(graph: Graph, source: Node, target: Node, stairs: frozenset[str] | None,
              reach: tuple[_Group, ...]) -> list[Node] | None:
    """The shortest path source → target (None: there is none): networkx's bidirectional Dijkstra, step for step
    (the same ties broken the same way), on *graph*; an edge is its length, and is not taken where it is a stair not
    among *stairs* (None: any), or a way that meets *reach* (each in the direction of the search: networkx weighs
    the backward search's edges from their far end)."""
    if source == target:
        return [source]
    dists: tuple[dict[Node, float], dict[Node, float]] = ({}, {})
    preds: tuple[dict[Node, Node | None], dict[Node, Node | None]] = ({source: None}, {target: None})
    seen: tuple[dict[Node, float], dict[Node, float]] = ({source: 0}, {target: 0})
    fringe: tuple[list[tuple[float, int, Node]], list[tuple[float, int, Node]]] = ([(0, 0, source)], [(0, 1, target)])
    counter = count(2)
    finaldist: float | None = None
    meet: Node | None = None
    direction = 1
    while fringe[0] and fringe[1]:
        direction = 1 - direction
        dist, _, v = heappop(fringe[direction])
        if v in dists[direction]:
            continue
        dists[direction][v] = dist
        if v in dists[1 - direction]:
            return _walk(preds, meet)
        for w, edge in graph[v].items():
            if w in dists[direction]:  # settled (networkx weighs it first, to no effect: a length is never < 0)
                continue
            stair = edge[1]
            if stair:
                if stairs is not None and stair not in stairs:
                    continue
            elif reach and (_first_xy(reach, *v, *w) if direction == 0 else _first_xy(reach, *w, *v)):
                continue
            length = dist + edge[0]
            if w not in seen[direction] or length < seen[direction][w]:
                seen[direction][w] = length
                heappush(fringe[direction], (length, next(counter), w))
                preds[direction][w] = v
                if w in seen[1 - direction] and (finaldist is None or finaldist > length + seen[1 - direction][w]):
                    finaldist, meet = length + seen[1 - direction][w], w
    return None


def _walk(preds: tuple[dict[Node, Node | None], dict[Node, Node | None]], meet: Node | None) -> list[Node]:
    """The path through *meet*: back to the source by the forward search's predecessors, on to the target by the
    backward one's."""
    out: list[Node] = []
    node = meet
    while node is not None:
        out.append(node)
        node = preds[0][node]
    out.reverse()
    node = preds[1][meet] if meet is not None else None
    while node is not None:
        out.append(node)
        node = preds[1][node]
    return out


@cache
def _seen(hall: Hall, things: tuple[Box, ...], end: Node) -> tuple[Node, ...]:
    """The nodes of the graph an end sees (kept: a walk's ends are the hall's places, again and again)."""
    fence = _fence_at(hall, things, (Point(*end),))
    return tuple(node for node in _graph(hall, things) if node != end and not _first_xy(fence, *end, *node))


def _reach(people: tuple[Box, ...]) -> tuple[_Group, ...]:
    """What a way round *people* may not meet: each one's reach (tested only for the edges the search looks at)."""
    return tuple(s for _, _, _, grown_segments in _zones(people) for s in grown_segments)


@cache
def _kept(hall: Hall) -> routecache.Routes:
    """The routes of *hall* found before, by this or an earlier process."""
    return routecache.open_routes([[(a.x, a.y) for a in w.points] for w in hall.walls],
                                  [(s.top.x, s.top.y, s.foot.x, s.foot.y) for s in hall.stairs])


@cache
def _tag(stairs: frozenset[str] | None, things: tuple[Box, ...], people: tuple[Point, ...]) -> tuple[float, float]:
    """What a route kept clear of, as a last 'stop' of its key: a digest that a float holds exactly (kept: the same
    set pieces stand for many walks, and their repr is slow)."""
    text = repr((sorted(stairs) if stairs is not None else None, things, [(p.x, p.y) for p in people]))
    return float(int(hashlib.sha256(text.encode()).hexdigest()[:13], 16)), -1.0


def route(hall: Hall, start: Point, end: Point, via: tuple[Point, ...] = (), *, stairs: frozenset[str] | None = None,
          things: tuple[Box, ...] = (), people: tuple[Point, ...] = ()) -> tuple[Point, ...]:
    """The route start → via… → end, as the points where it turns, up and down only *stairs* (None: any), keeping
    ``CLEAR`` of *things* and, where a way round exists, of *people* (kept: the same walk recurs in a rite)."""
    stops = [start, *via, end]
    kept = _kept(hall)
    hard = _kept_route(kept, hall, stops, stairs, things, ())
    if not _near(hard, people, stops):
        return hard
    key = (*((p.x, p.y) for p in stops), _tag(stairs, things, people))
    if (found := kept.get(key)) is not None and \
            _sound(hall, points := tuple(Point(x, y) for x, y in found), stops, stairs, things):
        return points
    out = _around(hall, hard, stops, things, people)
    if _near(out, people, stops):
        out = _wide(hall, stops, stairs, things, people, out)
    kept.put(key, [(p.x, p.y) for p in out])
    return out


def _kept_route(kept: routecache.Routes, hall: Hall, stops: list[Point], stairs: frozenset[str] | None,
                things: tuple[Box, ...], people: tuple[Point, ...]) -> tuple[Point, ...]:
    key = (*((p.x, p.y) for p in stops), _tag(stairs, things, people))
    if (found := kept.get(key)) is not None and \
            _sound(hall, points := tuple(Point(x, y) for x, y in found), stops, stairs, things):
        return points
    out = [stops[0]]
    for p, q in zip(stops, stops[1:], strict=False):
        out += _leg(hall, p, q, stairs, things)[1:]
    kept.put(key, [(p.x, p.y) for p in out])
    return tuple(out)


def _around(hall: Hall, points: tuple[Point, ...], stops: list[Point], things: tuple[Box, ...],
            people: tuple[Point, ...]) -> tuple[Point, ...]:
    """*points* turned round the people standing in their way, one leg at a time, where a way round them (by the
    corners of their reach) crosses no wall, keeps clear of the set pieces and passes no one else; the legs that
    have none are left as they are."""
    avoid = [p for p in people if not any(p.distance(s) < CLEAR for s in stops)]
    route = list(points)
    stair_edges = _stair_edges(hall)
    for _ in range(_TRIES * len(points)):
        legs = [(i, a, b) for i, (a, b) in enumerate(zip(route, route[1:], strict=False))
                if frozenset((a, b)) not in stair_edges and _hits(a, b, avoid)]
        turned = next(((i, d) for i, a, b in legs if (d := _detour(hall, a, b, things, avoid)) is not None),
                      None)
        if turned is None:
            break
        route[turned[0] + 1:turned[0] + 1] = turned[1]
    return tuple(route)


def _wide(hall: Hall, stops: list[Point], stairs: frozenset[str] | None, things: tuple[Box, ...],
          people: tuple[Point, ...], found: tuple[Point, ...]) -> tuple[Point, ...]:
    """The whole search again, round the people *found* passes (and those the new route passes, ``_TRIES`` times):
    the way round a file or through another gap that no corner near the leg gives; else *found*."""
    avoid = [p for p in people if not any(p.distance(s) < CLEAR for s in stops)]
    passed = {p for a, b in zip(found, found[1:], strict=False) for p in _hits(a, b, avoid)}
    for _ in range(_TRIES):
        reach = tuple((p.x, p.y, p.x, p.y) for p in sorted(passed, key=lambda p: (p.x, p.y)))
        try:
            out = [stops[0]]
            for p, q in zip(stops, stops[1:], strict=False):
                out += _leg(hall, p, q, stairs, things, reach)[1:]
        except NoRouteError:
            return found
        more = {p for a, b in zip(out, out[1:], strict=False) for p in _hits(a, b, avoid)}
        if not more:
            return tuple(out)
        passed |= more
    return found


def _hits(a: Point, b: Point, people: Iterable[Point]) -> list[Point]:
    """Those of *people* within ``CLEAR`` of the segment ab."""
    x0, x1 = (a.x, b.x) if a.x <= b.x else (b.x, a.x)
    y0, y1 = (a.y, b.y) if a.y <= b.y else (b.y, a.y)
    return [p for p in people if x0 - CLEAR < p.x < x1 + CLEAR and y0 - CLEAR < p.y < y1 + CLEAR
            and _to_segment(p, a, b) < CLEAR - _EPS]


def _detour(hall: Hall, a: Point, b: Point, things: tuple[Box, ...], avoid: list[Point]) -> list[Point] | None:
    """The way a → b by one or two corners round the people the leg passes that passes fewest of them, the shortest
    of those, if it crosses no wall, keeps clear of the set pieces and passes fewer than the leg did; else None."""
    hit = _hits(a, b, avoid)
    corners = [c for p in hit for c in _corners((p.x, p.y, p.x, p.y))]
    ways = [[c] for c in corners] + [[c, d] for c in corners for d in corners if c != d]
    best: tuple[int, list[Point]] | None = None
    for way in sorted(ways, key=lambda w: length((a, *w, b))):  # the shortest of those that pass fewest
        legs = list(zip((a, *way), (*way, b), strict=True))
        passed = len({p for leg in legs for p in _hits(*leg, avoid)})
        if passed >= (best[0] if best is not None else len(hit)) or any(blocked(hall, p, q, things) for p, q in legs):
            continue
        best = (passed, way)
        if not passed:
            break
    return best[1] if best is not None else None


def _near(points: tuple[Point, ...], people: Iterable[Point], stops: list[Point]) -> bool:
    """Whether the route passes within ``CLEAR`` of one of *people* who is not within it of one of its stops (he
    cannot be avoided)."""
    return any(not any(p.distance(s) < CLEAR for s in stops) for a, b in zip(points, points[1:], strict=False)
               for p in _hits(a, b, people))


def near_way(points: tuple[Point, ...], people: Iterable[Point], margin: float = 3.0) -> tuple[Point, ...]:
    """Those of *people* within *margin* 步 of the box round the route: the ones a way round could meet (the rest
    left out, so that a walk is the same walk whoever stands far off)."""
    x0, x1 = min(p.x for p in points) - margin, max(p.x for p in points) + margin
    y0, y1 = min(p.y for p in points) - margin, max(p.y for p in points) + margin
    return tuple(p for p in people if x0 <= p.x <= x1 and y0 <= p.y <= y1)


def passes(points: tuple[Point, ...], people: Iterable[Point]) -> list[Point]:
    """Those of *people* the route passes within ``CLEAR`` of."""
    near = {p for a, b in zip(points, points[1:], strict=False) for p in _hits(a, b, people)}
    return [p for p in people if p in near]


def _sound(hall: Hall, points: tuple[Point, ...], stops: list[Point], stairs: frozenset[str] | None,
           things: tuple[Box, ...]) -> bool:
    """Whether a kept route still goes from the first stop to the last, crosses no wall but by a stair the walker may
    take, and keeps clear of the set pieces."""
    edges = _stair_edges(hall)
    return bool(points) and points[0] == stops[0] and points[-1] == stops[-1] and \
        all((s := edges.get(frozenset(pair))) is not None and (stairs is None or s in stairs)
            or not blocked(hall, *pair, things) for pair in zip(points, points[1:], strict=False))


@cache
def _stair_edges(hall: Hall) -> dict[frozenset[Point], str]:
    return {frozenset((s.top, s.foot)): s.id for s in hall.stairs}


def stairs_on(hall: Hall, points: tuple[Point, ...]) -> int:
    """How many stairs the route climbs or descends."""
    return len(flights(hall, points))


def flights(hall: Hall, points: tuple[Point, ...]) -> list[tuple[str, str]]:
    """Each flight the route takes, in order: (升 or 降, the stair's id)."""
    edges = _stair_edges(hall)
    tops = {s.top for s in hall.stairs}
    return [("降" if a in tops else "升", edges[frozenset((a, b))]) for a, b in zip(points, points[1:], strict=False)
            if frozenset((a, b)) in edges]


def length(points: tuple[Point, ...]) -> float:
    return sum(p.distance(q) for p, q in zip(points, points[1:], strict=False))
