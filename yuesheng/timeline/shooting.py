"""The shooting in a build: rounds with and without music, their releases and the tallies' markers.

Each 耦's 節 and arrows come from ``archery``; here they are placed in the rite's time and written into the
``BuildState``: a round with music (射節) sings its piece once per 節 for each 耦 with the drum on each 節; a
round that is an action spreads its pairs' arrows across the action.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

from yuesheng.cuesheet import Count, Cue, Round
from yuesheng.music.instruments import PARTS
from yuesheng.timeline.archery import Release, Tally, shoot_with_music, shoot_without_music, tally
from yuesheng.timeline.model import EventKind
from yuesheng.timeline.music import cue_parts, play_piece
from yuesheng.timeline.state import BuildState, Point, Setting


def shejie(setting: Setting, state: BuildState, cue: Cue, start: Fraction) -> Fraction:
    """A round with music: per 耦, the piece for each 節, the drum, and the releases; when it ends."""
    archery = setting.archery
    rounds = [r for r in archery.rounds if cue.id in r.cues] if archery else []
    if not rounds or archery is None or not cue.pieces:
        return start
    rnd, ref = rounds[0], cue.pieces[0]
    parts = tuple(p for p in cue_parts(setting, cue) if not p.is_drum)
    drum = next((p for p in cue_parts(setting, cue) if p.is_drum), PARTS["鼓"])
    length = len(ref.piece.notes) * (ref.syllable or setting.syllable)
    t = start
    for n, pid in enumerate(rnd.pairs):
        if n:
            t += archery.change
        for zhong in range(1, setting.jie_total + 1):
            play_piece(setting, state, cue, ref, parts, t + (zhong - 1) * length, zhong, None)
        strokes, releases = shoot_with_music(archery, rnd, archery.pairs[pid], t, length,
                                             jie_total=setting.jie_total, seed=setting.seed, pierce=setting.pierce)
        for jie, at, accent in strokes:
            state.drum(cue.id, drum, at, piece=ref.piece.id, zhong=jie, accent=accent, rnd=rnd.id, pair=pid, jie=jie)
        _shots(state, cue.id, rnd, releases)
        t += setting.jie_total * length
    return t


def silent_rounds(setting: Setting, state: BuildState, times: Mapping[Point, Fraction]) -> None:
    """Rounds that are actions: the pairs of each action shoot one after another across it.

    A pair shoots in the round's cue unless the round gives it its own (pair_cues: the 公's pair in 大射).
    """
    archery = setting.archery
    if archery is None:
        return
    for rnd in archery.rounds:
        cue = next((setting.by_id[c] for c in rnd.cues if c in setting.by_id), None)  # the first one active
        if cue is None or cue.is_music or not rnd.pairs:
            continue
        groups: dict[str, list[str]] = {}
        for pid in rnd.pairs:
            groups.setdefault(rnd.cue_of_pair(pid) or cue.id, []).append(pid)
        for cue_id, pids in groups.items():
            start, end = times[(cue_id, "start")], times[(cue_id, "end")]
            share = (end - start) / len(pids)
            for n, pid in enumerate(pids):
                _shots(state, cue_id, rnd, shoot_without_music(archery, rnd, archery.pairs[pid], start + n * share,
                                                               share, seed=setting.seed))


TALLY_AFTER = Fraction(1)  # seconds from a round's last release to its 釋獲 marker


def _shots(state: BuildState, cue_id: str, rnd: Round, releases: list[Release]) -> None:
    """Record a pair's releases in its round and emit them."""
    state.releases.setdefault(rnd.id, []).extend(releases)
    for r in releases[:1]:
        state.cue_of_release[(rnd.id, r.pair)] = cue_id
    for r in releases:
        state.add(EventKind.RELEASE, r.time, Fraction(0), cue_id, round=r.round, pair=r.pair, jie=r.jie,
                  archer=r.archer, arrow=r.arrow, hit=r.hit, pierced=r.pierce, counted=r.counted, text=r.performer)


def tallies(setting: Setting, state: BuildState) -> tuple[Tally, ...]:
    """The 釋獲 of each counting round that shot, each with its marker just after the round's last release."""
    rounds = setting.archery.rounds if setting.archery else ()
    found = tuple(tally(r.id, state.releases[r.id]) for r in rounds
                  if r.id in state.releases and r.count is not Count.NONE)
    for t in found:
        last = max(state.releases[t.round], key=lambda r: r.time)
        state.add(EventKind.MARKER, last.time + TALLY_AFTER, Fraction(0), state.cue_of_release[(t.round, last.pair)],
                  text=f"釋獲 {t.round}: {t.announcement} (右 {t.right} 算, 左 {t.left} 算)")
    return found
