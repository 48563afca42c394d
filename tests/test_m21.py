"""MusicXML export through music21: the round trip keeps every pitch and lyric line."""

from __future__ import annotations

import re

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
        [t for t in (n.lyric.strip(), n.pitch.name, n.suzi) if t] for n in piece.notes]  # 黄清 keeps its 清


def test_each_stanza_starts_a_measure_with_its_number(repertoire, tmp_path):
    from yuesheng.outputs.musicxml import piece_to_score

    score = piece_to_score(repertoire.find("simu"))
    marks = [m.content for m in score.recurse().getElementsByClass("RehearsalMark")]
    assert marks == ["1", "2", "3", "4", "5"]


def test_note_value_option_sets_the_rhythm(repertoire):
    from yuesheng.outputs.musicxml import piece_to_score

    score = piece_to_score(repertoire.find("simu"), note_value=0.5)
    assert {n.quarterLength for n in score.recurse().notes} == {0.5}


def _measures(piece) -> int:
    return sum(len(s.line_lengths) or 1 for s in piece.stanzas)


@pytest.mark.parametrize("pid", ["luming", "yuli", "guanju", "zouyu-jiazhong-jue", "nangai"])
def test_musicxml_has_a_measure_per_line_numbered_key_clef_tempo_and_source(run, repertoire, tmp_path, pid):
    out = tmp_path / f"{pid}.musicxml"
    assert run("score", "export", pid, "-o", str(out))[0] == 0
    piece = repertoire.find(pid)
    parsed = music21.converter.parse(out)
    measures = list(parsed.recurse().getElementsByClass("Measure"))
    assert [m.number for m in measures] == list(range(1, _measures(piece) + 1))
    lines = [n for s in piece.stanzas for n in (s.line_lengths or (len(s.notes),))]
    assert [len(m.notes) for m in measures] == lines  # a bar at each line end, as engraved
    first = measures[0]
    assert first.getElementsByClass("Clef") and first.getElementsByClass("KeySignature")
    assert first.getElementsByClass("MetronomeMark")[0].number == 40  # one syllable every 1.5 s
    assert parsed.metadata.composer is None
    text = out.read_text(encoding="utf-8")
    assert "<text>·</text>" not in text and "sourced" not in text  # no placeholder lyric, no provenance as composer
    assert f"<source>{piece.source.citation() if piece.source else 'lost: ' + piece.lost.citation()}" in text


def test_guanju_spelt_in_its_jun_needs_few_accidentals(tmp_path, run):
    out = tmp_path / "guanju.musicxml"
    run("score", "export", "關雎", "-o", str(out))
    parsed = music21.converter.parse(out)
    assert parsed.recurse().getElementsByClass("KeySignature")[0].sharps == -2  # 無射 = B♭ at 黄鍾 C4
    shown = [n for n in parsed.recurse().notes if n.pitch.accidental and n.pitch.accidental.displayStatus]
    assert {n.pitch.name for n in shown} == {"E"}  # 變徵 E♮ alone is altered (C-major spelling marked most notes)


@pytest.mark.parametrize("pid", ["luming", "yuli", "guanju", "simu", "zouyu-jiazhong-jue", "nangai"])
def test_a_second_reader_verovio_reads_the_same_notes_lyrics_and_measures(run, repertoire, tmp_path, pid):
    verovio = pytest.importorskip("verovio")
    out = tmp_path / f"{pid}.musicxml"
    assert run("score", "export", pid, "-o", str(out))[0] == 0
    toolkit = verovio.toolkit()
    assert toolkit.loadData(out.read_text(encoding="utf-8"))
    mei = toolkit.getMEI()
    piece = repertoire.find(pid)
    notes = re.findall(r'<note\b[^>]*\boct="(\d)"[^>]*\bpname="([a-g])"', mei)
    steps = dict(zip("cdefgab", (0, 2, 4, 5, 7, 9, 11), strict=True))
    heads = re.findall(r"<note\b[^>]*>", mei)
    assert len(notes) == len(heads) == len(piece.notes)
    keys = [12 * (int(o) + 1) + steps[p] for o, p in notes]  # letter and octave: the spelling verovio read
    assert keys == [m.pitch.midi - (m.pitch.alter or 0) for m in music21.converter.parse(out).recurse().notes]
    syllables = re.findall(r"<syl\b[^>]*>([^<]*)</syl>", mei)
    assert syllables == [t for n in piece.notes for t in (n.lyric.strip(), n.pitch.name, n.suzi) if t]
    assert len(re.findall(r"<measure\b", mei)) == _measures(piece)
    assert re.search(r'<clef\b[^>]*shape="G"', mei) and 'mm="40"' in mei
    svg = toolkit.renderToSVG(1)
    assert svg.startswith("<svg") or "<svg" in svg[:200]
