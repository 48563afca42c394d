"""The shooting in a build: rounds with and without music, their releases, tallies and the hit calls.

Functions of the builder (``builder._Builder``, passed as ``b``): they schedule each 耦's 節 and arrows
(``archery``) and sound the 獲者's and 負侯者's calls on 宫 and 商.
"""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING

from yuesheng.timeline.archery import Release, shoot_with_music, shoot_without_music
from yuesheng.cuesheet import Cue, MusicKind, Round, rounds_called
from yuesheng.music.instruments import PARTS
from yuesheng.music.lulu import Degree, Pitch
from yuesheng.timeline.model import EventKind

if TYPE_CHECKING:
    from yuesheng.timeline.builder import _Builder

CALL_LENGTH = Fraction(4, 5)


def round_cue(b: _Builder, rnd: Round) -> Cue | None:
    """The round's cue in this programme (the first of its alternatives that is active)."""
    return next((b.by_id[c] for c in rnd.cues if c in b.by_id), None)

def rounds_of(b: _Builder, cue: Cue) -> list[Round]:
    rounds = b.archery.rounds if b.archery else ()
    return [r for r in rounds if cue.id in r.cues]

def shejie(b: _Builder, cue: Cue, start: Fraction) -> Fraction:
    """A round with music: per 耦, the piece for each 節, the drum, and the releases."""
    rounds = rounds_of(b, cue)
    archery = b.archery
    if not rounds or archery is None or not cue.pieces:
        return start
    rnd, ref = rounds[0], cue.pieces[0]
    parts = tuple(p for p in b.parts(cue) if not p.is_drum)
    drum = next((p for p in b.parts(cue) if p.is_drum), PARTS["鼓"])
    length = len(ref.piece.notes) * (ref.syllable or b.syllable)
    t = start
    for n, pid in enumerate(rnd.pairs):
        if n:
            t += archery.change
        pair = archery.pairs[pid]
        for zhong in range(1, b.jie_total + 1):
            b.play_piece(cue, ref, parts, t + (zhong - 1) * length, zhong, None)
        strokes, releases = shoot_with_music(archery, rnd, pair, t, length, jie_total=b.jie_total, seed=b.seed,
                                             pierce=b.pierce)
        for jie, at, accent in strokes:
            b.drum(cue.id, drum, at, ref.piece.id, jie, accent=accent, rnd=rnd.id, pair=pid, jie=jie)
        shots(b, cue.id, rnd, releases)
        t += b.jie_total * length
    return t

def shots(b: _Builder, cue_id: str, rnd: Round, releases: list[Release]) -> None:
    """Record a pair's releases in its round and emit them."""
    b.releases.setdefault(rnd.id, []).extend(releases)
    for r in releases[:1]:
        b.cue_of_release[(rnd.id, r.pair)] = cue_id
    for r in releases:
        b.add(EventKind.RELEASE, r.time, Fraction(0), cue_id, round=r.round, pair=r.pair, jie=r.jie,
                 archer=r.archer, arrow=r.arrow, hit=r.hit, pierced=r.pierce, counted=r.counted, text=r.performer)

def silent_rounds(b: _Builder) -> None:
    """Rounds that are actions: the pairs of each action shoot one after another across it.

    A pair shoots in the round's cue unless the round gives it its own (pair_cues: the 公's pair in 大射).
    """
    archery = b.archery
    if archery is None:
        return
    for rnd in archery.rounds:
        cue = round_cue(b, rnd)
        if cue is None or cue.is_music or not rnd.pairs:
            continue
        groups: dict[str, list[str]] = {}
        for pid in rnd.pairs:
            groups.setdefault(rnd.cue_of_pair(pid) or cue.id, []).append(pid)
        for cue_id, pids in groups.items():
            start, end = b.times[(cue_id, "start")], b.times[(cue_id, "end")]
            share = (end - start) / len(pids)
            for n, pid in enumerate(pids):
                shots(b, cue_id, rnd, shoot_without_music(archery, rnd, archery.pairs[pid], start + n * share,
                                                            share, seed=b.seed))

# -- calls ---------------------------------------------------------------------------------------

def calls(b: _Builder) -> None:
    """唱聲: hit calls on 宫 then 商 for every hit; 許諾 and 諾 where the cue sheet puts them."""
    gong = Pitch(b.options.call_jun or b.sheet.call_jun)
    degrees = {"宫": gong, "商": gong.up(Degree.SHANG.value), "不絶": gong.up(Degree.ZHI.value)}
    for cue in b.cues:
        if cue.music is not MusicKind.CHANGSHENG or not cue.calls:
            continue
        caller = "負侯者" if any("負侯" in b.sheet.performers[p].name for p in cue.performers) else "獲者"
        start, end = b.times[(cue.id, "start")], b.times[(cue.id, "end")]
        if "獲" in cue.words:
            for release in covered_hits(b, cue):
                for n, degree in enumerate(cue.calls):
                    call(b, cue.id, caller, degrees[degree], degree, "獲", release.time + 1 + n, CALL_LENGTH,
                              release)
        else:
            syllable = "諾" if "諾" in cue.words else cue.words[:1]
            for n, degree in enumerate(cue.calls):
                lasting = degree == "不絶" or (n == len(cue.calls) - 1 and held(cue))
                length = max(end - start - n, CALL_LENGTH) if lasting else CALL_LENGTH
                call(b, cue.id, caller, degrees[degree], degree, syllable, start + n, length, None)
    if any(c.music is MusicKind.CHANGSHENG and "不絶" in c.calls for c in b.cues):
        b.notices["鄉射's 許諾 is one unbroken sound, not on 宫 or 商 (聲不絶, 5-25a): yuesheng holds it on "
                     "徵 of the calls' 均, a choice of its own."] = None

def held(cue: Cue) -> bool:
    """Whether the cue's last call is held (hold: until a walk ends, or a duration)."""
    return bool(cue.hold_until) or cue.hold is not None

def calls_end(b: _Builder, cue: Cue, start: Fraction, stop: Fraction | None) -> Fraction:
    """When a 唱聲 cue ends: its calls a second apart, the last held until its walk ends or for its hold."""
    if cue.hold_until:
        return max(b.times[(cue.hold_until, "end")], start + len(cue.calls) - 1 + CALL_LENGTH)
    if cue.hold is not None:
        return start + max(len(cue.calls) - 1, 0) + cue.hold
    return stop if stop is not None else start + CALL_LENGTH * 2

def covered_hits(b: _Builder, cue: Cue) -> list[Release]:
    """The hits of the rounds a hit-call cue answers."""
    rounds = b.archery.rounds if b.archery else ()
    return [r for rnd in rounds_called(cue, b.cues, rounds) for r in b.releases.get(rnd.id, []) if r.hit]

def call(b: _Builder, cue_id: str, caller: str, pitch: Pitch, degree: str, syllable: str, t: Fraction, length: Fraction,
         release: Release | None) -> None:
    key, cents = b.real.midi(pitch)
    b.add(EventKind.CALL, t, length, cue_id, part=caller, key=key, cents=cents, velocity=PARTS[caller].velocity,
             text=syllable, degree=degree, round=release.round if release else "",
             pair=release.pair if release else "", arrow=release.arrow if release else 0)
