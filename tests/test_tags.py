"""A render's tags (``outputs/tags.py``): written by ``audio`` into FLAC and WAV, read back from the header, and
checked by ``sheet --audio`` (the page's ``#audio-data``) and ``video --audio``."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import soundfile
from test_audio import needs_fluidsynth

from yuesheng import build, load
from yuesheng.errors import AudioError
from yuesheng.live.resume import plan_digest
from yuesheng.outputs.audio import TAG_PIECE, Tags, read_tags, set_tags
from yuesheng.outputs.condense import condense, excerpt
from yuesheng.outputs.tags import parse, rite_map
from yuesheng.timeline import seconds, ticks

DATA = Path(__file__).parent / "data"
GOLDEN = str(DATA / "golden.yaml")
MINI = str(DATA / "mini_xiangshe.yaml")
ISLAND = re.compile(r'<script type="application/json" id="audio-data">(.*?)</script>')


def _island(page: Path) -> dict[str, Any]:
    found = ISLAND.findall(page.read_text(encoding="utf-8"))
    assert len(found) == 1
    data: dict[str, Any] = json.loads(found[0])
    return data


def _silent(path: Path, tags: Tags | None = None) -> None:
    """A second of silence, with *tags* (none: an untagged file)."""
    subtype = "VORBIS" if path.suffix == ".ogg" else "PCM_16"
    with soundfile.SoundFile(path, "w", 8000, 1, subtype) as audio:
        set_tags(audio, tags)
        audio.write(np.zeros(8000))


@pytest.mark.parametrize("suffix", [".wav", ".flac", ".ogg"])
def test_a_document_longer_than_a_wav_string_is_read_back_whole(tmp_path, suffix):
    """The 大射's --music-only map is longer than one LIST/INFO string holds: it goes in pieces, read back whole."""
    document = json.dumps({"yuesheng": 1, "cuts": [[n * 1000, 999, 500] for n in range(400)]}, separators=(",", ":"))
    assert len(document) > 2 * TAG_PIECE
    path = tmp_path / f"long{suffix}"
    _silent(path, Tags("yuesheng: x", document))
    assert read_tags(path) == document
    assert soundfile.SoundFile(path).title == "yuesheng: x"


def test_an_untagged_file_and_a_file_that_is_not_audio_are_told_apart(tmp_path):
    plain = tmp_path / "plain.wav"
    _silent(plain)
    assert read_tags(plain) == ""
    with pytest.raises(AudioError, match="no yuesheng tags"):
        parse(read_tags(plain), str(plain))
    text = tmp_path / "notes.flac"
    text.write_text("not audio")
    with pytest.raises(AudioError, match="not an audio file"):
        read_tags(text)


@needs_fluidsynth
@pytest.mark.parametrize("suffix", [".flac", ".wav"])
def test_a_render_holds_its_rite_options_and_plan(run, tmp_path, suffix):
    out = tmp_path / f"g{suffix}"
    code, _, err = run("audio", GOLDEN, "--tuning", "sanfen", "-o", str(out))
    assert code == 0, err
    tags = parse(read_tags(out), str(out))
    timeline = build(load(GOLDEN))
    assert tags.rite == "golden" and tags.options["tuning"] == "sanfen" and tags.options["variants"] == ""
    assert tags.plan == plan_digest(timeline) and tags.length == timeline.duration_ticks
    assert tags.span is None and tags.cuts is None and rite_map(tags) is None
    assert soundfile.SoundFile(out).title == "yuesheng: golden"


@needs_fluidsynth
def test_stems_say_their_part(run, tmp_path):
    code, _, err = run("audio", GOLDEN, "--stems", str(tmp_path), "--part", "鼓", "--format", "wav")
    assert code == 0, err
    tags = parse(read_tags(tmp_path / "golden-鼓.wav"), "stem")
    assert tags.render["parts"] == "鼓" and tags.plan == plan_digest(build(load(GOLDEN)))


@needs_fluidsynth
def test_the_page_refers_to_a_matching_render_beside_it(run, tmp_path):
    (tmp_path / "sound").mkdir()
    (tmp_path / "pages").mkdir()
    audio = tmp_path / "sound" / "the rite.flac"
    assert run("audio", GOLDEN, "-o", str(audio))[0] == 0
    page = tmp_path / "pages" / "golden.html"
    code, _, err = run("sheet", GOLDEN, "--audio", str(audio), "-o", str(page))
    assert code == 0, err
    data = _island(page)
    assert data == {"src": "../sound/the%20rite.flac", "map": None, "rite": "golden",
                    "digest": plan_digest(build(load(GOLDEN)))}
    code, _, err = run("sheet", GOLDEN, "-o", str(tmp_path / "silent.html"))
    assert code == 0 and not ISLAND.findall((tmp_path / "silent.html").read_text(encoding="utf-8"))


@needs_fluidsynth
def test_a_render_of_another_rite_or_options_or_untagged_is_refused_with_the_difference(run, tmp_path):
    golden, mini, plain = tmp_path / "g.wav", tmp_path / "m.flac", tmp_path / "plain.wav"
    assert run("audio", GOLDEN, "-o", str(golden))[0] == 0
    assert run("audio", MINI, "-o", str(mini))[0] == 0
    _silent(plain)
    page = tmp_path / "p.html"
    cases = [((MINI, "--audio", str(golden)), "a render of golden, not of mini-xiangshe"),
             ((MINI, "--variant", "caipin", "--audio", str(mini)), "variants: (not given) in the file, caipin here"),
             ((GOLDEN, "--tuning", "sanfen", "--audio", str(golden)), "tuning: equal in the file, sanfen here"),
             ((GOLDEN, "--audio", str(plain)), "no yuesheng tags")]
    for argv, why in cases:
        code, _, err = run("sheet", *argv, "-o", str(page))
        assert code == 1 and why in err, err
        assert not page.exists()


@needs_fluidsynth
def test_a_music_only_render_maps_the_rite_to_the_file_as_condense_moved_it(run, tmp_path):
    audio = tmp_path / "g-music.flac"
    assert run("audio", GOLDEN, "--music-only", "--gap", "1s", "-o", str(audio))[0] == 0
    page = tmp_path / "g.html"
    assert run("sheet", GOLDEN, "--audio", str(audio), "-o", str(page))[0] == 0
    points = _island(page)["map"]
    timeline = build(load(GOLDEN))
    condensed = condense(timeline, gap_ticks=ticks(Fraction(1)))
    assert condensed.cuts and len(points) == 2 * len(condensed.cuts) + 2
    assert points[-1] == [seconds(timeline.duration_ticks),
                          seconds(timeline.duration_ticks - condensed.removed_ticks)]
    rites, files = [p[0] for p in points], [p[1] for p in points]
    for rite, moved in zip(timeline.cues, condensed.timeline.cues, strict=True):  # each cue where condense put it
        for a, b in ((rite.start_tick, moved.start_tick), (rite.end_tick, moved.end_tick)):
            assert np.interp(seconds(a), rites, files) == pytest.approx(seconds(b), abs=1 / 960)


@needs_fluidsynth
def test_an_excerpts_map_is_its_offset(run, tmp_path):
    audio = tmp_path / "g-part.wav"
    assert run("audio", GOLDEN, "--from", "bai-zhi", "--to", "ge", "-o", str(audio))[0] == 0
    page = tmp_path / "g.html"
    assert run("sheet", GOLDEN, "--audio", str(audio), "-o", str(page))[0] == 0
    timeline = build(load(GOLDEN))
    cues = {t.cue.id: t for t in timeline.cues}
    start, end = cues["bai-zhi"].start_tick, cues["ge"].end_tick
    assert excerpt(timeline, start, end).cues  # the span is the one audio's --from/--to gives
    assert _island(page)["map"] == [[seconds(start), 0.0], [seconds(end), seconds(end - start)]]


@needs_fluidsynth
def test_a_placed_render_says_where_it_is_heard_from(run, tmp_path):
    placed = str(DATA / "placed.yaml")
    out = tmp_path / "bells.wav"
    code, _, err = run("audio", placed, "--part", "鐘", "--listener", "0,-3.5,south", "-o", str(out))
    assert code == 0, err
    tags = parse(read_tags(out), str(out))
    assert tags.rite == "placed" and tags.plan == plan_digest(build(load(placed)))
    assert tags.render == {"parts": "鐘", "listener": "(0, -3.5) facing south"}
