"""Routes through the hall: the shortest walk from one point to another that crosses no wall, and leaves or
reaches the 堂 only by a stair, through the places a move names (``via``: 由楹內, 出于司馬之南).

A shortest walk among walls turns only at their ends and corners, so the graph (networkx, imported only when a
route is searched) has just those — points just off each end and corner of a wall — and the stairs' tops and feet;
two nodes are joined when they see each other: the segment between them meets no wall (touching counts: no slipping
through a corner). A stair is an edge of its own, from its top to its foot. A walk's two ends join the graph for its
search only. A wall test looks only at the wall segments whose bounding box meets the walk's.

A route, once found, is kept on disk (``routecache``: keyed by the hall's walls and stairs and this code), so a
process that finds every walk of a rite there neither builds the graph nor imports networkx.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from yuesheng.errors import NoRouteError
from yuesheng.staging import routecache
from yuesheng.staging.model import Hall, Point

if TYPE_CHECKING:
    import networkx

_EPS = 1e-9
_AROUND = 0.05  # 步: a walk turns this far off the end or corner of a wall, never on it

_Segment = tuple[str, float, float, float, float, float, float, float, float]  # name, a, b, bounding box


@cache
def _segments(hall: Hall) -> tuple[_Segment, ...]:
    """Every wall segment of *hall*: its wall's name, its ends and its bounding box (x0, x1, y0, y1)."""
    return tuple((wall.name, a.x, a.y, b.x, b.y, min(a.x, b.x), max(a.x, b.x), min(a.y, b.y), max(a.y, b.y))
                 for wall in hall.walls for a, b in wall.segments())


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


def blocked(hall: Hall, p: Point, q: Point) -> str:
    """The name of the first wall the segment pq crosses, or ''."""
    px, py, qx, qy = p.x, p.y, q.x, q.y
    x0, x1 = (px, qx) if px <= qx else (qx, px)
    y0, y1 = (py, qy) if py <= qy else (qy, py)
    for name, ax, ay, bx, by, sx0, sx1, sy0, sy1 in _segments(hall):
        if sx1 < x0 - _EPS or sx0 > x1 + _EPS or sy1 < y0 - _EPS or sy0 > y1 + _EPS:
            continue
        if _meets(px, py, qx, qy, ax, ay, bx, by):
            return name
    return ""


@cache
def _graph(hall: Hall) -> networkx.Graph[Point]:
    import networkx

    nodes = {s.top for s in hall.stairs} | {s.foot for s in hall.stairs}
    nodes |= {pt.shifted(dx, dy) for w in hall.walls for pt in w.points
              for dx, dy in ((_AROUND, _AROUND), (_AROUND, -_AROUND), (-_AROUND, _AROUND), (-_AROUND, -_AROUND))}
    graph: networkx.Graph[Point] = networkx.Graph()
    ordered = sorted(nodes, key=lambda p: (p.x, p.y))
    graph.add_nodes_from(ordered)
    for i, p in enumerate(ordered):
        for q in ordered[i + 1:]:
            if not blocked(hall, p, q):
                graph.add_edge(p, q, weight=p.distance(q), stair="")
    for s in hall.stairs:
        graph.add_edge(s.top, s.foot, weight=s.top.distance(s.foot), stair=s.id)
    return graph


def _leg(hall: Hall, p: Point, q: Point) -> list[Point]:
    """The shortest route p → q: straight if nothing is in the way, else through the graph (each end joined to the
    nodes it sees for the search, and taken out again)."""
    if not blocked(hall, p, q):
        return [p, q]
    import networkx

    graph = _graph(hall)
    added = [end for end in (p, q) if end not in graph]
    for end in added:
        graph.add_node(end)
        graph.add_weighted_edges_from((end, node, end.distance(node)) for node in list(graph.nodes)
                                      if node != end and not blocked(hall, end, node))
    try:
        return list(networkx.shortest_path(graph, p, q, weight="weight"))
    except networkx.NetworkXNoPath:
        raise NoRouteError(f"no route from ({p.x:g}, {p.y:g}) to ({q.x:g}, {q.y:g}) in {hall.name}") from None
    finally:
        graph.remove_nodes_from(added)


@cache
def _kept(hall: Hall) -> routecache.Routes:
    """The routes of *hall* found before, by this or an earlier process."""
    return routecache.open_routes([[(a.x, a.y) for a in w.points] for w in hall.walls],
                                  [(s.top.x, s.top.y, s.foot.x, s.foot.y) for s in hall.stairs])


def route(hall: Hall, start: Point, end: Point, via: tuple[Point, ...] = ()) -> tuple[Point, ...]:
    """The route start → via… → end, as the points where it turns (kept: the same walk recurs in a rite)."""
    kept = _kept(hall)
    stops = [start, *via, end]
    key = tuple((p.x, p.y) for p in stops)
    if (found := kept.get(key)) is not None and _sound(hall, points := tuple(Point(x, y) for x, y in found), stops):
        return points
    out = [start]
    for p, q in zip(stops, stops[1:], strict=False):
        out += _leg(hall, p, q)[1:]
    kept.put(key, [(p.x, p.y) for p in out])
    return tuple(out)


def _sound(hall: Hall, points: tuple[Point, ...], stops: list[Point]) -> bool:
    """Whether a kept route still goes from the first stop to the last and crosses no wall but by a stair."""
    stairs = _stair_edges(hall)
    return bool(points) and points[0] == stops[0] and points[-1] == stops[-1] and \
        all(frozenset(pair) in stairs or not blocked(hall, *pair) for pair in zip(points, points[1:], strict=False))


@cache
def _stair_edges(hall: Hall) -> frozenset[frozenset[Point]]:
    return frozenset(frozenset((s.top, s.foot)) for s in hall.stairs)


def stairs_on(hall: Hall, points: tuple[Point, ...]) -> int:
    """How many stairs the route climbs or descends."""
    edges = _stair_edges(hall)
    return sum(frozenset(pair) in edges for pair in zip(points, points[1:], strict=False))


def length(points: tuple[Point, ...]) -> float:
    return sum(p.distance(q) for p, q in zip(points, points[1:], strict=False))
