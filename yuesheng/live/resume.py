"""Resuming a show from its log (``console --resume LOG``): where the log says the rite stands.

The show a log holds is its last session that was not itself a resume, with the
resumes that followed it (``"resumed": true`` on their ``session`` line). Its
command lines (``go``, ``stop``, ``fade``, ``goto``: the events of ``commands.COMMANDS``) become the commands
the player replays, timed by their wall clock relative to the moment of resuming (so the
time the laptop was down counts, as it did in the hall). Each session line must
name this rite, these variants and readings and this plan (``plan``: a digest
of every cue's start and end, which ``--timing`` changes); else the log is
refused with the difference named. Lines that are not whole JSON objects (lost
in a crash) or name no cue of this timeline are skipped, with a warning each.

The log's clock is trusted only where it can be: a log whose lines lie in the future (beyond ``SKEW``) or whose show
began more than ``STALE`` ago (a log of another day, or a machine whose clock was wrong) is resumed with a warning
(``Resume.clock``, for the terminal and the page), and its elapsed time is counted from its own first and last lines:
the time since its last line is not counted, since nothing says how long it was.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from yuesheng.errors import InvalidInputError, Problem
from yuesheng.live.commands import by_event, value_of
from yuesheng.live.control import Press
from yuesheng.live.showlog import log_object, read_log_bytes
from yuesheng.timeline import Timeline

SKEW = timedelta(seconds=5)  # a log line this far in the future is another clock's
STALE = timedelta(days=1)  # a show begun longer ago than this is not the one the laptop went down in


def plan_digest(timeline: Timeline) -> str:
    """A short digest of every cue's id, start and end tick: equal for the same sheet, variants, readings, timing."""
    text = "\n".join(f"{t.cue.id} {t.start_tick} {t.end_tick}" for t in timeline.cues)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def session_fields(timeline: Timeline, *, resumed: bool) -> dict[str, Any]:
    """What a console writes on a log's ``session`` line, so that the log can be resumed and retimed."""
    return {"rite": timeline.rite_id, "variants": sorted(timeline.variants), "readings": dict(timeline.readings),
            "plan": plan_digest(timeline), "resumed": resumed}


@dataclass(frozen=True, slots=True)
class Resume:
    """The commands to replay, times in seconds relative to the moment of resuming (all ≤ 0), and the warnings."""

    presses: tuple[Press, ...]
    warnings: tuple[str, ...]
    clock: str = ""  # why the log's own clock was not trusted (a warning for the page as well), or ''

    def on_clock(self, now: float) -> tuple[Press, ...]:
        """The commands at their moments on a clock that read *now* when the log was read (the player's)."""
        return tuple(replace(p, at=now + p.at) for p in self.presses)


def read_resume(path: str | Path, timeline: Timeline, now_wall: datetime) -> Resume:
    """The show in the log at *path*, checked against *timeline*; InvalidInputError naming the line of a
    session of another rite, variants, readings or plan."""
    file = str(path)
    raw = read_log_bytes(path)
    lines = list(enumerate(raw.decode("utf-8", errors="replace").splitlines(), 1))
    parsed: list[tuple[int, dict[str, Any]]] = []
    warnings: list[str] = []
    for number, line in lines:
        data = log_object(line)
        if data is None:
            if line.strip():
                warnings.append(f"{file}:{number}: not a whole log line (lost in a crash?): skipped")
            continue
        parsed.append((number, data))
    show = _last_show(parsed)
    if not show:
        raise InvalidInputError([Problem(file, None, None, "", "no session line: not a console log", rule="log")])
    problems = [Problem(file, n, None, "", why, rule="log") for n, d in show if d.get("event") == "session"
                for why in _mismatch(d, timeline)]
    if problems:
        raise InvalidInputError(problems)
    if "plan" not in show[0][1]:
        warnings.append(f"{file}:{show[0][0]}: the log does not record its plan (an older console): "
                        "its timing is taken to be this one")
    cues = {t.cue.id for t in timeline.cues}
    clock, reference = _clock(show, now_wall)
    if clock:
        warnings.append(f"{file}: {clock}")
    presses = []
    for number, data in show:
        press, why = _press(data, cues, reference)
        if why:
            warnings.append(f"{file}:{number}: {why}: skipped")
        elif press is not None:
            presses.append(press)
    return Resume(tuple(presses), tuple(warnings), clock)


def _clock(show: list[tuple[int, dict[str, Any]]], now_wall: datetime) -> tuple[str, datetime]:
    """The moment the log's times are measured back from: now, or, where the log's clock cannot be trusted, its own
    last line (with why)."""
    walls = [w for _, d in show if (w := _wall(d)) is not None]
    if not walls:
        return "", now_wall
    first, last = min(walls), max(walls)
    if last > now_wall + SKEW:
        why = f"its lines run to {_stamp(last)}, {_span(last - now_wall)} ahead of this machine's clock"
    elif now_wall - first > STALE:
        why = f"its show began at {_stamp(first)}, {_span(now_wall - first)} ago"
    else:
        return "", now_wall
    return (f"the log's clock cannot be trusted ({why}): its elapsed time is counted from its own first and last "
            f"lines ({_span(last - first)}), and the time since its last line is not counted"), last


def _wall(data: dict[str, Any]) -> datetime | None:
    """A line's wall-clock time with its time zone, or None."""
    try:
        wall = datetime.fromisoformat(str(data.get("wall")))
    except ValueError:
        return None
    return wall if wall.tzinfo is not None else None


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S %Z").strip()


def _span(span: timedelta) -> str:
    """'57 years', '3 days', '2 h 5 min', '1 min 40 s': a span rounded as a message shows it."""
    seconds = abs(span.total_seconds())
    if seconds >= 365 * 86400:
        return f"{seconds / (365.25 * 86400):,.0f} years"
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:,.0f} days"
    if seconds >= 3600:
        return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60)} min"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def _last_show(parsed: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The lines from the last session that was not a resume to the end."""
    starts = [i for i, (_, d) in enumerate(parsed) if d.get("event") == "session" and not d.get("resumed")]
    return parsed[starts[-1]:] if starts else []


def _mismatch(session: dict[str, Any], timeline: Timeline) -> list[str]:
    """What differs between a session line and this timeline, each said plainly."""
    out = []
    if session.get("rite") != timeline.rite_id:
        return [f"a log of rite {session.get('rite')!r}, not of {timeline.rite_id!r}"]
    variants = session.get("variants", [])
    if not isinstance(variants, list) or sorted(map(str, variants)) != sorted(timeline.variants):
        out.append(f"played with variants {variants!r}, this console has {sorted(timeline.variants)!r}")
    readings = session.get("readings", {})
    if not isinstance(readings, dict) or {str(k): str(v) for k, v in readings.items()} != dict(timeline.readings):
        out.append(f"played with readings {readings!r}, this console has {dict(timeline.readings)!r}")
    plan = session.get("plan")
    if not out and plan is not None and plan != plan_digest(timeline):
        out.append("played with other timing (another --timing file, or the cue sheet's durations changed): "
                   f"plan {plan}, this console's {plan_digest(timeline)}")
    return out


def _press(data: dict[str, Any], cues: set[str], now_wall: datetime) -> tuple[Press | None, str]:
    """A logged command as a Press timed relative to now; (None, why) for a line that cannot be one."""
    event = data.get("event")
    if event in ("session", "refused"):  # a refused GO changed nothing
        return None, ""
    row = by_event(str(event))
    if row is None:
        return None, f"event {event!r} is not a command"
    cue = data.get("cue", "")
    if not isinstance(cue, str) or (cue and cue not in cues) or (row.names_cue and not cue):
        return None, f"cue {cue!r} is not in this timeline"
    wall = _wall(data)
    if wall is None:
        return None, f"wall {str(data.get('wall'))[:40]!r} is not a time with its time zone"
    ago = (now_wall - wall).total_seconds()
    source = str(data.get("source", ""))
    number, why = value_of(row, data.get("value"))
    if why:
        return None, why
    return Press(row.command, -max(0.0, ago), source, cue, bool(data.get("silence", False)), number), ""
