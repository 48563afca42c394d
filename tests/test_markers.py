"""Audacity labels and CUE sheets: one label per cue, per 終 of a piece and per stanza, one track per music cue,
each at its time."""

from __future__ import annotations

from pathlib import Path

import pytest

from yuesheng import build, load
from yuesheng.outputs.markers import audacity_labels, cue_sheet, cue_time, tracks
from yuesheng.timeline import TICKS_PER_SECOND

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def timeline(repertoire):
    return build(load(DATA / "mini_xiangshe.yaml", repertoire=repertoire))


def test_a_label_per_cue_at_its_start_and_end(timeline):
    lines = [line for line in audacity_labels(timeline).splitlines() if "終)" not in line]
    assert len(lines) == len(timeline.cues)
    for line, t in zip(lines, timeline.cues, strict=True):
        start, end, text = line.split("\t")
        assert float(start) == pytest.approx(t.start_tick / TICKS_PER_SECOND, abs=1e-6)
        assert float(end) == pytest.approx(t.end_tick / TICKS_PER_SECOND, abs=1e-6)
        assert text.startswith(f"{t.cue.id}: ")
    assert "heyue: ♪合樂 關雎" in lines[0]


def test_a_label_per_zhong_of_a_piece_and_per_stanza_where_its_notes_sound(timeline):
    """合樂 關雎×3: three 終 of 80 s (80 syllables of 1 s), each with its stanzas of 16, 32 and 32 syllables; 射節
    騶虞×5 for each 耦: ten 終 of two stanzas. Each label starts where the first note of its 終 or stanza sounds."""
    labels = [line.split("\t") for line in audacity_labels(timeline).splitlines() if "終)" in line]
    guanju = [(float(a), float(b), text) for a, b, text in labels if "關雎" in text]
    assert [g for g in guanju if "章" not in g[2]] == [(80.0 * n, 80.0 * (n + 1), f"heyue: 關雎 (第{n + 1}終)")
                                                      for n in range(3)]
    assert [(a, b) for a, b, text in guanju if text.startswith("heyue: 關雎 (第2終) 第")] == [
        (80, 96), (96, 128), (128, 160)]
    onsets = {e.start_tick / TICKS_PER_SECOND for e in timeline.events if e.piece and e.kind.value in ("note", "drum")}
    assert all(float(a) in onsets for a, _, _ in labels)
    zouyu = [text for _, _, text in labels if "騶虞" in text and "章" not in text]
    assert len(zouyu) == 10 and zouyu[0] == "she-san: 騶虞 (san-ou 第1終)"
    assert sum("騶虞" in text and "章" in text for _, _, text in labels) == 20


@pytest.mark.parametrize(("tick", "text"), [(0, "00:00:00"), (TICKS_PER_SECOND * 61 + 960 // 2, "01:01:37"),
                                            (TICKS_PER_SECOND * 12 * 3600, "720:00:00"), (12, "00:00:00"),
                                            (13, "00:00:01")])
def test_cue_times_are_minutes_seconds_and_75ths_never_before_the_cue(tick, text):
    assert cue_time(tick) == text


def test_a_cue_sheet_has_a_track_per_music_cue_at_its_start(timeline):
    text = cue_sheet(timeline, "mini.flac")
    assert text.startswith("\ufeff") and 'FILE "mini.flac" WAVE' in text and 'TITLE "鄉射禮"' in text
    groups = tracks(timeline)
    music = [t for t in timeline.cues if t.cue.is_music]
    assert [t for g in groups for t in g] == music
    indexes = [line.split()[-1] for line in text.splitlines() if line.strip().startswith("INDEX 01")]
    assert indexes == [cue_time(g[0].start_tick) for g in groups]
    assert len(set(indexes)) == len(indexes)  # cues starting together share a track: none is empty
    assert text.count("TRACK ") == len(groups) and "TRACK 01 AUDIO" in text


def test_breathe_holds_half_of_each_sung_line_end_but_a_stanzas_last_and_says_it_is_editorial(timeline):
    """The audio's --breath (outputs/practice.breathe): 關雎×3 has 17 line ends that are not a stanza's last (the
    book's ’), so 51 halved notes; 騶虞×5 for each of two 耦, 4 a 終: 40; nothing else changes."""
    from yuesheng.outputs.practice import BREATH_NOTICE, breathe

    breathed = breathe(timeline)
    changed = [(a, b) for a, b in zip(timeline.events, breathed.events, strict=True) if a != b]
    assert all(a.part == "歌" and b == a._replace(length_ticks=a.length_ticks // 2) for a, b in changed)
    guanju = next(ref.piece for t in timeline.cues for ref in t.cue.pieces if ref.piece.title == "關雎")
    assert sum(len(s.line_ends) for s in guanju.stanzas) == 17
    assert sum(a.piece == guanju.id for a, _ in changed) == 51
    assert sum("zouyu" in a.piece for a, _ in changed) == 10 * 4  # 二章章三句: two line ends a stanza
    first = next(a for a, _ in changed)  # 闗闗雎鳩 | 在河之洲: the fourth syllable of the first 終
    assert first.text == "鳩" and first.start_tick == 3 * first.length_ticks
    assert breathed.notices[-1] == BREATH_NOTICE and "editorial" in BREATH_NOTICE
