"""Who a name means: the one lookup of a rite's persons, for every command that names one (``--person``,
``--follow``, the console's cast view, the seat's ``--listener PERSON``).

A person is named by his role's hanzi name (衆賓), its id (zhongbin), or, in a group, by number as well (衆賓 2,
衆賓2, 衆賓#2, zhongbin#2, zhongbin 2), its characters in any of their forms: traditional, simplified or a variant
(樂正, 乐正; 衆賓, 眾賓, 众宾: ``text.fold``), full-width forms as ASCII. A role the blocking names as another's
(``same``: the 司正 is the 相) is that one. An unknown name is an ``UnknownNameError`` naming the nearest; a name two
roles share is an ``AmbiguousNameError`` naming both ids.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass

from yuesheng.cuesheet.model import CueSheet, Member
from yuesheng.errors import AmbiguousNameError, UnknownNameError
from yuesheng.text import fold, suggest

_NUMBERED = re.compile(r"^(?P<role>.+?)\s*(?:#|\s)\s*(?P<n>[0-9]+)$|^(?P<han>[^\x00-\x7f]+?)(?P<m>[0-9]+)$")


@dataclass(frozen=True, slots=True)
class Person:
    """One person of the rite, or a whole group: his role's id and hanzi name, and the member ids he stands as on
    the ground (``zhongbin#2``; a group of N: ``zhongbin#1`` … ``zhongbin#N``)."""

    role: str
    name: str
    number: int | None
    members: tuple[str, ...]

    @property
    def label(self) -> str:
        """'衆賓 2', '主人'."""
        return f"{self.name} {self.number}" if self.number else self.name


def person(query: str, sheet: CueSheet, same: Mapping[str, str] | None = None) -> Person:
    """The person *query* names in *sheet* (see the module's docstring for the forms a name takes)."""
    text = unicodedata.normalize("NFKC", query).strip()
    match = _NUMBERED.match(text)
    role_name, number = ((match["role"] or match["han"]), int(match["n"] or match["m"])) if match else (text, None)
    role, stood = _same_role(_role(role_name.strip(), sheet, query), same or {})
    if stood is not None and number is None:
        number = stood
    member = sheet.performers[role]
    if number is None:
        return Person(role, member.name, None, _members(role, member))
    if member.count <= 1:
        raise UnknownNameError("person", query, message=f"unknown person {query!r}: {member.name} ({role}) is one "
                               "person, not a group")
    if not 1 <= number <= member.count:
        raise UnknownNameError("person", query, message=f"unknown person {query!r}: {member.name} ({role}) are "
                               f"{member.count}, numbered 1 to {member.count}")
    return Person(role, member.name, number, (f"{role}#{number}",))


def persons(sheet: CueSheet, same: Mapping[str, str] | None = None) -> list[Person]:
    """Every person of *sheet* one by one (each member of a group on his own), in the sheet's order; a role that is
    another's (``same``) is left out, since he is that one."""
    out: list[Person] = []
    for role, member in sheet.performers.items():
        if role in (same or {}):
            continue
        if member.count > 1:
            out += [Person(role, member.name, n, (f"{role}#{n}",)) for n in range(1, member.count + 1)]
        else:
            out.append(Person(role, member.name, None, (role,)))
    return out


def _role(name: str, sheet: CueSheet, query: str) -> str:
    """The performer id *name* means: an id (any case), else a hanzi name in any of its forms (``fold``)."""
    if name in sheet.performers:
        return name
    lower = name.lower()
    if lower in sheet.performers:
        return lower
    folded = fold(name)
    named = [rid for rid, m in sheet.performers.items() if fold(m.name) == folded]
    if len(named) > 1:
        raise AmbiguousNameError(query, named, kind="role")
    if named:
        return named[0]
    candidates = [*sheet.performers, *(m.name for m in sheet.performers.values())]
    raise UnknownNameError("person", query, suggest(name, candidates, 3))


def _same_role(role: str, same: Mapping[str, str]) -> tuple[str, int | None]:
    """The role *role* stands as, and the member if one (司正 → 相; 大師 → 工 1), following ``same`` to its end."""
    number: int | None = None
    seen = {role}
    while role in same:
        target, _, n = same[role].partition("#")
        role, number = target, (int(n) if n.isdigit() else None)
        if role in seen:
            break
        seen.add(role)
    return role, number


def _members(role: str, member: Member) -> tuple[str, ...]:
    return (role,) if member.count <= 1 else tuple(f"{role}#{n}" for n in range(1, member.count + 1))
