"""The second pass of reading a cue sheet: references between its parts.

Ids are unique; anchors, cast, positions, variants and readings are declared; a
held call's walk and the archery's variant exist; and the start anchors of the
programme as written form no cycle. ``programme_cycle`` over ``every_programme``
(every combination of variants a user can switch on) is for ``validate``: a build
finds a cycle in its own programme before it schedules (ScheduleError).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from yuesheng.checking import Checker
from yuesheng.cuesheet.anchors import Point, dependencies, find_cycle
from yuesheng.cuesheet.model import Cue, CueSheet, parse_reading, variant_configurations
from yuesheng.text import did_you_mean
from yuesheng.yamlload import PathKey

MAX_COMBINED_VARIANTS = 12  # 4,096 programmes checked for anchor cycles at most
MAX_PAIRED_VARIANTS = 64  # beyond, 2,016 pairs: each variant is then checked alone


def check_references(r: Checker, sheet: CueSheet,
                     declared: Callable[[Checker, CueSheet, Cue], None] | None = None) -> None:
    """Ids unique; anchors, cast, positions and variants declared; anchors acyclic. What each cue names of the
    declarations is checked by *declared* (``declared_references``, or its kept result: ``check.kept``)."""
    seen: dict[str, int] = {}
    for cue in sheet.cues:
        path: PathKey = ("cues", cue.index)
        if cue.id in seen:
            r.error(path + ("id",), f"duplicate cue id {cue.id!r} (first at cues[{seen[cue.id]}])", "reference")
        seen.setdefault(cue.id, cue.index)
    for cue in sheet.cues:
        path = ("cues", cue.index)
        (declared or declared_references)(r, sheet, cue)
        if cue.start and cue.start.cue not in seen:
            r.error(path + ("start", cue.start.anchor), _unknown(cue.start.cue, "cue", seen), "reference")
        if cue.end_at:
            if cue.end_at not in seen:
                r.error(path + ("end", "at"), _unknown(cue.end_at, "cue", seen), "reference")
            elif seen[cue.end_at] <= cue.index:
                r.error(path + ("end", "at"), f"樂闋 at {cue.end_at!r}, which comes before the music starts",
                        "reference")
            elif sheet.cue(cue.end_at).is_music:
                r.error(path + ("end", "at"), f"樂闋 at {cue.end_at!r}, which is music: name the action that stops it "
                        "(on the day the operator's GO for that action ends the music)", "reference")
        if cue.hold_until:
            if cue.hold_until not in seen:
                r.error(path + ("hold", "until"), _unknown(cue.hold_until, "cue", seen), "reference")
            elif sheet.cue(cue.hold_until).is_music:
                r.error(path + ("hold", "until"), f"call held until {cue.hold_until!r}, which is music: name the "
                        "action (the walk) at whose end the voice stops (聲止)", "reference")
            elif any(cue.active(v) and not sheet.cue(cue.hold_until).active(v) for v in variant_configurations(sheet)):
                r.error(path + ("hold", "until"), f"call held until {cue.hold_until!r}, which is not in every "
                        "programme the call is in (check variant and unless)", "reference")
    for kind, table in (("instruments", sheet.instruments), ("performers", sheet.performers)):
        for member in table.values():
            if member.player and member.player not in sheet.performers:
                r.error((kind, member.id, "player"), _unknown(member.player, "performer", sheet.performers),
                        "reference")
            if member.position and member.position not in sheet.positions:
                r.error((kind, member.id, "position"), _unknown(member.position, "position", sheet.positions),
                        "reference")
    if sheet.archery and sheet.archery.variant and sheet.archery.variant not in sheet.variants:
        r.error(("archery", "variant"), _unknown(sheet.archery.variant, "variant", sheet.variants), "reference")
    for variant in sheet.variants.values():
        for n, needed in enumerate(variant.requires):
            if needed not in sheet.variants:
                r.error(("variants", variant.id, "requires", n), _unknown(needed, "variant", sheet.variants),
                        "reference")
    if not any(p.rule == "reference" for p in r.problems) and (found := programme_cycle(sheet, [frozenset()])):
        r.error(*found, "cycle")


def declared_references(r: Checker, sheet: CueSheet, cue: Cue) -> None:
    """What one cue names of the sheet's declarations: its cast, instruments, position, variants and reading exist
    (a cue alone and the sheet's frame: kept with the cue's other checks, ``check.kept``)."""
    path: PathKey = ("cues", cue.index)
    for key, ids, table in (("who", cue.who, sheet.performers), ("performers", cue.performers, sheet.performers),
                            ("instruments", cue.instruments, sheet.instruments)):
        for n, ident in enumerate(ids):
            if ident not in table:
                r.error(path + (key, n), _unknown(ident, key.rstrip("s") if key != "who" else "performer", table),
                        "reference")
    if cue.where and cue.where not in sheet.positions:
        r.error(path + ("where",), _unknown(cue.where, "position", sheet.positions), "reference")
    for key in ("variant", "unless"):
        if getattr(cue, key) and getattr(cue, key) not in sheet.variants:
            r.error(path + (key,), _unknown(getattr(cue, key), "variant", sheet.variants), "reference")
    if cue.variant and cue.unless and cue.unless in sheet.with_requirements(frozenset({cue.variant})):
        r.error(path + ("unless",), f"unless {cue.unless!r} is on whenever variant {cue.variant!r} is: the cue "
                "would never be in the programme", "reference")
    if cue.reading:
        rid, option = parse_reading(cue.reading)
        if rid not in sheet.readings:
            r.error(path + ("reading",), _unknown(rid, "reading", sheet.readings) + " (write reading: ID=OPTION)",
                    "reference")
        elif option not in sheet.readings[rid].options:
            options = dict.fromkeys(sheet.readings[rid].options)
            r.error(path + ("reading",), _unknown(option, f"option of reading {rid}", options), "reference")


def programme_cycle(sheet: CueSheet, programmes: Iterable[frozenset[str]]) -> tuple[PathKey, str] | None:
    """The first cycle of start anchors among *programmes* (sets of variants switched on): where, and what."""
    for variants in programmes:
        cycle = find_cycle(sheet.active_cues(variants))
        if cycle:
            switched = f" (with {', '.join(sorted(variants))} on)" if variants else ""
            return ("cues", sheet.cue(cycle[0]).index, "start"), f"anchors form a cycle{switched}: {' → '.join(cycle)}"
    return None


def cycle_span(sheet: CueSheet) -> set[int]:
    """The cues (indices) a cycle of anchors can pass through in any programme: those that a reference to a later
    point (a start anchor, 樂闋, 聲止) spans, in the whole sheet.

    ``dependencies`` points every edge to the previous cue backward, and draws a reference in a programme only if
    both of its cues are in it. A cycle climbs from its first point to its last only along references, so it lies
    within their spans; and two programmes with the same cues there have the same cycles.
    """
    index = {c.id: c.index for c in sheet.cues}

    def at(point: Point) -> tuple[int, bool]:
        return index[point[0]], point[1] == "end"

    span: set[int] = set()
    for point, waits in dependencies(sheet.cues).items():
        for other in waits:
            if at(other) > at(point):
                span.update(range(index[point[0]], index[other[0]] + 1))
    return span


def cycle_classes(sheet: CueSheet) -> Iterator[frozenset[str]]:
    """Of ``every_programme``, in order, one of each class with the same cues in the ``cycle_span``: their cycles
    are the same (大射's 128 programmes are 2 for its anchors)."""
    span = cycle_span(sheet)
    return _distinct(sheet, [c for c in sheet.cues if c.index in span])


def every_programme(sheet: CueSheet) -> Iterator[frozenset[str]]:
    """Every combination of variants a user can switch on (with what they require), each distinct programme once.

    Only the variants that switch cues matter, and of those that switch the same cues (with what they require)
    only the first. Up to ``MAX_COMBINED_VARIANTS`` such variants every subset is tried; up to ``MAX_PAIRED_VARIANTS``
    every subset of at most two; beyond, each alone: so the cost grows at most with the square of the variants
    (the timeline still reports any other cycle, in the programme it builds, as an error).
    """
    return _distinct(sheet, list(sheet.cues))


def _distinct(sheet: CueSheet, cues: list[Cue]) -> Iterator[frozenset[str]]:
    """The combinations of ``every_programme``, the first of each set of *cues* active in them."""
    named = {name for c in cues for name in (c.variant, c.unless) if name}
    switching: dict[frozenset[str], str] = {frozenset(): ""}
    for name in sorted(sheet.variants):
        switching.setdefault(sheet.with_requirements(frozenset({name})) & named, name)
    names = [name for name in switching.values() if name]
    sizes = range(len(names) + 1) if len(names) <= MAX_COMBINED_VARIANTS else \
        range(3) if len(names) <= MAX_PAIRED_VARIANTS else range(2)
    seen: set[tuple[int, ...]] = set()
    for size in sizes:
        for chosen in itertools.combinations(names, size):
            variants = sheet.with_requirements(frozenset(chosen))
            found = tuple(c.index for c in cues if c.active(variants))
            if found not in seen:
                seen.add(found)
                yield variants


def _unknown(name: str, kind: str, table: Mapping[str, Any]) -> str:
    return f"unknown {kind} {name!r}" + (did_you_mean(name, list(table), n=1) or " (not declared)")

