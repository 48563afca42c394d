"""Routes through the hall: the shortest walk from one point to another that crosses no wall, and leaves or
reaches the 堂 only by a stair, through the places a move names (``via``: 由楹內, 出于司馬之南).

The graph (networkx, imported here only) joins every two of its nodes — the places, the stairs' tops and feet,
points just off each end and corner of a wall — that see each other: the segment between them does not meet a
wall (touching counts: no slipping through a corner). A stair is an edge of its own,
from its top to its foot. The graph of a hall is built once and kept.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from yuesheng.errors import NoRouteError
from yuesheng.staging.model import Hall, Point

if TYPE_CHECKING:
    import networkx

_EPS = 1e-9
_AROUND = 0.05  # 步: a walk turns this far off the end or corner of a wall, never on it


def _orient(a: Point, b: Point, c: Point) -> float:
    return (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)


def _within(a: Point, b: Point, c: Point) -> bool:
    """Whether *c*, on the line ab, lies on the segment ab."""
    return min(a.x, b.x) - _EPS <= c.x <= max(a.x, b.x) + _EPS and min(a.y, b.y) - _EPS <= c.y <= max(a.y, b.y) + _EPS


def crosses(p: Point, q: Point, a: Point, b: Point) -> bool:
    """Whether segment pq meets segment ab at all: crossing it, touching it or running along it. A walk may not even
    touch a wall: one that could slip through the corner where two walls meet."""
    d1, d2, d3, d4 = _orient(a, b, p), _orient(a, b, q), _orient(p, q, a), _orient(p, q, b)
    if ((d1 > _EPS and d2 < -_EPS) or (d1 < -_EPS and d2 > _EPS)) and \
            ((d3 > _EPS and d4 < -_EPS) or (d3 < -_EPS and d4 > _EPS)):
        return True
    return any(abs(d) <= _EPS and _within(s, t, c) for d, s, t, c in
               ((d1, a, b, p), (d2, a, b, q), (d3, p, q, a), (d4, p, q, b)))


def blocked(hall: Hall, p: Point, q: Point) -> str:
    """The name of the first wall the segment pq crosses, or ''."""
    for wall in hall.walls:
        if any(crosses(p, q, a, b) for a, b in wall.segments()):
            return wall.name
    return ""


@cache
def _graph(hall: Hall) -> networkx.Graph[Point]:
    import networkx

    nodes = {p.point for p in hall.places.values()}
    nodes |= {s.top for s in hall.stairs} | {s.foot for s in hall.stairs}
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


def _leg(hall: Hall, graph: networkx.Graph[Point], p: Point, q: Point) -> list[Point]:
    """The shortest route p → q: straight if nothing is in the way, else through the graph (each end joined to the
    nodes it sees for the search, and taken out again)."""
    import networkx

    if not blocked(hall, p, q):
        return [p, q]
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
def route(hall: Hall, start: Point, end: Point, via: tuple[Point, ...] = ()) -> tuple[Point, ...]:
    """The route start → via… → end, as the points where it turns (kept: the same walk recurs in a rite)."""
    graph = _graph(hall)
    stops = [start, *via, end]
    out = [start]
    for p, q in zip(stops, stops[1:], strict=False):
        out += _leg(hall, graph, p, q)[1:]
    return tuple(out)


def stairs_on(hall: Hall, points: tuple[Point, ...]) -> int:
    """How many stairs the route climbs or descends."""
    edges = {frozenset((s.top, s.foot)) for s in hall.stairs}
    return sum(frozenset(pair) in edges for pair in zip(points, points[1:], strict=False))


def length(points: tuple[Point, ...]) -> float:
    return sum(p.distance(q) for p, q in zip(points, points[1:], strict=False))
