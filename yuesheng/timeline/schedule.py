"""Scheduling: when each cue starts and ends, in exact ``Fraction`` seconds.

A cue starts with or after its anchor (``cuesheet.anchors.dependencies``), or when the previous cue ends (when
it starts, if that is music running until an action). An action lasts its measured duration
(``Options.timing``), else its duration derived from the rite's blocking (where it is complete, docs/staging.md),
else the cue sheet's estimate. Music lasts as long as the function given for it says: the builder plays it (or counts
it) there, since the length of music held until an action (樂闋) depends on where that action starts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from fractions import Fraction

from yuesheng.cuesheet import Cue, MusicKind, dependencies, evaluation_order
from yuesheng.errors import ScheduleError
from yuesheng.timeline.model import ticks
from yuesheng.timeline.state import Point, Setting

# the end of a music cue: (cue, start, the start of the action it runs until or None, the times so far) → end
MusicEnd = Callable[[Cue, Fraction, Fraction | None, Mapping[Point, Fraction]], Fraction]


def schedule(setting: Setting, music_end: MusicEnd) -> dict[Point, Fraction]:
    """The start and end of every active cue, by (cue id, "start" | "end"); ScheduleError if anchors form a cycle."""
    deps = dependencies(setting.cues)
    order, cycle = evaluation_order(deps)
    if cycle:
        raise ScheduleError(f"{setting.sheet.file}: anchors form a cycle: {' → '.join(cycle)}")
    times: dict[Point, Fraction] = {}
    for cue_id, point in order:
        cue = setting.by_id[cue_id]
        if point == "start":
            after = [times[d] for d in deps[(cue_id, "start")]]
            at = after[0] if after else Fraction(0)
            if cue.start and cue.start.delay:
                at += cue.start.delay
            # its anchor (and delay), or later: an action a 射節 runs until waits for it
            times[(cue_id, point)] = max(at, *after[1:]) if len(after) > 1 else at
        elif not cue.is_music:
            times[(cue_id, point)] = times[(cue_id, "start")] + duration(cue, setting)
        else:
            held = cue.end_at and cue.music is not MusicKind.SHEJIE
            stop = times.get((cue.end_at, "start")) if held else None
            times[(cue_id, point)] = music_end(cue, times[(cue_id, "start")], stop, times)
    return times


def duration(cue: Cue, setting: Setting) -> Fraction:
    """An action's duration: measured in rehearsal (``--timing``) if it was, else derived from the rite's blocking
    where it is complete (walks and formulas, unless the blocking keeps the estimate), else the cue sheet's estimate."""
    measured = setting.options.timing.get(cue.id)
    return measured.duration if measured is not None else unmeasured(cue, setting)


def unmeasured(cue: Cue, setting: Setting) -> Fraction:
    """An action's duration without rehearsal: derived from the blocking, or the cue sheet's estimate."""
    staged = setting.ground.cues.get(cue.id) if setting.ground is not None else None
    if staged is not None and staged.duration is not None:
        return staged.duration
    return cue.duration or Fraction(0)


def estimate(cue: Cue, setting: Setting) -> int | None:
    """An action's unmeasured duration in ticks (derived or estimated), where a measured duration replaced it."""
    return ticks(unmeasured(cue, setting)) if cue.id in setting.options.timing and not cue.is_music else None


def basis(cue: Cue, setting: Setting) -> str:
    """What an action's unmeasured duration is made of, in a staged rite: its walks and formulas, or why the cue
    sheet's estimate is kept ('' elsewhere)."""
    staged = setting.ground.cues.get(cue.id) if setting.ground is not None and not cue.is_music else None
    return staged.basis if staged is not None else ""
