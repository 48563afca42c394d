"""MIDI: round trip through mido and music21, determinism, UTF-8 text, tuning messages, note order."""

from __future__ import annotations

import gc
import io
import json
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from pathlib import Path

import mido
import pytest

from yuesheng import build, load
from yuesheng.errors import OutputError
from yuesheng.music.lulu import LU, Realization, Tuning, cents_offset
from yuesheng.music.repertoire import data_dir
from yuesheng.outputs.midi import TEMPO, decode_octave_tuning, live_messages, midi_bytes, to_midi, write_midi
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Options, Timeline

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def golden(repertoire) -> Timeline:
    return build(load(DATA / "golden.yaml", repertoire=repertoire))


def _read(data: bytes) -> mido.MidiFile:
    return mido.MidiFile(file=io.BytesIO(data), charset="utf-8")


def test_round_trip_through_mido(golden):
    midi = _read(midi_bytes(golden))
    assert midi.type == 1 and midi.ticks_per_beat == 960
    names = [t.name for t in midi.tracks]
    assert names == ["鄉射禮 (golden)", "歌", "瑟", "鐘", "獲者", "鼓", "射"]
    sounding = [e for e in golden.events if e.kind in (EventKind.NOTE, EventKind.DRUM, EventKind.CALL)]
    ons = [m for t in midi.tracks for m in t if m.type == "note_on"]
    assert len(ons) == len(sounding)
    got: Counter[tuple[int, int | None]] = Counter()
    for track in midi.tracks[1:]:
        now = 0
        for m in track:
            now += m.time
            if m.type == "note_on":
                got[(now, m.note)] += 1
    assert got == Counter((e.start_tick, e.key) for e in sounding)


def test_lyrics_and_markers_survive_in_utf8(golden):
    midi = _read(midi_bytes(golden))
    lyrics = [m.text for m in midi.tracks[1] if m.type == "lyrics"]
    sung = [e.text for e in golden.events if e.kind is EventKind.NOTE and e.part == "歌"]
    assert lyrics == sung and lyrics[:3] == ["彼", "茁", "者"]
    markers = [m.text for m in midi.tracks[0] if m.type == "marker"]
    assert "bin-ru: 賓入" in markers and any("釋獲" in m for m in markers)
    calls = [m.text for m in midi.tracks[4] if m.type == "lyrics"]
    assert set(calls) == {"獲"}
    assert any("modern realization" in m.text for m in midi.tracks[0] if m.type == "text")


def test_drums_are_on_channel_ten(golden):
    midi = _read(midi_bytes(golden))
    drums = next(t for t in midi.tracks if t.name == "鼓")
    assert {m.channel for m in drums if m.type == "note_on"} == {9}


def test_same_timeline_same_bytes(repertoire):
    sheet = load(DATA / "mini_xiangshe.yaml", repertoire=repertoire)
    options = Options(realization=Realization(62, Tuning.SANFEN))
    assert midi_bytes(build(sheet, options)) == midi_bytes(build(sheet, options))


def test_sanfen_octave_tuning_message(golden):
    from dataclasses import replace

    midi = to_midi(replace(golden, realization=Realization(62, Tuning.SANFEN)))
    (sysex,) = [m for m in midi.tracks[0] if m.type == "sysex"]
    assert list(sysex.data[:4]) == [0x7F, 0x7F, 0x08, 0x09]
    channels, cents = decode_octave_tuning(sysex)
    assert 9 not in channels and {0, 1, 4, 8} <= set(channels)
    for the_lu in LU:  # 黄鍾 on D: 林鍾 is A, +1.96 cents
        assert cents[(62 + the_lu.index) % 12] == pytest.approx(cents_offset(the_lu, Tuning.SANFEN), abs=0.02)
    assert not [m for m in to_midi(golden).tracks[0] if m.type == "sysex"]


def test_a_repeated_note_is_never_cut_by_its_own_note_off():
    from yuesheng.music.lulu import Realization as R

    events = tuple(Event(start_tick=t, length_ticks=480, kind=EventKind.NOTE, cue="c", part="瑟", key=60,
                         velocity=80) for t in (0, 480, 960))
    track = to_midi(Timeline(rite="t", rite_id="t", events=events, realization=R())).tracks[1]
    kinds = [(m.type, m.time) for m in track if m.type.startswith("note")]
    assert kinds == [("note_on", 0), ("note_off", 480), ("note_on", 0), ("note_off", 480), ("note_on", 0),
                     ("note_off", 480)]


def test_an_independent_reader_agrees(golden, tmp_path):
    pytest.importorskip("music21")
    from notation import parsed

    path = tmp_path / "golden.mid"
    write_midi(golden, path)
    score = parsed(path)
    sung = sorted(n.pitch.midi for p in score.parts if "歌" in (p.partName or "") for n in p.recurse().notes)
    assert sung == sorted(e.key for e in golden.events if e.kind is EventKind.NOTE and e.part == "歌")


def test_write_is_atomic(golden, tmp_path, monkeypatch):
    path = tmp_path / "out.mid"
    path.write_bytes(b"old")

    def boom(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", boom)
    with pytest.raises(OutputError, match="cannot write .*out.mid: disk full"):
        write_midi(golden, path)
    assert path.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.mid"]


def test_a_cue_sheet_overrides_a_general_midi_program(repertoire, tmp_path):
    text = (DATA / "golden.yaml").read_text(encoding="utf-8").replace(
        "  se: {name: 瑟, player: gong}", "  se: {name: 瑟, player: gong, program: 46}")
    path = tmp_path / "harp.yaml"
    path.write_text(text, encoding="utf-8")
    midi = _read(midi_bytes(build(load(path, repertoire=repertoire))))
    se = next(t for t in midi.tracks if t.name == "瑟")
    assert [m.program for m in se if m.type == "program_change"] == [46]


def test_markers_and_lyrics_show_private_use_codes_as_characters(golden):
    from dataclasses import replace

    events = tuple(e._replace(text="當&KR0925;") if e.kind in (EventKind.ACTION, EventKind.NOTE) and e.text else e
                   for e in golden.events)
    midi = _read(midi_bytes(replace(golden, events=events)))
    texts = [m.text for t in midi.tracks for m in t if m.type in ("marker", "lyrics")]
    assert any(t.endswith(": 當楣") for t in texts) and "當楣" in texts
    assert not any("&KR" in t for t in texts)


def test_a_gap_beyond_the_midi_delta_limit_is_bridged_not_written_invalid():
    from yuesheng.music.lulu import Realization as R
    from yuesheng.outputs.midi import MAX_DELTA

    later = 2 * MAX_DELTA + 12345  # about 155 hours after the first note: no single delta can hold it
    events = (Event(start_tick=0, length_ticks=960, kind=EventKind.NOTE, cue="a", part="瑟", key=60, velocity=80),
              Event(start_tick=later, length_ticks=960, kind=EventKind.NOTE, cue="b", part="瑟", key=62, velocity=80))
    data = midi_bytes(Timeline(rite="t", rite_id="t", events=events, realization=R()))
    midi = _read(data)
    for track in midi.tracks:
        assert all(0 <= m.time <= MAX_DELTA for m in track)
    se = next(t for t in midi.tracks if t.name == "瑟")
    now, ons = 0, []
    for m in se:
        now += m.time
        if m.type == "note_on":
            ons.append((now, m.note))
    assert ons == [(0, 60), (later, 62)]
    assert [m.text for m in se if m.type == "text"] == ["", ""]  # the two bridges, empty text events
    assert data == midi_bytes(Timeline(rite="t", rite_id="t", events=events, realization=R()))


def test_a_key_outside_midi_is_an_error_not_a_traceback():
    from yuesheng.errors import MidiError
    from yuesheng.music.lulu import Realization as R

    events = (Event(start_tick=0, length_ticks=960, kind=EventKind.NOTE, cue="a", part="瑟", key=140, velocity=80),)
    with pytest.raises(MidiError, match="note_on .*140"):
        midi_bytes(Timeline(rite="t", rite_id="t", events=events, realization=R()))
    assert gc.isenabled()  # paused while writing, running again after the error


def test_writing_pauses_the_collector_and_restores_it(golden, monkeypatch):
    seen: list[bool] = []
    real = mido.Message.bytes

    def noting(self):
        seen.append(gc.isenabled())
        return real(self)

    monkeypatch.setattr(mido.Message, "bytes", noting)
    gc.disable()
    try:
        midi_bytes(golden)
        assert not gc.isenabled()  # a caller's choice kept
    finally:
        gc.enable()
    midi_bytes(golden)
    assert gc.isenabled() and seen and not any(seen)


def _mido_writes(timeline: Timeline) -> bytes:
    buffer = io.BytesIO()
    to_midi(timeline).save(file=buffer)
    return buffer.getvalue()


SANFEN = Options(realization=Realization(62, Tuning.SANFEN))


SLOW = pytest.mark.slow  # every shipped rite: the README's test command runs them, a quick pytest the golden sheet


@pytest.mark.parametrize("sheet, options", [
    ("golden", Options()), ("golden", SANFEN), pytest.param("xiangyinjiu", Options(), marks=SLOW),
    pytest.param("xiangyinjiu", Options(readings={"heyue": "li-rugui"}, realization=Realization(62, Tuning.SANFEN)),
                 marks=SLOW),
    pytest.param("xiangshe", Options(readings={"shihuo": "drum-only"}, syllable=Fraction(6, 5)), marks=SLOW),
    pytest.param("yanli", Options(variants=frozenset({"yan-she"}), seed=3), marks=SLOW),
    pytest.param("dashe", Options(), marks=SLOW), pytest.param("dashe", SANFEN, marks=SLOW)])
def test_midi_bytes_are_the_bytes_mido_writes(repertoire, sheet, options):
    """Our chunk writer (each distinct message encoded once) gives mido's own writer's file, which mido reads back."""
    path = DATA / f"{sheet}.yaml" if sheet == "golden" else data_dir("cues") / f"{sheet}.yaml"
    timeline = build(load(path, repertoire=repertoire), options)
    data = midi_bytes(timeline)
    assert data == _mido_writes(timeline)
    back, made = _read(data), to_midi(timeline)
    assert [list(track) for track in back.tracks] == [list(track) for track in made.tracks]
    assert any(m.type == "sysex" for m in back.tracks[0]) == (options.realization is not None)


def test_a_bridged_gap_and_running_status_are_written_as_mido_writes():
    from yuesheng.music.lulu import Realization as R
    from yuesheng.outputs.midi import MAX_DELTA

    events = (Event(start_tick=0, length_ticks=960, kind=EventKind.NOTE, cue="a", part="瑟", key=60, velocity=80),
              Event(start_tick=0, length_ticks=480, kind=EventKind.NOTE, cue="a", part="瑟", key=64, velocity=80),
              Event(start_tick=3 * MAX_DELTA, length_ticks=960, kind=EventKind.NOTE, cue="b", part="瑟", key=62,
                    velocity=90))
    timeline = Timeline(rite="t", rite_id="t", events=events, realization=R(62, Tuning.SANFEN))
    assert midi_bytes(timeline) == _mido_writes(timeline)


def _file_messages(data: bytes) -> list[tuple[float, mido.Message]]:
    """The channel and system-exclusive messages of a MIDI file, each with its time in seconds (960 ticks/s)."""
    midi = _read(data)
    found = []
    for track in midi.tracks:
        tick = 0
        for message in track:
            tick += message.time
            if not message.is_meta:
                found.append((mido.tick2second(tick, midi.ticks_per_beat, TEMPO), message.copy(time=0)))
    return found


@pytest.mark.parametrize("sheet, options", [("golden", Options()),
                                            ("xiangyinjiu", Options(realization=Realization(62, Tuning.SANFEN)))])
def test_live_messages_are_the_messages_of_the_midi_file(repertoire, sheet, options):
    """What live playback sends is what the file holds, at the same times; only the file closes each part."""
    path = DATA / f"{sheet}.yaml" if sheet == "golden" else data_dir("cues") / f"{sheet}.yaml"
    timeline = build(load(path, repertoire=repertoire), options)
    setup, timed = live_messages(timeline)
    live = [(0.0, m) for m in setup] + [(tick / TICKS_PER_SECOND, m.copy(time=0)) for tick, _, m in timed]
    written = _file_messages(midi_bytes(timeline))
    closing = [(t, m) for t, m in written if m.type == "control_change" and m.control in (120, 123)]
    assert {t for t, _ in closing} == {timeline.duration_ticks / TICKS_PER_SECOND}
    assert len(closing) == 2 * len({m.channel for _, m in written if m.type == "note_on"})
    played = Counter((round(t, 9), str(m)) for t, m in written if (t, m) not in closing)
    assert played == Counter((round(t, 9), str(m)) for t, m in live)
    assert any(m.type == "sysex" for _, m in live) == (options.realization is not None)


# --- importing mido (outputs/midoload) --------------------------------------------------------------------------------


def _probe(code: str) -> str:
    """What ``python -c CODE`` prints, in a process of its own (importing mido is what is tried)."""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_mido_is_imported_with_its_own_version_and_without_importlib_metadata():
    """Start-up: ``mido.version`` is read from mido's METADATA directly, the very line ``importlib.metadata`` gives."""
    probe = ("import json, sys; import yuesheng.outputs.midi, mido; "
             "heavy = sorted(m for m in sys.modules if m in ('importlib.metadata', 'email', 'zipfile')); "
             "import importlib.metadata, packaging.version; "
             "print(json.dumps([heavy, str(mido.version_info), importlib.metadata.version('mido'), "
             "mido.version_info == packaging.version.Version(importlib.metadata.version('mido')), "
             "mido.version is sys.modules['mido.version'], any('midoload' in repr(f) for f in sys.meta_path)]))")
    heavy, version, metadata, equal, attribute, finder_left = json.loads(_probe(probe))
    assert heavy == [] and version == metadata and equal and attribute and not finder_left


def test_without_its_metadata_file_mido_reads_its_version_itself_and_every_other_finder_is_asked():
    probe = ("import json, sys; import yuesheng.outputs.midoload as load; asked = []\n"
             "class Spy:\n"
             "    def find_spec(self, name, path=None, target=None):\n"
             "        asked.append(name)\n"
             "sys.meta_path.insert(0, Spy()); load.installed_version = lambda folder: None\n"
             "load.install_version_finder(); import mido\n"
             "print(json.dumps([asked.count('mido.version'), mido.version.__file__.endswith('version.py'), "
             "str(mido.version_info)]))")
    assert json.loads(_probe(probe)) == [1, True, str(mido.version_info)]


def test_mido_s_version_is_the_one_metadata_file_s_else_mido_reads_it_itself(tmp_path):
    from yuesheng.outputs.midoload import installed_version

    assert installed_version(tmp_path) is None  # no dist-info: mido's own version module runs
    info = tmp_path / "mido-1.3.3.dist-info"
    info.mkdir()
    metadata = info / "METADATA"
    metadata.write_text("Metadata-Version: 2.1\nName: mido\nVersion: 1.3.3\n\nVersion: 9\n", encoding="utf-8")
    assert installed_version(tmp_path) == "1.3.3"
    metadata.write_text("Metadata-Version: 2.1\nName: mido\n\nVersion: 9\n", encoding="utf-8")
    assert installed_version(tmp_path) is None  # a Version: in the body is not the header
    (tmp_path / "mido-1.2.0.dist-info").mkdir()
    (tmp_path / "mido-1.2.0.dist-info" / "METADATA").write_text("Version: 1.2.0\n", encoding="utf-8")
    assert installed_version(tmp_path) is None  # two installs: which one imports is importlib.metadata's to say


def test_the_version_module_made_for_mido_has_the_names_of_mido_s_own():
    """mido's own ``version.py`` and the one ``midoload`` makes define the same public names with the same values:
    a mido whose version module grows a name fails here, not in a user's ``render``."""
    names = ("import json, sys{}; import mido; v = sys.modules['mido.version']; "
             "print(json.dumps({{k: str(getattr(v, k)) for k in sorted(vars(v)) if not k.startswith('__') "
             "or k == '__version__'}}))")
    own, made = (json.loads(_probe(names.format(before))) for before in ("", "; import yuesheng.outputs.midi"))
    assert set(own) - {"packaging", "importlib_metadata"} == set(made) - {"packaging"}
    assert all(own[k] == made[k] for k in ("__version__", "version_info"))
