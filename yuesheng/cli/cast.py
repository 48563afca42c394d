"""``yuesheng sides`` (each person's own book: his cues, where he stands and goes, what he does and says) and
``yuesheng cast`` (every role and its head count, the identities the texts state, the groups, and the fewest
performers who can play every part). Both need the rite's blocking complete; an incomplete one is refused naming
the cues that lack one."""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.cli.common import check_output_arg, emit, production_of, sequencer_options
from yuesheng.errors import InvalidInputError, Problem, UnknownNameError, UsageError

if TYPE_CHECKING:
    from yuesheng.production import Production
    from yuesheng.staging.cast import Cast
    from yuesheng.staging.persons import Person

SIDES_SUFFIX = {"pdf": ".pdf", "html": ".html", "json": ".json"}


def grounded(production: Production) -> None:
    """Refuse a rite whose blocking is missing or incomplete, naming the cues that lack one (exit 1)."""
    from yuesheng.staging.paths import blocking_beside
    from yuesheng.staging.rite import loaded, staged_rite

    if production.staged is not None:
        return
    sheet = production.sheet
    path = blocking_beside(sheet)
    if path is None:
        raise InvalidInputError([Problem(sheet.file, None, None, "", f"no blocking for {sheet.rite_id}: expected "
                                         f"blocking/{sheet.rite_id}.yaml beside the cue sheet's folder; every cue "
                                         "lacks one", "staging")])
    options = production.options
    try:
        staged_rite(sheet, *sheet.programme(options.variants, options.readings), path)
    except InvalidInputError as exc:
        cues = _cues_of(exc.problems, loaded(path, sheet).cues)
        head = Problem(str(path), None, None, "", f"the blocking is not complete: {len(exc.problems)} problem(s); "
                       f"the cues that lack one: {', '.join(cues) or 'none named (see below)'}", "staging")
        raise InvalidInputError([head, *exc.problems]) from None
    raise InvalidInputError([Problem(str(path), None, None, "", "the blocking stages but its ground could not be "
                                     "used (yuesheng validate says why)", "staging")])


def _cues_of(problems: tuple[Problem, ...], cues: Any) -> list[str]:
    """The cues *problems* are about: named (``cues.ID``, 'cue ID'), or the cue of the blocking at the line."""
    starts = sorted((c.line, cid) for cid, c in cues.items() if c.line is not None)
    out: list[str] = []
    for p in problems:
        named = re.match(r"cues\.([\w-]+)", p.path) or re.search(r"\bcue ([\w-]+)", p.message)
        if named:
            out.append(named[1])
        elif p.line is not None:
            before = [cid for line, cid in starts if line <= p.line]
            if before:
                out.append(before[-1])
    return list(dict.fromkeys(out))


def chosen(production: Production, names: list[str], everyone: bool) -> list[Person]:
    """The persons *names* name (``staging.persons``), or every person; UsageError naming the nearest names."""
    from yuesheng.staging.persons import person, persons

    staged = production.staged
    assert staged is not None
    if everyone == bool(names):
        raise UsageError("name the persons (--person NAME, repeatable) or ask for --all, not both")
    if everyone:
        return persons(production.sheet, staged.same)
    try:
        return [person(n, production.sheet, staged.same) for n in names]
    except UnknownNameError as exc:
        raise UsageError(str(exc)) from None


def cmd_sides(args: argparse.Namespace) -> str:
    from yuesheng.web.sides import print_pdf, sides_data, sides_html

    suffix = SIDES_SUFFIX[args.format]
    if args.output and Path(args.output).suffix.lower() != suffix:
        raise UsageError(f"-o {args.output}: expected a {suffix} file for --format {args.format}")
    check_output_arg(args)
    production = production_of(args)
    grounded(production)
    people = chosen(production, args.person, args.all)
    if not args.output:
        args.output = f"{production.sheet.rite_id}-sides{suffix}"
        check_output_arg(args)
    data = sides_data(production, people)
    what = f"the sides of {len(data['people'])} person(s) of {production.sheet.rite_id}"
    if args.format == "json":
        return emit(args, json.dumps(data, ensure_ascii=False, indent=1) + "\n", what)
    html = sides_html(data, args.paper)
    return emit(args, html if args.format == "html" else print_pdf(html), what)


def cmd_cast(args: argparse.Namespace) -> str:
    from yuesheng.datafiles import rite_of
    from yuesheng.staging.cast import cast

    check_output_arg(args)
    production = production_of(args)
    grounded(production)
    sheet, staged, motion = production.sheet, production.staged, production.motion
    assert staged is not None and motion is not None
    found = cast(sheet, staged, motion, rite_of(sheet.rite_id, sheet.rite_name))
    data = cast_data(found)
    text = (json.dumps(data, ensure_ascii=False, indent=1) + "\n" if args.format == "json"
            else cast_text(found, sheet.rite_name))
    return emit(args, text, f"the cast of {sheet.rite_id}")


def _t(t: float) -> float | None:
    return None if math.isinf(t) else round(t, 1)


def cast_data(found: Cast) -> dict[str, Any]:
    """The cast as plain data."""
    return {
        "roles": [{"id": r.id, "name": r.name, "names": [{"id": i, "name": n} for i, n in r.names],
                   "count": r.count, "members": list(r.members), "group": r.group or None} for r in found.roles],
        "identities": [{"same": list(h.identity.same), "names": list(h.labels), "source": str(h.identity),
                        "estimate": not h.identity.page, "held": h.how, "cue": h.cue or None}
                       for h in found.identities],
        "groups": [{"id": r.id, "name": r.name, "count": r.count, "number": r.group} for r in found.roles if r.group],
        "performers": {"least": len(found.performers), "proven": found.proven, "most_at_once": found.most_at_once,
                       "at": _t(found.at), "each": [{"number": p.number, "parts": list(p.parts)}
                                                   for p in found.performers]},
        "on_the_ground": {part: [[_t(a), _t(b)] for a, b in spans] for part, spans in sorted(found.spans.items())},
        "never_on_the_ground": list(found.off),
    }


def cast_text(found: Cast, rite_name: str) -> str:
    """The cast as the terminal prints it."""
    from yuesheng.timeline.model import clock

    how = {"one": "stood as one by the blocking", "counted": "counted as one (never on the ground together)",
           "apart": "the blocking keeps them apart: on the ground together {at}; counted apart"}
    lines = [f"{rite_name}: {len(found.roles)} roles, "
             f"{sum(r.count for r in found.roles)} heads; the fewest performers {len(found.performers)}"
             f"{'' if found.proven else ' (the least found; not proven least)'}", "", "roles:"]
    for r in found.roles:
        names = f" — also {', '.join(f'{n} ({i})' for i, n in r.names)}" if r.names else ""
        lines.append(f"  {r.name} ({r.id}) ×{r.count}{names}")
    lines += ["", "identities:"]
    for h in found.identities:
        when = f"at cue {h.cue}" if h.cue else "from the start"
        lines.append(f"  {' = '.join(h.labels)}: {h.identity} — {how[h.how].format(at=when)}")
    groups = [r for r in found.roles if r.group]
    if groups:
        lines += ["", "groups:"]
        lines += [f"  {r.name} ({r.id}): {r.count} on the ground — {r.group}" for r in groups]
    at = "before the first cue" if math.isinf(found.at) else f"at {clock(round(found.at * 960))}"
    lines += ["", f"performers: {len(found.performers)} ({found.most_at_once} parts are on the ground together "
              f"{at}); those who double:"]
    doubled = found.doubled
    lines += [f"  {p.number}: {' / '.join(p.parts)}" for p in doubled] or ["  none"]
    if found.off:
        lines += ["", f"never on the ground: {', '.join(found.off)}"]
    return "\n".join(lines) + "\n"


def _add_sides(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    p.add_argument("--person", action="extend", nargs="+", default=[], metavar="NAME",
                   help="persons: 主人, 衆賓 2 (quoted), zhongbin#2, 司射 (several, or repeated); a group named alone "
                        "is each of its members")
    p.add_argument("--all", action="store_true", help="every person of the rite")
    p.add_argument("--format", choices=tuple(SIDES_SUFFIX), default="pdf",
                   help="pdf (printed by Chromium), html (to print from a browser) or json")
    p.add_argument("--paper", choices=("a5", "a4"), default="a5", help="the page size printed on (default a5)")
    p.set_defaults(func=cmd_sides)


def _add_cast(p: argparse.ArgumentParser) -> None:
    sequencer_options(p)
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.set_defaults(func=cmd_cast)


ARGUMENTS = {"sides": _add_sides, "cast": _add_cast}
