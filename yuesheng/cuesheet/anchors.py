"""Scheduling anchors: what each cue's start and end wait for, in an order that respects it.

A cue starts with or after its anchor, or when the previous cue ends; music held
until an action (樂闋) ends after that action starts. The timeline evaluates the
points in ``evaluation_order``; the reader reports a ``find_cycle`` as an error.
"""

from __future__ import annotations

from yuesheng.cuesheet.model import Anchor, Cue, MusicKind

Point = tuple[str, str]  # (cue id, "start" | "end")



def dependencies(cues: tuple[Cue, ...]) -> dict[Point, list[Point]]:
    """What each cue's start and end wait for.

    A cue starts with/after its anchor, or else when the previous cue ends (when it
    starts, if that is music running until an action). A cue that starts *with*
    another runs alongside it and is skipped when finding "the previous cue". Music
    that runs until an action (樂闋) ends after that action starts; an action that a
    射節 runs until waits for the shooting to finish; a call held until an action
    ends with it.
    """
    by_id = {c.id: c for c in cues}
    deps: dict[Point, list[Point]] = {}
    previous: Cue | None = None
    for cue in cues:
        if cue.start and cue.start.cue in by_id:
            deps[(cue.id, "start")] = [(cue.start.cue, "start" if cue.start.anchor is Anchor.WITH else "end")]
        elif previous is not None:
            deps[(cue.id, "start")] = [(previous.id, "start" if previous.end_at else "end")]
        else:
            deps[(cue.id, "start")] = []
        deps[(cue.id, "end")] = [(cue.id, "start")]
        if not (cue.start and cue.start.anchor is Anchor.WITH):
            previous = cue
    for cue in cues:
        if cue.hold_until in by_id:  # a call held until a walk ends (聲止)
            deps[(cue.id, "end")].append((cue.hold_until, "end"))
        if cue.end_at in by_id:
            if cue.music is MusicKind.SHEJIE:
                deps[(cue.end_at, "start")].append((cue.id, "end"))
            else:
                deps[(cue.id, "end")].append((cue.end_at, "start"))
    return deps


def evaluation_order(deps: dict[Point, list[Point]]) -> tuple[list[Point], list[str]]:
    """Points in an order where each comes after what it waits for, and a cycle (cue ids) if there is one."""
    state: dict[Point, int] = {}
    order: list[Point] = []
    for root in deps:
        if root in state:
            continue
        stack: list[tuple[Point, int]] = [(root, 0)]
        path: list[Point] = []
        while stack:
            node, i = stack.pop()
            if i == 0:
                if state.get(node) == 2:
                    continue
                state[node] = 1
                path.append(node)
            children = deps.get(node, [])
            if i < len(children):
                stack.append((node, i + 1))
                child = children[i]
                if state.get(child) == 1:
                    loop = path[path.index(child):] + [child]
                    return order, list(dict.fromkeys(n[0] for n in loop)) + [child[0]]
                if state.get(child) != 2:
                    stack.append((child, 0))
            else:
                state[node] = 2
                path.pop()
                order.append(node)
    return order, []


def find_cycle(cues: tuple[Cue, ...]) -> list[str]:
    """A cycle among the start/end points of *cues*, as a list of cue ids, or []."""
    return evaluation_order(dependencies(cues))[1]

