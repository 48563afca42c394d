"""The paces a walk is timed at, by the ground it crosses: the shipped table, a ``--paces`` file, and a fit to
rehearsal.

堂上接武, 堂下布武 (禮記 曲禮上, ``texts/liji``): on the 堂 the feet go heel to toe, below it in full strides, so a
walk's 步 on the 堂 take longer than those of the 庭. 堂上不趨 (the same passage): a move at a run (趨) runs only
below the 堂. A flight of the 堂's steps takes its own time. The texts give no seconds: every value of the shipped
table (``data/staging.json``, ``paces`` and ``stair``) is an estimate with its reason; a paces file (YAML or JSON)
replaces any of them for a build, and ``fit`` finds them from walks measured in rehearsal.

A paces file::

    format: yuesheng-paces-1
    paces: {堂上: 3, 堂下: 1.5, 趨: 0.75, 階: 6}   # seconds a 步 (階: seconds a flight); any of the four
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from functools import cache
from pathlib import Path

from yuesheng.datafiles import data_table
from yuesheng.errors import InvalidInputError
from yuesheng.staging.model import Derivation, Hall, Point

FORMAT = "yuesheng-paces-1"
KINDS = ("堂上", "堂下", "趨", "階")  # the ground kinds: on the 堂 (接武), below it (布武), at a run below it, a flight
BOUNDS = {"堂上": (0.2, 20.0), "堂下": (0.2, 20.0), "趨": (0.1, 20.0), "階": (0.5, 120.0)}  # seconds, inclusive


@dataclass(frozen=True, slots=True)
class Paces:
    """Seconds a 步 on the 堂 (接武), below it (布武) and at a run below it (趨), and seconds a flight of steps;
    *source* says where they come from ('' for the shipped table)."""

    tang: Fraction
    ting: Fraction
    qu: Fraction
    stair: Fraction
    source: str = ""

    def of(self, kind: str) -> Fraction:
        """The value of a ground kind of ``KINDS``."""
        return (self.tang, self.ting, self.qu, self.stair)[KINDS.index(kind)]

    def key(self) -> str:
        """What a cache key needs of them: the four values (not where they were read)."""
        return " ".join(f"{k}={self.of(k)}" for k in KINDS)


def _seconds(value: float) -> Fraction:
    return Fraction(value).limit_denominator(100)


@cache
def shipped() -> Paces:
    """The shipped table's paces (``data/staging.json``)."""
    table = data_table("staging")
    paces = table["paces"]
    return Paces(_seconds(paces["堂上"]["seconds_per_bu"]), _seconds(paces["堂下"]["seconds_per_bu"]),
                 _seconds(paces["趨"]["seconds_per_bu"]), _seconds(table["stair"]["seconds"]))


def with_values(base: Paces, values: Mapping[str, Fraction], source: str) -> Paces:
    """*base* with the kinds of *values* replaced, from *source*."""
    fields = dict(zip(("tang", "ting", "qu", "stair"), (values.get(k, base.of(k)) for k in KINDS), strict=True))
    return replace(base, **fields, source=source)


def lengths(hall: Hall, route: tuple[Point, ...]) -> tuple[float, float]:
    """A route's 步 on the 堂 and below it: a leg with both ends on the 堂 is on it; any other (a flight included:
    its time is the stair's) is below."""
    tang = ting = 0.0
    for a, b in zip(route, route[1:], strict=False):
        if hall.on_tang(a) and hall.on_tang(b):
            tang += a.distance(b)
        else:
            ting += a.distance(b)
    return tang, ting


def walk_seconds(paces: Paces, tang: float, ting: float, flights: int, run: bool) -> Fraction:
    """The seconds of a walk of *tang* 步 on the 堂 and *ting* below with *flights* flights (堂上不趨: a run runs
    only below), before rounding."""
    return (_seconds(tang) * paces.tang + _seconds(ting) * (paces.qu if run else paces.ting)
            + flights * paces.stair)


# --- a paces file -------------------------------------------------------------------------------------------------

def load_paces(path: str | Path, base: Paces | None = None) -> Paces:
    """The paces of the file at *path* over *base* (the shipped table): InvalidInputError with file:line:col for
    anything but a mapping of ``format`` and ``paces`` (kinds of ``KINDS`` to seconds within ``BOUNDS``)."""
    from yuesheng.checking import Checker
    from yuesheng.yamlload import load

    doc = load(path)
    check = Checker(doc)
    data = doc.data if isinstance(doc.data, dict) else {}
    if not isinstance(doc.data, dict):
        check.error((), "a paces file is a mapping with keys format and paces", "schema")
    check.keys(data, (), ("format", "paces", "note"))
    if data and data.get("format") != FORMAT:
        check.error(("format",), f"format {data.get('format')!r}, expected {FORMAT!r}", "schema")
    values: dict[str, Fraction] = {}
    for kind, value in (check.field(data, (), "paces", dict) or {}).items() if data else ():
        where = ("paces", kind)
        if kind not in KINDS:
            check.keys({kind: value}, ("paces",), KINDS)
            continue
        low, high = BOUNDS[kind]
        number = check.field({kind: value}, ("paces",), kind, float)
        if number is not None and not low <= number <= high:
            check.error(where, f"{kind} {number:g} s: expected {low:g} to {high:g} seconds "
                               f"({'a flight' if kind == '階' else 'a 步'})", "schema")
        elif number is not None:
            values[kind] = _seconds(number)
    if errors := [p for p in check.problems if p.severity == "error"]:
        raise InvalidInputError(errors)
    return with_values(base or shipped(), values, str(path))


def paces_yaml(paces: Paces, note: str) -> str:
    """A paces file's text (``load_paces`` reads it back to the same values, to the hundredth of a second)."""
    values = ", ".join(f"{k}: {float(paces.of(k)):.2f}".rstrip("0").rstrip(".") for k in KINDS)
    return f"format: {FORMAT}\nnote: {note!r}\npaces: {{{values}}}\n"


# --- fitting to rehearsal -----------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Observed:
    """One walk timed in rehearsal: its 步 on the 堂, below at a walk, below at a run, its flights, and the seconds
    it took (the action's measured duration less its formulas)."""

    cue: str
    tang: float
    ting: float
    qu: float
    flights: int
    seconds: Fraction

    def row(self) -> tuple[Fraction, ...]:
        return (_seconds(self.tang), _seconds(self.ting), _seconds(self.qu), Fraction(self.flights))


def observed(hall: Hall, derivations: Mapping[str, Derivation], measured: Mapping[str, Fraction]) -> list[Observed]:
    """The walks of the measured actions: each action's longest walk (the one its derivation times), taking its
    measured duration less the rest of its derivation (its formulas, its turns); an action without a walk, with two
    walks one after the other (a move made ``first``), or whose rest is longer than it took, tells nothing of paces
    and is left out."""
    out = []
    for cue, seconds in sorted(measured.items()):
        d = derivations.get(cue)
        if d is None or not d.walks or sum(name.startswith("walk") for name, _ in d.parts) != 1:
            continue
        longest = max(d.walks, key=lambda w: (w.seconds, w.who))
        walked = seconds - (d.seconds - longest.seconds)
        if walked > 0:
            tang, ting = lengths(hall, longest.route)
            out.append(Observed(cue, tang, 0.0 if longest.run else ting, ting if longest.run else 0.0,
                                longest.stairs, walked))
    return out


def fit(observed: Iterable[Observed], base: Paces, source: str) -> tuple[Paces, list[str]]:
    """The paces that best fit *observed* (least squares, exact), each kind no walk crossed kept from *base*; with
    a note for each kind kept, or fitted out of ``BOUNDS`` (kept too). ValueError when no walk was observed, or two
    kinds cannot be told apart (every walk crossing them in the same proportion)."""
    rows = list(observed)
    if not rows:
        raise ValueError("no measured action has a walk to fit paces to")
    used = [i for i, k in enumerate(KINDS) if any(r.row()[i] for r in rows)]
    solved = _least_squares([[r.row()[i] for i in used] for r in rows], [r.seconds for r in rows])
    values: dict[str, Fraction] = {}
    notes = [f"{k}: no walk measured crosses it; kept at {float(base.of(k)):g} s" for i, k in enumerate(KINDS)
             if i not in used]
    for i, value in zip(used, solved, strict=True):
        kind = KINDS[i]
        low, high = BOUNDS[kind]
        if low <= value <= high:
            values[kind] = value.limit_denominator(100)
        else:
            notes.append(f"{kind}: fitted {float(value):.2f} s, outside {low:g}–{high:g}; kept at "
                         f"{float(base.of(kind)):g} s")
    return with_values(base, values, source), notes


def _least_squares(a: list[list[Fraction]], b: list[Fraction]) -> list[Fraction]:
    """x minimising |a x − b|², by the normal equations solved exactly (ValueError if they are singular)."""
    n = len(a[0])
    m = [[sum((r[i] * r[j] for r in a), Fraction(0)) for j in range(n)]
         + [sum((r[i] * v for r, v in zip(a, b, strict=True)), Fraction(0))] for i in range(n)]
    for col in range(n):
        pivot = next((r for r in range(col, n) if m[r][col] != 0), None)
        if pivot is None:
            raise ValueError("the walks measured cannot tell the ground kinds apart: they cross them in the same "
                             "proportions (measure walks of other shapes)")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col and m[r][col] != 0:
                factor = m[r][col] / m[col][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] for i in range(n)]
