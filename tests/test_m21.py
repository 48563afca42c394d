"""MusicXML export through music21: the round trip keeps every pitch and lyric line."""

from __future__ import annotations

import pytest

music21 = pytest.importorskip("music21")


@pytest.mark.parametrize("pid", ["luming", "yuli", "guanju", "zouyu-jiazhong-jue", "nangai"])
def test_musicxml_round_trip_keeps_pitches_and_lyrics(run, repertoire, tmp_path, pid):
    out = tmp_path / f"{pid}.musicxml"
    code, text, _ = run("score", "export", pid, "-o", str(out), "--huangzhong", "D4")
    assert code == 0 and "wrote" in text
    parsed = [n for n in music21.converter.parse(out).recurse().notes]
    piece = repertoire.find(pid)
    assert [n.pitch.midi for n in parsed] == [62 + n.pitch.semitones for n in piece.notes]
    assert [[lyric.text for lyric in n.lyrics] for n in parsed] == [
        [n.lyric.strip() or "·", n.lu, n.suzi] for n in piece.notes]


def test_each_stanza_starts_a_measure_with_its_number(repertoire, tmp_path):
    from yuesheng.outputs.musicxml import piece_to_score

    score = piece_to_score(repertoire.find("simu"))
    marks = [m.content for m in score.recurse().getElementsByClass("RehearsalMark")]
    assert marks == ["1", "2", "3", "4", "5"]


def test_note_value_option_sets_the_rhythm(repertoire):
    from yuesheng.outputs.musicxml import piece_to_score

    score = piece_to_score(repertoire.find("simu"), note_value=0.5)
    assert {n.quarterLength for n in score.recurse().notes} == {0.5}
