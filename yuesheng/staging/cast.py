"""The cast a rite takes: every role with its head count, the roles the texts make one person (each cited), the
groups, and the fewest performers who can play every part, doubling only parts never on the ground at once.

A member is *on the ground* from when he comes on (``motion``) until he walks out through the gate, and again from
when he walks back in: a place whose name begins 門外 is off it. Parts overlap when they are on the ground together
for any time; a performer may play parts that never overlap. The fewest performers is a least colouring of the
overlap graph: the most parts on the ground at one instant is a lower bound (they overlap pairwise), a greedy
colouring (DSatur) an upper one, and where they differ an exact search (DSatur's order, branch and bound) closes the
gap within a budget of steps; ``Cast.proven`` says whether the number is the least.

The identities come from the rite's row of ``data/rites.json`` (``identities``: the blocking's ``same`` with its
pages, and what the texts say beyond it, 大射正擯 9-8b). One the blocking does not stand as one is counted as one
only where the two are never on the ground together; otherwise the cast says where the blocking keeps them apart.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from yuesheng.cuesheet.model import CueSheet
from yuesheng.datafiles import Identity, Rite
from yuesheng.staging.motion import Motion
from yuesheng.staging.persons import persons
from yuesheng.staging.rite import StagedRite
from yuesheng.staging.stage import members

OFF = "門外"  # a place whose name begins so is off the ground
BUDGET = 200_000  # steps of the exact search before the greedy colouring is kept unproven

Span = tuple[float, float]


@dataclass(frozen=True, slots=True)
class Role:
    """A role: its id and name, the other names it goes by (id, name), its head count, the members it stands as on
    the ground, and, for a group, what the texts say of its number ('' for one person)."""

    id: str
    name: str
    names: tuple[tuple[str, str], ...]
    count: int
    members: tuple[str, ...]
    group: str


@dataclass(frozen=True, slots=True)
class Held:
    """An identity as the cast holds it: the people it names (as labelled), and how: ``one`` (the blocking stands
    them as one), ``counted`` (apart on the ground but never there together: counted as one), or ``apart`` (on the
    ground together from the start of *cue*, or from the start of the rite where it is '': counted apart)."""

    identity: Identity
    labels: tuple[str, ...]
    how: str
    cue: str = ""


@dataclass(frozen=True, slots=True)
class Performer:
    """One performer: the parts he plays (each a person's label, or several the texts make one), in order of
    entrance."""

    number: int
    parts: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Cast:
    """The cast of a rite (see the module's docstring)."""

    roles: tuple[Role, ...]
    identities: tuple[Held, ...]
    performers: tuple[Performer, ...]
    most_at_once: int  # the lower bound: parts on the ground together at one instant
    at: float  # when (seconds into the rite)
    proven: bool  # the number of performers is the least
    spans: Mapping[str, tuple[Span, ...]]  # each part → when it is on the ground
    off: tuple[str, ...]  # roles never on the ground (none of their members): played by no one

    @property
    def doubled(self) -> tuple[Performer, ...]:
        return tuple(p for p in self.performers if len(p.parts) > 1)


def cast(sheet: CueSheet, staged: StagedRite, motion: Motion, rite: Rite | None) -> Cast:
    """The cast of *sheet* on the ground *staged*, moving as *motion*, with the identities and groups of *rite*'s
    row (None: the blocking's ``same`` alone, uncited)."""
    identities = _identities(staged, rite)
    labels = {m: p.label for p in persons(sheet, staged.same) for m in p.members}
    spans = {m: presence(motion, staged, m) for m in motion.members}
    parts: dict[str, list[str]] = {m: [m] for m in spans}  # a part's name → the members it is
    held = [_hold(i, sheet, staged, motion, spans, parts, labels) for i in identities]
    part_spans = {_name(ms, labels): u for ms in parts.values() if (u := _union(spans[m] for m in ms))}
    colours, proven = fewest(part_spans)
    most, at = most_at_once(part_spans)
    entrance = {p: min((a for a, _ in s), default=math.inf) for p, s in part_spans.items()}
    performers = [tuple(sorted(c, key=lambda p: (entrance[p], p))) for c in colours]
    performers.sort(key=lambda c: (entrance[c[0]], c[0]))
    roles = _roles(sheet, staged, identities, rite)
    off = tuple(r.name for r in roles if not any(spans.get(m) for m in r.members))
    return Cast(tuple(roles), tuple(held), tuple(Performer(n, c) for n, c in enumerate(performers, start=1)),
                most, at, proven, part_spans, off)


def _identities(staged: StagedRite, rite: Rite | None) -> list[Identity]:
    """The row's identities, and each pair of the blocking's ``same`` the row leaves out (uncited)."""
    out = list(rite.identities if rite else ())
    named = {frozenset((i.same[0], other)) for i in out for other in i.same[1:]}
    for role, target in staged.same.items():
        if frozenset((target, role)) not in named:
            out.append(Identity((target, role), estimate="the blocking's same: (no page in data/rites.json)"))
    return out


def _hold(identity: Identity, sheet: CueSheet, staged: StagedRite, motion: Motion,
          spans: Mapping[str, tuple[Span, ...]], parts: dict[str, list[str]], labels: Mapping[str, str]) -> Held:
    """How the cast holds *identity*, joining its parts where it counts them as one."""
    ground = [m for who in identity.same if who.partition("#")[0] in sheet.performers
              for m in members(who, sheet, staged.same) if m in spans]
    shown = _labels([w for w in identity.same if w.partition("#")[0] in sheet.performers], sheet)
    keys = list(dict.fromkeys(_part_of(m, parts) for m in ground))
    if len(keys) <= 1:
        return Held(identity, shown, "one")
    for a, b in zip(keys, keys[1:], strict=False):
        t = _together(_union(spans[m] for m in parts[a]), _union(spans[m] for m in parts[b]))
        if t is not None:
            return Held(identity, shown, "apart", motion.cue_at(t) or "")
    first = keys[0]
    for k in keys[1:]:
        parts[first] += parts.pop(k)
    return Held(identity, shown, "counted")


def _labels(ids: Sequence[str], sheet: CueSheet) -> tuple[str, ...]:
    """'工 1', '大師'; a role named as another of them is with its id (卿 1 = 卿 (qing-ou-shangshe))."""
    bases = [sheet.performers[w.partition("#")[0]].name for w in ids]
    return tuple(f"{b} {w.partition('#')[2]}" if "#" in w else f"{b} ({w})" if bases.count(b) > 1 else b
                 for b, w in zip(bases, ids, strict=True))


def _part_of(member: str, parts: Mapping[str, list[str]]) -> str:
    return next(k for k, ms in parts.items() if member in ms)


def _name(ms: Sequence[str], labels: Mapping[str, str]) -> str:
    return " = ".join(labels.get(m, m) for m in ms)


def _roles(sheet: CueSheet, staged: StagedRite, identities: Sequence[Identity], rite: Rite | None) -> list[Role]:
    """Every role of *sheet*, those the identities make one role (not a member of a group) with their names."""
    parent: dict[str, str] = {}

    def root(r: str) -> str:
        while r in parent:
            r = parent[r]
        return r

    for identity in identities:
        head = identity.same[0]
        if "#" in head:
            continue
        for other in identity.same[1:]:
            if "#" not in other and root(other) != root(head) and other in sheet.performers:
                parent[root(other)] = root(head)
    groups = dict(rite.groups) if rite else {}
    out = []
    for rid, member in sheet.performers.items():
        if rid in parent or (rid in staged.same and "#" in staged.same[rid]):
            continue
        names = tuple((o, sheet.performers[o].name) for o in sheet.performers if o != rid and root(o) == rid)
        stood = tuple(members(rid, sheet, staged.same))
        group = groups.get(rid, "") or (member.note or f"{member.count}") * (member.count > 1)
        out.append(Role(rid, member.name, names, member.count, stood, group))
    return out


def presence(motion: Motion, staged: StagedRite, member: str) -> tuple[Span, ...]:
    """When *member* is on the ground: from his entrance, or a walk in from 門外, to a walk out to it."""
    def off(place: str) -> bool:
        return place in staged.hall.places and staged.hall.places[place].name.startswith(OFF)

    start = motion.entrance(member)
    first = motion.position(member, start)
    since: float | None = start if first is not None and not off(first.place) else None
    out = []
    for leg in motion.legs(member):
        if since is None and not off(leg.to):
            since = leg.start
        elif since is not None and off(leg.to):
            out.append((since, leg.end))
            since = None
    if since is not None:
        out.append((since, math.inf))
    return tuple(out)


def _union(spans: Iterable[tuple[Span, ...]]) -> tuple[Span, ...]:
    out: list[Span] = []
    for a, b in sorted(s for ss in spans for s in ss):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return tuple(out)


def _together(a: Sequence[Span], b: Sequence[Span]) -> float | None:
    """The first instant two parts are on the ground together (for some time), else None."""
    found = [max(x0, y0) for x0, x1 in a for y0, y1 in b if x0 < y1 and y0 < x1]
    return min(found) if found else None


def most_at_once(spans: Mapping[str, Sequence[Span]]) -> tuple[int, float]:
    """The most parts on the ground at one instant, and the first such instant."""
    events = sorted((t, d) for s in spans.values() for a, b in s for t, d in ((a, 1), (b, -1)))  # ends first
    best, at, now = 0, -math.inf, 0
    for t, d in events:
        now += d
        if now > best:
            best, at = now, t
    return best, at


def fewest(spans: Mapping[str, Sequence[Span]], budget: int = BUDGET) -> tuple[list[list[str]], bool]:
    """The parts in the fewest groups of which no two are on the ground together, and whether that is proven the
    least (the lower bound met, or the exact search done within *budget* steps)."""
    nodes = sorted(spans)
    near = {n: {m for m in nodes if m != n and _together(spans[n], spans[m]) is not None} for n in nodes}
    best = _dsatur(nodes, near)
    lower = most_at_once(spans)[0]
    if len(best) <= lower:
        return best, True
    found, done = _search(nodes, near, len(best), lower, budget)
    return (found or best), done


def _dsatur(nodes: Sequence[str], near: Mapping[str, set[str]]) -> list[list[str]]:
    """A greedy colouring: the node seeing the most colours next, each the first colour free."""
    colour: dict[str, int] = {}
    while len(colour) < len(nodes):
        n = max((n for n in nodes if n not in colour),
                key=lambda n: (len({colour[m] for m in near[n] if m in colour}), len(near[n]), n))
        used = {colour[m] for m in near[n] if m in colour}
        colour[n] = next(c for c in range(len(nodes)) if c not in used)
    return _classes(colour)


def _classes(colour: Mapping[str, int]) -> list[list[str]]:
    out: dict[int, list[str]] = {}
    for n, c in sorted(colour.items()):
        out.setdefault(c, []).append(n)
    return [out[c] for c in sorted(out)]


def _search(nodes: Sequence[str], near: Mapping[str, set[str]], have: int, lower: int,
            budget: int) -> tuple[list[list[str]] | None, bool]:
    """A colouring in fewer than *have* colours, by branch and bound; whether the search ran to its end."""
    best: list[list[str]] | None = None
    limit = have - 1  # colours allowed
    steps = 0
    colour: dict[str, int] = {}

    def go(used: int) -> bool:  # False: out of budget
        nonlocal best, limit, steps
        steps += 1
        if steps > budget:
            return False
        if len(colour) == len(nodes):
            best, limit = _classes(colour), used - 1
            return True
        n = max((n for n in nodes if n not in colour),
                key=lambda n: (len({colour[m] for m in near[n] if m in colour}), len(near[n]), n))
        taken = {colour[m] for m in near[n] if m in colour}
        for c in range(min(used + 1, limit)):
            if c in taken:
                continue
            colour[n] = c
            ok = go(max(used, c + 1))
            del colour[n]
            if not ok:
                return False
            if limit < lower:
                return True
        return True

    done = go(0)
    return best, done
