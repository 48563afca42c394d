"""The second pass of reading a cue sheet: references between its parts.

Ids are unique; anchors, cast, positions, variants and readings are declared; a
held call's walk and the archery's variant exist; and the start anchors form no
cycle with any combination of variants a user can switch on.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from yuesheng.checking import Checker
from yuesheng.cuesheet.anchors import find_cycle
from yuesheng.cuesheet.model import CueSheet, parse_reading, variant_configurations
from yuesheng.text import did_you_mean
from yuesheng.yamlload import PathKey

MAX_COMBINED_VARIANTS = 12  # 4,096 programmes checked for anchor cycles at most


def check_references(r: Checker, sheet: CueSheet) -> None:
    """Ids unique; anchors, cast, positions and variants declared; anchors acyclic."""
    seen: dict[str, int] = {}
    for cue in sheet.cues:
        path: PathKey = ("cues", cue.index)
        if cue.id in seen:
            r.error(path + ("id",), f"duplicate cue id {cue.id!r} (first at cues[{seen[cue.id]}])", "reference")
        seen.setdefault(cue.id, cue.index)
    for cue in sheet.cues:
        path = ("cues", cue.index)
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
        if cue.reading:
            rid, option = parse_reading(cue.reading)
            if rid not in sheet.readings:
                r.error(path + ("reading",), _unknown(rid, "reading", sheet.readings) + " (write reading: ID=OPTION)",
                        "reference")
            elif option not in sheet.readings[rid].options:
                options = dict.fromkeys(sheet.readings[rid].options)
                r.error(path + ("reading",), _unknown(option, f"option of reading {rid}", options), "reference")
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
    if not any(p.rule == "reference" for p in r.problems):
        for variants in _every_programme(sheet):
            cycle = find_cycle(sheet.active_cues(variants))
            if cycle:
                first = sheet.cue(cycle[0])
                switched = f" (with {', '.join(sorted(variants))} on)" if variants else ""
                r.error(("cues", first.index, "start"), f"anchors form a cycle{switched}: {' → '.join(cycle)}", "cycle")
                break


def _every_programme(sheet: CueSheet) -> Iterator[frozenset[str]]:
    """Every combination of variants a user can switch on (with what they require), each distinct programme once.

    Up to ``MAX_COMBINED_VARIANTS`` variants every subset is tried; beyond, every subset of at most two
    (the timeline still reports any other cycle as an error).
    """
    names = sorted(sheet.variants)
    sizes = range(len(names) + 1) if len(names) <= MAX_COMBINED_VARIANTS else range(3)
    seen: set[tuple[int, ...]] = set()
    for size in sizes:
        for chosen in itertools.combinations(names, size):
            variants = sheet.with_requirements(frozenset(chosen))
            programme = tuple(c.index for c in sheet.active_cues(variants))
            if programme not in seen:
                seen.add(programme)
                yield variants



def _unknown(name: str, kind: str, table: Mapping[str, Any]) -> str:
    return f"unknown {kind} {name!r}" + (did_you_mean(name, list(table), n=1) or " (not declared)")

