"""The shipped data tables (``yuesheng/data/NAME.json``), each read once, on first use.

``music.json``: the parts each kind of music sounds by default, the 金奏 onset, the 合 pairs, the notices;
``rites.json``: everything the code knows of each rite (``rites``, ``rite_of``); ``cuesheet.schema.json``: the
cue-sheet format. No rite id is written anywhere else in the package: a fifth rite is a row of ``rites.json``.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from yuesheng.errors import InvalidValueError

DATA_DIR = Path(__file__).resolve().parent / "data"


@cache
def data_table(name: str) -> Any:
    """The parsed ``data/NAME.json`` (shared: callers must not change it)."""
    return json.loads((DATA_DIR / f"{name}.json").read_text(encoding="utf-8"))


@dataclass(frozen=True, slots=True)
class Lord:
    """Who presides from a mat of his own (the 公 of 燕禮 and 大射): his name, the seat it names, his mat's place."""

    name: str  # 公
    seat: str  # the seat id named for his mat (zuojie-shang): 公席
    mat: str  # the hall's place of his mat where the hall names one apart from the seat (gong-xi)
    cite: str


@dataclass(frozen=True, slots=True)
class Identity:
    """Roles (or members of groups: ``huozhe#1``) that are one person: where the text says so (*page*, *quote*),
    else the project's estimate and why. The first is the one he is counted as."""

    same: tuple[str, ...]
    page: str = ""
    quote: str = ""
    estimate: str = ""  # why ('' where the text says so)

    def __str__(self) -> str:
        return f"儀禮集釋 {self.page} {self.quote}" if self.page else f"estimate: {self.estimate}"


@dataclass(frozen=True, slots=True)
class Rite:
    """What the code knows of one rite (a row of ``data/rites.json``)."""

    id: str
    name: str
    short: str  # 鄉射, as the messages say it
    rules: frozenset[str] = frozenset()  # the rite-specific rules that hold for it (check/rules.py)
    archery: bool = False  # it shoots: its sheet needs an archery section
    jie_total: int | None = None  # the 節 of its drum, where the text gives one
    jie_cite: str = ""
    round_pieces: frozenset[str] = frozenset()  # the pieces a round with music may sing (empty: any)
    round_names: str = ""
    zhengge: tuple[tuple[str, int], ...] = ()  # (music kind, 終) that must sound before 正歌備 (empty: the full one)
    zhengge_cite: str = ""
    xunuo: tuple[str, ...] = ()  # the sounds a 許諾 is on (empty: not said)
    xunuo_held: str = ""  # the sound of a 許諾 held until the walk it answers ends
    xunuo_cite: str = ""
    lord: Lord | None = None
    listener: str = ""  # the seat a listener takes by default ('': none)
    identities: tuple[Identity, ...] = ()  # roles that are one person (the cast)
    groups: Mapping[str, str] = field(default_factory=dict)  # a role of one mark that is many, and its number

    def seat_name(self, seat: str, name: str) -> str:
        """What *seat* (usually called *name*) is called in this rite: the lord's (公席) where it is his."""
        return f"{self.lord.name}席" if self.lord is not None and seat == self.lord.seat else name

    def seat_place(self, seat: str, places: Collection[str]) -> str:
        """The place of *seat* in a hall of *places*: the lord's mat where the hall names it apart from the seat."""
        lord = self.lord
        return lord.mat if lord is not None and seat == lord.seat and lord.mat in places else seat


_KEYS = ("name", "short", "rules", "archery", "jie", "round_pieces", "zhengge", "xunuo", "lord", "listener",
         "identities", "groups")


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidValueError(where, value, "a list of strings")
    return tuple(value)


def _mapping(row: Mapping[str, Any], key: str, where: str) -> dict[str, Any]:
    value = row.get(key, {})
    if not isinstance(value, dict):
        raise InvalidValueError(f"{where}: {key}", value, "a mapping")
    return value


def _lord(raw: dict[str, Any], where: str) -> Lord | None:
    if not raw:
        return None
    if not all(isinstance(raw.get(k), str) for k in ("name", "seat", "cite")):
        raise InvalidValueError(f"{where}: lord", raw, "{name, seat, mat, cite}, strings")
    return Lord(name=raw["name"], seat=raw["seat"], mat=str(raw.get("mat", "")), cite=raw["cite"])


def _identities(raw: Any, where: str) -> tuple[Identity, ...]:
    """The rows of ``identities``: ``same`` (two or more ids), then ``page`` and ``quote``, or ``estimate``."""
    if not isinstance(raw, list):
        raise InvalidValueError(f"{where}: identities", raw, "a list")
    out = []
    for item in raw:
        same = item.get("same") if isinstance(item, dict) else None
        texts = {k: item.get(k, "") for k in ("page", "quote", "estimate")} if isinstance(item, dict) else {}
        if (not isinstance(same, list) or len(same) < 2 or not all(isinstance(s, str) for s in same)
                or not all(isinstance(v, str) for v in texts.values())
                or not ((texts["page"] and texts["quote"]) or texts["estimate"])):
            raise InvalidValueError(f"{where}: identities", item, "{same: [two or more ids], page and quote, or "
                                    "estimate}")
        out.append(Identity(tuple(same), **texts))
    return tuple(out)


def _groups(row: Mapping[str, Any], where: str) -> dict[str, str]:
    groups = _mapping(row, "groups", where)
    if not all(isinstance(v, str) and v for v in groups.values()):
        raise InvalidValueError(f"{where}: groups", groups, "a role id → what the texts say of its number")
    return groups


def rite_row(rid: str, row: Any) -> Rite:
    """One row of ``rites.json`` as a Rite; InvalidValueError naming the row and the key if it is malformed."""
    where = f"data/rites.json: rite {rid}"
    if not isinstance(row, dict) or not isinstance(row.get("name"), str) or not isinstance(row.get("short"), str):
        raise InvalidValueError(where, row, "a mapping with its name and short name")
    if unknown := sorted(set(row) - set(_KEYS)):
        raise InvalidValueError(where, unknown[0], f"one of the keys {', '.join(_KEYS)}")
    jie, pieces, zhengge, xunuo = (_mapping(row, k, where) for k in ("jie", "round_pieces", "zhengge", "xunuo"))
    kinds = _mapping(zhengge, "kinds", f"{where}: zhengge")
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in kinds.values()):
        raise InvalidValueError(f"{where}: zhengge kinds", kinds, "a number of 終 for each kind of music")
    if not isinstance(jie.get("total", 0), int) or isinstance(jie.get("total"), bool):
        raise InvalidValueError(f"{where}: jie total", jie.get("total"), "a number of 節")
    listener = _mapping(row, "listener", where)
    return Rite(id=rid, name=row["name"], short=row["short"],
                rules=frozenset(_strings(row.get("rules", []), f"{where}: rules")), archery=row.get("archery") is True,
                jie_total=jie.get("total"), jie_cite=str(jie.get("cite", "")),
                round_pieces=frozenset(_strings(pieces.get("ids", []), f"{where}: round_pieces")),
                round_names=str(pieces.get("names", "")), zhengge=tuple(kinds.items()),
                zhengge_cite=str(zhengge.get("cite", "")), xunuo=_strings(xunuo.get("calls", []), f"{where}: xunuo"),
                xunuo_held=str(xunuo.get("held", "")), xunuo_cite=str(xunuo.get("cite", "")),
                lord=_lord(_mapping(row, "lord", where), where), listener=str(listener.get("seat", "")),
                identities=_identities(row.get("identities", []), where), groups=_groups(row, where))


@cache
def rites() -> dict[str, Rite]:
    """The rites of ``data/rites.json``, by id."""
    return {rid: rite_row(rid, row) for rid, row in data_table("rites").items() if not rid.startswith("$")}


def rite_of(rite_id: str, rite_name: str) -> Rite | None:
    """The rite of a sheet with this ``rite.id`` and ``rite.name``: by its id, else (a sheet of one's own) by its
    exact name; None if neither is in ``rites.json``."""
    table = rites()
    return table.get(rite_id) or next((r for r in table.values() if r.name == rite_name), None)
