"""Rehearsal timing: the operator's log, measured durations, and the timing overlay.

The console writes a **log** (``showlog``), one JSON object a line (JSON Lines)::

    {"event": "session", "rite": "xiangshe", "variants": [], "readings": {}, "wall": "…", "mono": 12.5}
    {"event": "go", "cue": "gong-ru", "source": "page", "wall": "2026-11-30T19:30:01.250+00:00", "mono": 15.031}
    {"event": "stop", "cue": "gong-ru", "source": "key", …}      # also "fade", and "goto" (cue: the target)
    {"event": "go", …, "lost": 2}      # 2 entries before this one could not be written (a full disk)
    {"event": "refused", "cue": "gong-ru", "source": "page", "why": "…", …}   # a GO that came too late: not run

``retime`` turns logs into a **timing overlay**: for each action, the measured
time from its GO to the next GO point's GO the operator gave (the next action's, or the music's after it; the
console's own GO of armed music is passed over), less whatever the plan itself puts between the action's end and
that point's start, so parallel cues keep their shape; a GO interval broken by a jump, a new session or lost
lines is not measured. With three or more takes of an action, one lying far out is
dropped (``outliers``), and ``--exclude`` drops takes by hand. Over several logs, the
median of the takes kept, how many, and their range (``spread``: longest less shortest); a take of no time or
less (the next GO before the music between had ended) is warned and dropped, never written as 0 s::

    format: yuesheng-timing/1
    rite: xiangshe
    durations:
      gong-ru: {duration: 63.5s, n: 3, spread: 4.2s, dropped: 1}

``timeline``, ``render``, ``sheet``, ``play`` and ``console`` take ``--timing FILE``
and use these durations in place of the cue sheet's estimates.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from yuesheng.checking import Checker
from yuesheng.cuesheet import CueSheet, parse_duration
from yuesheng.errors import InvalidInputError, InvalidValueError, Problem
from yuesheng.live.commands import Command, by_event, events
from yuesheng.live.showlog import log_object, read_log_bytes
from yuesheng.timeline import TICKS_PER_SECOND, CueTiming, Measurement, Timeline
from yuesheng.yamlload import PathKey, load

TIMING_FORMAT = "yuesheng-timing/1"
AUTO = "auto"  # the source of a GO the console gave itself (``player``)
OTHER_EVENTS = ("session", "refused")  # a log's events besides the commands': a console started, a GO refused
OUTLIER_MADS = 3  # how many scaled MADs from the median a take may lie
OUTLIER_SHARE = Fraction(1, 10)  # a take this close to the median (a share of it) is never an outlier
SCALE = Fraction(14826, 10000)  # MAD × SCALE estimates the standard deviation of normal scatter


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a log."""

    line: int
    event: str
    cue: str
    source: str
    mono: float
    lost: int = 0  # entries missing before this one (the log could not be written)
    plan: str = ""  # a session's plan (``resume.plan_digest``: every cue's start and end), where the log says it


@dataclass(frozen=True, slots=True)
class Programme:
    """The variants and readings a console session played (its ``session`` line)."""

    variants: tuple[str, ...] = ()
    readings: tuple[tuple[str, str], ...] = ()


def read_log(path: str | Path, sheet: CueSheet) -> tuple[list[Entry], Programme]:
    """The entries of a log, checked against *sheet*, and the programme its sessions played;
    InvalidInputError naming the line of every problem (sessions that played different programmes too)."""
    file = str(path)
    raw = read_log_bytes(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInputError([Problem(file, None, None, "", f"not UTF-8 text ({exc.reason} at byte {exc.start})",
                                         rule="log")]) from None
    cues = {c.id for c in sheet.cues}
    entries: list[Entry] = []
    problems: list[Problem] = []
    programmes: set[Programme] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        entry, programme, message = _entry(number, line, cues, sheet.rite_id)
        session_start = entry is not None and entry.event == "session"
        if entry is not None and entries and not session_start and entry.mono < entries[-1].mono:
            message = f"time goes backwards ({entry.mono} after {entries[-1].mono})"  # within one session
        if message:
            problems.append(Problem(file, number, None, "", message, rule="log"))
            continue
        if programme is not None:
            programmes.add(programme)
            if len(programmes) > 1:
                problems.append(Problem(file, number, None, "", "this session played another programme (variants, "
                                        "readings) than the log's first: retime one programme at a time", rule="log"))
        if entry is not None:
            entries.append(entry)
    if not problems and not programmes:  # an empty file, or another JSON Lines file: not a console's log
        problems.append(Problem(file, None, None, "", "no session line: not a console log", rule="log"))
    if problems:
        raise InvalidInputError(problems)
    return entries, programmes.pop()


def _entry(number: int, line: str, cues: set[str], rite: str) -> tuple[Entry | None, Programme | None, str]:
    data = log_object(line)
    if data is None:
        return None, None, "not a JSON object (a log has one JSON object a line)"
    event, cue, mono = data.get("event"), data.get("cue", ""), data.get("mono")
    if not isinstance(event, str) or event not in log_events():
        return None, None, f"event {event!r}, expected one of {', '.join(log_events())}"
    row = by_event(event)
    if isinstance(mono, bool) or not isinstance(mono, int | float) or mono != mono or abs(mono) > 1e12:
        return None, None, f"mono {mono!r}, expected the monotonic time in seconds"
    lost = data.get("lost", 0)
    if isinstance(lost, bool) or not isinstance(lost, int) or lost < 0:
        return None, None, f"lost {lost!r}, expected how many entries are missing (a whole number)"
    if event == "session":
        if data.get("rite") != rite:
            return None, None, f"a log of rite {data.get('rite')!r}, not of {rite!r}"
        variants, readings = data.get("variants", []), data.get("readings", {})
        if not isinstance(variants, list) or not isinstance(readings, dict):
            return None, None, "session: variants is a list and readings a mapping"
        chosen = tuple(sorted((str(k), str(v)) for k, v in readings.items()))
        programme = Programme(tuple(sorted(map(str, variants))), chosen)
        plan = data.get("plan", "")
        if not isinstance(plan, str):
            return None, None, f"plan {plan!r}, expected the plan's digest"
        return Entry(number, event, "", "", float(mono), lost, plan), programme, ""
    if (row is None or not row.names_cue) and cue == "":  # before the first GO: nothing had started
        return Entry(number, event, cue, str(data.get("source", "")), float(mono), lost), None, ""
    if not isinstance(cue, str) or cue not in cues:
        return None, None, f"unknown cue {cue!r} (the log does not fit this cue sheet)"
    return Entry(number, event, cue, str(data.get("source", "")), float(mono), lost), None, ""


def mixed_plans(logs: list[tuple[str, list[Entry]]]) -> str:
    """Where *logs* (each named) played different plans, said plainly ('' if they played one, or do not say):
    each plan with the first session line that played it."""
    first: dict[str, str] = {}
    for name, entries in logs:
        for entry in entries:
            if entry.event == "session" and entry.plan:
                first.setdefault(entry.plan, f"{name}:{entry.line}")
    if len(first) < 2:
        return ""
    return ("these logs played different plans (another --timing file, or the cue sheet's durations changed): "
            + ", ".join(f"plan {plan} at {where}" for plan, where in first.items()))


def log_events() -> list[str]:
    """Every event a log may hold."""
    return [OTHER_EVENTS[0], *events(), *OTHER_EVENTS[1:]]


@dataclass(frozen=True, slots=True)
class Take:
    """One measured duration of an action: where its GO is (the log, the line, the session: 1 is the log's first)."""

    cue: str
    seconds: Fraction
    log: str
    line: int
    session: int


@dataclass(frozen=True, slots=True)
class Measured:
    """An action's duration: the median of the takes kept, their spread (longest less shortest), those dropped."""

    duration: Fraction
    n: int
    spread: Fraction
    dropped: tuple[Take, ...] = ()


def measure(timeline: Timeline, entries: list[Entry], log: str = "",
            void: Callable[[Take], None] = lambda _: None) -> dict[str, list[Take]]:
    """Each action's takes: from its GO to the next GO point's the operator gave (music included: the console's GO
    points), less what the plan puts between the action's end and that point's start. Unbroken by a jump, a new
    session or lost lines; music's GOs the console gave itself (armed music following its pre-wait) are passed
    over, since they measure the plan; the time the music was paused (PAUSE to RESUME, or to the command that
    resumed it) is left out, since the rite was held. A take of no time or less (a GO pressed before the music the
    plan puts between had ended) is no measurement: it is given to *void*, never kept."""
    from yuesheng.live.cueing import go_points  # with mido: not for every command that reads a timing file

    points = go_points(timeline, 0, music=True)
    place = {t.cue.id: n for n, t in enumerate(points)}
    out: dict[str, list[Take]] = {}
    last: Entry | None = None
    session = 0
    held, paused = 0.0, None  # seconds paused since the last GO; when the pause in progress began
    for entry in entries:
        session += entry.event == "session"
        row = by_event(entry.event)
        if row is not None and row.command is Command.PAUSE and paused is None:
            paused = entry.mono
        elif paused is not None and (row is None or row.command not in (Command.PAUSE, Command.LEVEL)):
            held, paused = held + max(0.0, entry.mono - paused), None  # any other command resumes first
        if entry.event == "session" or entry.lost or (row is not None and row.target):
            last = None
        if row is None or not row.starts or entry.cue not in place:
            continue
        at = place[entry.cue]
        if last is not None and at > place[last.cue] and all(p.cue.is_music for p in points[place[last.cue] + 1:at]):
            if entry.source == AUTO:
                continue
            take = _take(points[place[last.cue]], points[at], last, entry, log, max(session, 1), held)
            (out.setdefault(take.cue, []).append if take.seconds > 0 else void)(take)
        last = None if points[at].cue.is_music else entry
        held = 0.0
    return out


def _take(action: CueTiming, following: CueTiming, go: Entry, end: Entry, log: str, session: int,
          held: float = 0.0) -> Take:
    """The take of *action* from its GO to the GO of the point *following*, less *held* seconds paused."""
    beyond = following.start_tick - action.end_tick  # what the plan puts after the action
    seconds = Fraction(round((end.mono - go.mono - held) * 1000), 1000) - Fraction(beyond, TICKS_PER_SECOND)
    return Take(action.cue.id, seconds, log, go.line, session)


def outliers(takes: list[Take]) -> list[Take]:
    """The takes that lie out, by the median absolute deviation (MAD), when there are three or more.

    A take is dropped when it lies more than ``OUTLIER_MADS`` scaled MADs (1.4826 × MAD, the standard deviation
    of normal scatter) from the median, and more than ``OUTLIER_SHARE`` of the median: takes within 10 % of the
    median are always kept, however alike the others are.
    """
    if len(takes) < 3:
        return []
    middle = statistics.median(t.seconds for t in takes)
    mad = statistics.median(abs(t.seconds - middle) for t in takes)
    bound = max(OUTLIER_MADS * SCALE * mad, OUTLIER_SHARE * middle)
    return [t for t in takes if abs(t.seconds - middle) > bound]


def retime(timeline: Timeline, logs: list[list[Entry]], *, names: list[str] | None = None,
           excluded: Callable[[Take], bool] = lambda _: False,
           void: Callable[[Take], None] = lambda _: None) -> dict[str, Measured]:
    """Every measured action's median over *logs* (named *names*), outliers and the *excluded* takes dropped; a
    take of no time or less given to *void* (``measure``)."""
    pooled: dict[str, list[Take]] = {}
    for entries, name in zip(logs, names or [""] * len(logs), strict=True):
        for cue, takes in measure(timeline, entries, name, void).items():
            pooled.setdefault(cue, []).extend(takes)
    order = {t.cue.id: n for n, t in enumerate(timeline.cues)}
    out: dict[str, Measured] = {}
    for cue, takes in sorted(pooled.items(), key=lambda kv: order[kv[0]]):
        chosen = [t for t in takes if not excluded(t)]
        lying = outliers(chosen)
        kept = [t for t in chosen if t not in lying]
        if kept:
            values = [t.seconds for t in kept]
            out[cue] = Measured(Fraction(statistics.median(values)), len(kept), max(values) - min(values),
                                tuple(lying))
    return out


def format_seconds(value: Fraction) -> str:
    """63.5 → '63.5s' (milliseconds at most)."""
    text = f"{float(value):.3f}".rstrip("0").rstrip(".")
    return f"{text}s"


def timing_yaml(rite: str, durations: dict[str, Measured]) -> str:
    """The overlay file's text."""
    lines = [f"format: {TIMING_FORMAT}", f"rite: {rite}", "durations:" + ("" if durations else " {}")]
    lines += [f"  {cue}: {{duration: {format_seconds(m.duration)}, n: {m.n}, spread: {format_seconds(m.spread)}"
              + (f", dropped: {len(m.dropped)}" if m.dropped else "") + "}" for cue, m in durations.items()]
    return "\n".join(lines) + "\n"


def _measurement(check: Checker, item: dict[str, object], where: PathKey) -> Measurement | None:
    """One action's entry of a timing file: its duration, and the takes and spread where given."""
    values = {}
    for key, default in (("duration", ""), ("spread", "0s")):
        try:
            values[key] = parse_duration(item.get(key, default))
        except InvalidValueError as exc:
            check.error(where + (key,), str(exc), "duration")
            return None
    takes = item.get("n", 1)
    if type(takes) is not int or takes < 1:
        check.error(where + ("n",), f"n {takes!r}: expected the number of takes, a whole number of at least 1",
                    "schema")
        return None
    return Measurement(values["duration"], takes, values["spread"])


def load_timing(path: str | Path, sheet: CueSheet) -> dict[str, Measurement]:
    """An overlay's measured durations by action id; InvalidInputError with file:line:col of every problem."""
    doc = load(path)
    check = Checker(doc)
    data = doc.data if isinstance(doc.data, dict) else {}
    if not isinstance(doc.data, dict):
        check.error((), "a timing file is a mapping with keys format, rite, durations", "schema")
    check.keys(data, (), ("format", "rite", "durations"))
    if data and data.get("format") != TIMING_FORMAT:
        check.error(("format",), f"format {data.get('format')!r}, expected {TIMING_FORMAT!r}", "schema")
    if data and data.get("rite") != sheet.rite_id:
        check.error(("rite",), f"timing of rite {data.get('rite')!r}, not of {sheet.rite_id!r}", "reference")
    actions = {c.id for c in sheet.cues if not c.is_music}
    out: dict[str, Measurement] = {}
    for cue, item in (check.field(data, (), "durations", dict) or {}).items() if data else ():
        where: PathKey = ("durations", cue)
        if cue not in actions:
            check.error(where, f"unknown action {cue!r} (measured durations are for the sheet's actions)", "reference",
                        key=True)
            continue
        if (item := check.mapping(item, where, "{duration, n}")) is None:
            continue
        check.keys(item, where, ("duration", "n", "spread", "dropped"))
        if (measurement := _measurement(check, item, where)) is not None:
            out[cue] = measurement
    errors = [p for p in check.problems if p.severity == "error"]
    if errors:
        raise InvalidInputError(errors)
    return out
