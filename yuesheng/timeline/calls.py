"""唱聲: the 獲者's and 負侯者's calls on 宫 and 商 (and the unbroken 許諾), and how long a 唱聲 cue lasts.

A 唱聲 cue sounds its calls a second apart; with ``hold`` its last call lasts until the named action ends
(大射: 又諾以商至乏聲止) or for the given time. Hit calls (獲) follow every hit of the rounds the cue answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from yuesheng.cuesheet import Cue, MusicKind, rounds_called
from yuesheng.music.instruments import PARTS
from yuesheng.music.lulu import Degree, Lu, Pitch
from yuesheng.timeline.archery import Release
from yuesheng.timeline.model import EventKind, ticks
from yuesheng.timeline.state import BuildState, Point, Setting
from yuesheng.timeline.tables import tables

CALL_LENGTH = Fraction(4, 5)


def calls(setting: Setting, state: BuildState, times: Mapping[Point, Fraction]) -> None:
    """唱聲: hit calls on 宫 then 商 for every hit; 許諾 and 諾 where the cue sheet puts them.

    The 均 of 宫 and 商 is the sheet's ``call_jun`` (or ``--call-jun``), or under reading ``changjun=sui-yue`` that of
    the piece sounding at the call. The unbroken 許諾 (不絶) is on no 律 (part 許諾), or with ``xunuo=zhi`` on 徵.
    """
    fixed = setting.options.call_jun or setting.sheet.call_jun
    sounding = _sounding(setting, state) if setting.readings.get("changjun") == "sui-yue" else None
    for cue in setting.cues:
        if cue.music is not MusicKind.CHANGSHENG or not cue.calls:
            continue
        if not state.emit:  # measuring: one event a call
            hits = len(_covered_hits(setting, state, cue)) if "獲" in cue.words else 1
            state.count(cue.id, hits * len(cue.calls))
            continue
        caller = "負侯者" if any("負侯" in setting.sheet.performers[p].name for p in cue.performers) else "獲者"
        start, end = times[(cue.id, "start")], times[(cue.id, "end")]
        if "獲" in cue.words:
            for release in _covered_hits(setting, state, cue):
                for n, degree in enumerate(cue.calls):
                    t = release.time + 1 + n
                    _call(setting, state, cue.id, caller, _jun(fixed, sounding, t), degree, "獲", t, CALL_LENGTH,
                          release)
        else:
            syllable = "諾" if "諾" in cue.words else cue.words[:1]
            for n, degree in enumerate(cue.calls):
                lasting = degree == "不絶" or (n == len(cue.calls) - 1 and _held(cue))
                length = max(end - start - n, CALL_LENGTH) if lasting else CALL_LENGTH
                _call(setting, state, cue.id, caller, _jun(fixed, sounding, start + n), degree, syllable, start + n,
                      length, None)
    if any(c.music is MusicKind.CHANGSHENG and "不絶" in c.calls for c in setting.cues):
        state.notice(tables().notices["bujue"]["zhi" if setting.readings.get("xunuo") == "zhi" else "wu-lu"])
    if sounding is not None:
        state.notice(tables().notices["sui-yue"])


Sounding = list[tuple[int, int, Lu]]  # (first tick, last tick, 均) of each run of a piece's notes, by first tick


def _sounding(setting: Setting, state: BuildState) -> Sounding:
    """Where each piece with a 宮調 sounds, and its 均: from the notes built (none while only counting)."""
    modes = {ref.piece.id: ref.piece.mode.jun for c in setting.cues for ref in c.pieces if ref.piece.mode}
    spans: dict[tuple[str, str], list[int]] = {}
    for e in state.events:
        if e.kind is EventKind.NOTE and e.piece in modes:
            span = spans.setdefault((e.cue, e.piece), [e.start_tick, e.start_tick + e.length_ticks])
            span[0], span[1] = min(span[0], e.start_tick), max(span[1], e.start_tick + e.length_ticks)
    return sorted((a, b, modes[piece]) for (_, piece), (a, b) in spans.items())


def _jun(fixed: Lu, sounding: Sounding | None, t: Fraction) -> Lu:
    """The 均 of a call at *t*: that of the piece sounding then (the latest begun), else *fixed*."""
    if sounding:
        at = ticks(t)
        playing = [jun for a, b, jun in sounding if a <= at < b]
        if playing:
            return playing[-1]
    return fixed


def calls_end(cue: Cue, start: Fraction, stop: Fraction | None, times: Mapping[Point, Fraction]) -> Fraction:
    """When a 唱聲 cue ends: its calls a second apart, the last held until its walk ends or for its hold."""
    if cue.hold_until:
        return max(times[(cue.hold_until, "end")], start + len(cue.calls) - 1 + CALL_LENGTH)
    if cue.hold is not None:
        return start + max(len(cue.calls) - 1, 0) + cue.hold
    return stop if stop is not None else start + CALL_LENGTH * 2


def _held(cue: Cue) -> bool:
    """Whether the cue's last call is held (hold: until a walk ends, or a duration)."""
    return bool(cue.hold_until) or cue.hold is not None


def _covered_hits(setting: Setting, state: BuildState, cue: Cue) -> list[Release]:
    """The hits of the rounds a hit-call cue answers."""
    rounds = setting.archery.rounds if setting.archery else ()
    return [r for rnd in rounds_called(cue, setting.cues, rounds) for r in state.releases.get(rnd.id, []) if r.hit]


UNPITCHED_KEY = 60  # the Breath Noise of the unbroken 許諾: a fixed key, no 律


def _call(setting: Setting, state: BuildState, cue_id: str, caller: str, jun: Lu, degree: str, syllable: str,
          t: Fraction, length: Fraction, release: Release | None) -> None:
    if degree == "不絶" and setting.readings.get("xunuo") != "zhi":  # 不以宮商: a voice on no 律
        caller, key, cents = "許諾", UNPITCHED_KEY, 0.0
    else:
        step = {"宫": Degree.GONG, "商": Degree.SHANG, "不絶": Degree.ZHI}[degree].value
        key, cents = setting.real.midi(Pitch(jun).up(step))
    state.add(EventKind.CALL, t, length, cue_id, part=caller, key=key, cents=cents, velocity=PARTS[caller].velocity,
              text=syllable, degree=degree, round=release.round if release else "",
              pair=release.pair if release else "", arrow=release.arrow if release else 0)
