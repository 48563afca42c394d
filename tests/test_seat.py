"""Hearing the rite from a seat (issue 21): the blocking read from the cue sheet, the listener, the physics, and
measurements on short placed renders (seconds of audio) and on the MIDI controllers."""

from __future__ import annotations

import io
import math
import shutil
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import mido
import numpy as np
import pytest
import soundfile

from yuesheng.cli import main
from yuesheng.cuesheet import Cite, Cue, Member
from yuesheng.cuesheet.model import MusicKind
from yuesheng.errors import AudioError, UsageError
from yuesheng.music.lulu import Realization
from yuesheng.outputs.audio import SOUNDFONTS
from yuesheng.outputs.midi import midi_bytes
from yuesheng.outputs.placement import (
    FACINGS,
    Listener,
    Physics,
    Place,
    absorption_db_per_m,
    air_cutoff,
    blocking,
    hear,
    listener,
    midi_controllers,
)
from yuesheng.outputs.sofa import DEFAULT as SOFA
from yuesheng.outputs.sofa import load as load_sofa
from yuesheng.timeline import CueTiming, Event, EventKind, Timeline, ticks

has_fluidsynth = shutil.which("fluidsynth") is not None and any(p.is_file() for p in SOUNDFONTS)


def needs_fluidsynth(test: Callable[..., None]) -> Callable[..., None]:
    """A test that renders through FluidSynth: marked ``synth``, and skipped where FluidSynth is not installed."""
    skipped = pytest.mark.skipif(not has_fluidsynth, reason="fluidsynth and fluid-soundfont-gm not installed")(test)
    marked: Callable[..., None] = pytest.mark.synth(skipped)
    return marked


S = ticks(Fraction(1))
CITE = Cite("5-21a", "樂正適西方命弟子贊工遷樂于下")
PLAN = {  # the 鄉射 plan's places (cues/xiangshe.yaml), in 步
    "bin-xi": (-2, -3.5, "賓席"), "gong-tang": (-2, -0.5, "西階上少東"), "gong-xia": (4, 1.5, "阼階下之東南"),
    "fa": (-5, 29.33, "乏"), "hou": (0, 46, "侯"), "tang-east": (8, -3.5, "東"),
}


def _layout() -> dict[str, Member]:
    return {pid: Member(id=pid, name=name, x=x, y=y) for pid, (x, y, name) in PLAN.items()}


def _note(at: float, cue: str, part: str = "瑟", key: int = 84) -> Event:
    """A half-second note; high enough (C6 and its overtones) for the head's shadow, which begins near 1.2 kHz."""
    kind = EventKind.CALL if part == "獲者" else EventKind.NOTE
    return Event(start_tick=round(at * S), length_ticks=S // 2, kind=kind, cue=cue, part=part, key=key, velocity=100)


def _music(cue_id: str, index: int, at: float, **fields: object) -> CueTiming:
    cue = Cue(cue_id, index, "s", CITE, music=MusicKind.HEYUE, **fields)  # type: ignore[arg-type]
    return CueTiming(cue=cue, start_tick=round(at * S), end_tick=round((at + 1) * S))


def _action(cue_id: str, index: int, at: float, **fields: object) -> CueTiming:
    cue = Cue(cue_id, index, "s", CITE, action="遷樂", duration=Fraction(1), **fields)  # type: ignore[arg-type]
    return CueTiming(cue=cue, start_tick=round(at * S), end_tick=round((at + 1) * S))


def _timeline(events: list[Event], cues: list[CueTiming], se: str = "gong-tang") -> Timeline:
    """A few seconds of the 鄉射 plan; the caller plays the 瑟's plucked sound, whose sharp onset can be timed."""
    instruments = {"se": Member(id="se", name="瑟", player="gong", position=se)}
    cast = {"gong": Member(id="gong", name="工"), "huozhe": Member(id="huozhe", name="獲者")}
    return Timeline(rite="t", rite_id="t", events=tuple(sorted(events, key=lambda e: e.sort_key)),
                    cues=tuple(cues), realization=Realization(), layout=_layout(), instruments=instruments,
                    cast=cast, programs={"獲者": 107})


def _qianyue() -> Timeline:
    """A 瑟 note on the 堂 at 0.5 s, the 工 carried down (遷樂) at 2 s, a note below at 3.5 s."""
    return _timeline([_note(0.5, "m1"), _note(3.5, "m2")],
                     [_music("m1", 0, 0.5, instruments=("se",)), _action("qian-yue", 1, 2, who=("gong",),
                                                                         where="gong-xia"),
                      _music("m2", 2, 3.5, instruments=("se",))])


def _render(timeline: Timeline, where: Listener, tmp_path: Path, name: str = "out.wav") -> tuple[np.ndarray, int]:
    from yuesheng.outputs.spatial import render_placed

    out = tmp_path / name
    render_placed(timeline, None, out, where)
    samples, rate = soundfile.read(out, dtype="float64")
    return samples, rate


def _rms(x: np.ndarray, rate: int, start: float, end: float) -> float:
    return float(np.sqrt(np.mean(x[int(start * rate):int(end * rate)] ** 2)))


def _onset(x: np.ndarray, rate: int, start: float, end: float) -> float:
    """Seconds at which *x* first reaches a tenth of its peak in [start, end)."""
    part = np.abs(x[int(start * rate):int(end * rate)])
    return start + int(np.argmax(part >= 0.1 * part.max())) / rate


# --- the blocking and the listener -------------------------------------------------------------------------


def test_qianyue_moves_the_se_and_the_singers_follow_it():
    stops = blocking(_qianyue(), None).stops["瑟"]
    assert [[p.name for p in s.places] for s in stops] == [["gong-tang"], ["gong-xia"]]
    assert 2 * S <= stops[1].start_tick < round(3.5 * S)  # moved in the pause, before the note below


def test_a_call_comes_from_its_cues_where():
    timeline = _timeline([_note(1, "c1", "獲者"), _note(3, "c2", "獲者")],
                         [_music("c1", 0, 1, performers=("huozhe",), where="hou"),
                          _music("c2", 1, 3, performers=("huozhe",), where="fa")])
    assert [[p.name for p in s.places] for s in blocking(timeline, None).stops["獲者"]] == [["hou"], ["fa"]]


def test_listener_by_seat_name_id_coordinates_and_facing_words():
    timeline = _qianyue()
    assert listener("賓席", timeline, None) == Listener(-2, -3.5, FACINGS["south"], "賓席")
    assert listener("bin-xi,東", timeline, None).facing == (1.0, 0.0)
    assert listener("3,40,北", timeline, None) == Listener(3.0, 40.0, (0.0, -1.0))
    assert listener("3,40,west", timeline, None).facing == (-1.0, 0.0)
    for bad, message in (("nowhere", "no such seat"), ("1,2,up", "facing 'up'"), ("1", "expected x,y"),
                         ("default", "no default seat"), ("1e300,0", "within 200 步"), ("0,-201", "within 200 步")):
        with pytest.raises(UsageError, match=message):
            listener(bad, timeline, None)


def test_the_lords_rites_default_to_the_gong_on_his_mat(tmp_path, capsys):
    assert main(["render", "yanli", "--listener", "default", "-o", str(tmp_path / "y.mid")]) == 0
    assert "heard from 公席 (4.3, -1.8) facing west" in capsys.readouterr().out  # the 寢 (yanli.hall.yaml)


# --- the physics, against its sources --------------------------------------------------------------------------


def test_iso_9613_1_air_absorption_agrees_with_pyroomacoustics_table_and_grows_with_frequency():
    physics = Physics()
    # pyroomacoustics tabulates energy attenuation per metre, 20 °C and 50–70 %: 1 kHz 1.0e-3 (4.34 dB/km)
    assert absorption_db_per_m(1000, physics) * 1000 == pytest.approx(10 * math.log10(math.e) * 1.0, rel=0.1)
    values = [absorption_db_per_m(f, physics) for f in (125, 500, 2000, 8000)]
    assert values == sorted(values) and values[-1] > 10 * values[1]
    assert air_cutoff(300, physics) < air_cutoff(70, physics) < air_cutoff(5, physics)


def test_hear_delay_is_path_over_speed_and_east_of_a_south_facing_listener_is_on_the_left():
    who = Listener(0, -1, FACINGS["south"])  # on the 堂, as the source: at one height
    heard = hear(Place(10, -1), who, Physics())
    flat = 10 * Physics().bu_m
    assert heard.delay_s == pytest.approx(heard.distance_m / 343.0)
    assert heard.distance_m == pytest.approx(flat)
    assert heard.azimuth == pytest.approx(-math.pi / 2)  # to his left
    slower = hear(Place(10, -1), who, Physics(speed_m_s=300.0, chi_m=0.25))
    assert slower.delay_s == pytest.approx(10 * 6 * 0.25 / 300.0)


# --- measured on placed renders ---------------------------------------------------------------------------------


@needs_fluidsynth
def test_a_part_east_of_a_south_facing_listener_is_louder_and_earlier_on_the_left(tmp_path):
    timeline = _timeline([_note(0.5, "m1")], [_music("m1", 0, 0.5, instruments=("se",))], se="tang-east")
    samples, rate = _render(timeline, Listener(-2, -3.5, FACINGS["south"]), tmp_path)
    left, right = samples[:, 0], samples[:, 1]
    assert _rms(left, rate, 0.4, 1.5) > 1.5 * _rms(right, rate, 0.4, 1.5)
    assert _onset(left, rate, 0.4, 1.5) < _onset(right, rate, 0.4, 1.5)


@needs_fluidsynth
def test_a_call_from_the_fa_arrives_later_by_path_over_speed_and_quieter(tmp_path):
    timeline = _timeline([_note(0.5, "c1", "獲者"), _note(2.5, "c2", "獲者")],
                         [_music("c1", 0, 0.5, performers=("huozhe",), where="gong-tang"),
                          _music("c2", 1, 2.5, performers=("huozhe",), where="fa")])
    who = listener("賓席", timeline, None)
    samples, rate = _render(timeline, who, tmp_path)
    mono = samples.sum(axis=1)
    lag = (_onset(mono, rate, 2.4, 4.4) - 2.5) - (_onset(mono, rate, 0.4, 2.4) - 0.5)
    physics = Physics()
    expected = hear(Place(-5, 29.33), who, physics).delay_s - hear(Place(-2, -0.5), who, physics).delay_s
    assert expected > 0.1  # about 40 m farther
    assert lag == pytest.approx(expected, abs=0.001)
    assert _rms(mono, rate, 2.4, 3.9) < 0.3 * _rms(mono, rate, 0.4, 1.9)


@needs_fluidsynth
def test_moving_the_listener_to_the_far_end_of_the_court_reverses_what_is_near(tmp_path):
    timeline = _timeline([_note(0.5, "m1"), _note(2.5, "c1", "獲者")],
                         [_music("m1", 0, 0.5, instruments=("se",)),
                          _music("c1", 1, 2.5, performers=("huozhe",), where="hou")])
    ratios = []
    for n, who in enumerate((listener("賓席", timeline, None), listener("0,44,north", timeline, None))):
        samples, rate = _render(timeline, who, tmp_path, f"{n}.wav")
        mono = samples.sum(axis=1)
        ratios.append(_rms(mono, rate, 0.4, 2.0) / _rms(mono, rate, 2.4, 4.0))
    assert ratios[0] > 3 and ratios[1] < 1 / 3


@needs_fluidsynth
def test_qianyue_moves_where_the_se_is_heard(tmp_path):
    samples, rate = _render(_qianyue(), listener("賓席", _qianyue(), None), tmp_path)
    left, right = samples[:, 0], samples[:, 1]
    above = _rms(left, rate, 0.4, 1.8) / _rms(right, rate, 0.4, 1.8)
    below = _rms(left, rate, 3.4, 4.8) / _rms(right, rate, 3.4, 4.8)
    assert below > 1.2 * above and below > 1.4  # from ahead on the 堂 to below, east of the 賓: his left
    assert _onset(left, rate, 3.4, 4.8) < _onset(right, rate, 3.4, 4.8)
    assert _rms(samples, rate, 3.4, 4.8) < _rms(samples, rate, 0.4, 1.8)  # farther


# --- MIDI -----------------------------------------------------------------------------------------------------


def _controllers(data: bytes) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {}
    for track in mido.MidiFile(file=io.BytesIO(data), charset="utf-8").tracks:
        out[track.name] = [(m.control, m.value) for m in track if m.type == "control_change" and m.control != 123
                           and m.control != 120]
    return out


def test_midi_pan_and_level_follow_the_geometry_and_move_with_the_se():
    timeline = _qianyue()
    who = listener("賓席", timeline, None)
    data = midi_bytes(timeline, controls=midi_controllers(blocking(timeline, None).stops, who, Physics()))
    cc = _controllers(data)["瑟"]
    (_, pan1), (_, vol1), _, (_, pan2), (_, vol2), _ = cc
    assert abs(pan1 - 64) <= 2 and pan2 < 40  # ahead, then to his left (east of a south-facing listener)
    assert vol2 < vol1  # farther below
    assert data == midi_bytes(timeline, controls=midi_controllers(blocking(timeline, None).stops, who, Physics()))
    assert "瑟" in _controllers(midi_bytes(timeline)) and not _controllers(midi_bytes(timeline))["瑟"]


def test_cli_render_with_a_listener_and_its_usage_errors(tmp_path, capsys):
    out = tmp_path / "x.mid"
    assert main(["render", "xiangshe", "--listener", "default", "-o", str(out)]) == 0
    assert "heard from 賓席" in capsys.readouterr().out
    se = _controllers(out.read_bytes())["瑟"]
    assert [v for c, v in se if c == 10][1] < 64  # 遷樂: the 瑟 go below, east of the 賓
    assert main(["render", "xiangshe", "--listener", "3,40,up", "-o", str(out)]) == 2
    assert main(["render", "xiangshe", "--chi", "0.25", "-o", str(out)]) == 2
    assert "goes with --listener" in capsys.readouterr().err


# --- binaural (--binaural: the MIT KEMAR HRIRs Debian's libmysofa1 ships) --------------------------------------

needs_kemar = pytest.mark.skipif(not SOFA.is_file(), reason="libmysofa1 (the MIT KEMAR SOFA file) not installed")


@needs_kemar
def test_the_kemar_set_reads_with_the_left_ear_first_and_louder_for_a_source_on_the_left():
    hrtf = load_sofa()
    assert hrtf.rate == 44100 and hrtf.responses.shape[1] == 2
    for ahead, left, near in ((0.0, 1.0, 0), (0.0, -1.0, 1)):
        pair = hrtf.toward(ahead, left, 0.0)
        energy = (pair ** 2).sum(axis=1)
        onsets = [int(np.argmax(np.abs(ear) > 0.1 * np.abs(ear).max())) for ear in pair]
        assert energy[near] > 2 * energy[1 - near] and onsets[near] < onsets[1 - near]
    ahead = hrtf.toward(1.0, 0.0, 0.0)
    assert (ahead ** 2).sum(axis=1).mean() == pytest.approx(1.0)  # normalised: straight ahead keeps its level
    assert len(hrtf.at_rate(48000).responses[0, 0]) > len(ahead[0])


def test_a_file_that_is_not_a_sofa_hrir_set_is_a_clear_error(tmp_path):
    h5py = pytest.importorskip("h5py")
    text = tmp_path / "x.sofa"
    text.write_text("not HDF5")
    with pytest.raises(AudioError, match="not a readable SOFA HRIR file"):
        load_sofa(text)
    other = tmp_path / "room.sofa"
    with h5py.File(other, "w") as f:
        f.attrs["SOFAConventions"] = "SingleRoomDRIR"
    with pytest.raises(AudioError, match="convention SingleRoomDRIR, expected SimpleFreeFieldHRIR"):
        load_sofa(other)
    with pytest.raises(AudioError, match="no SOFA file"):
        load_sofa(tmp_path / "missing.sofa")


@pytest.mark.parametrize(("ir", "rate", "message"), [
    ((0, 2, 16), 44100.0, "expected Data.IR of directions × 2 ears × taps"),
    ((3, 2, 0), 44100.0, "expected Data.IR of directions × 2 ears × taps"),
    ((3, 2, 16), float("nan"), "Data.SamplingRate nan Hz"),
    ((710, 2, 512), 1.0, "Data.SamplingRate 1 Hz"),  # resampled to 44.1 kHz: 248 GiB
    ((3, 2, 16), 0.0, "silent"),  # an all-zero set: nothing to level it by
])
def test_an_empty_silent_or_absurd_rate_sofa_set_is_a_clear_error(tmp_path, ir, rate, message):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "bad.sofa"
    with h5py.File(path, "w") as f:
        f.attrs["SOFAConventions"] = "SimpleFreeFieldHRIR"
        f["Data.IR"] = np.zeros(ir) if message == "silent" else np.ones(ir)
        f["Data.SamplingRate"] = np.array([rate or 44100.0])
        f["SourcePosition"] = np.zeros((ir[0], 3))
        f["ReceiverPosition"] = np.array([[0.0, 0.09, 0.0], [0.0, -0.09, 0.0]])
    with pytest.raises(AudioError, match=message):
        load_sofa(path)


def test_a_cartesian_sofa_direction_at_the_head_itself_is_refused(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "zero.sofa"
    with h5py.File(path, "w") as f:
        f.attrs["SOFAConventions"] = "SimpleFreeFieldHRIR"
        f["Data.IR"] = np.ones((3, 2, 16))
        f["Data.SamplingRate"] = np.array([44100.0])
        f["SourcePosition"] = np.array([[0.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, -1.0, 0.0]])
        f["SourcePosition"].attrs["Type"] = "cartesian"  # its NaN direction was the nearest to every other
        f["ReceiverPosition"] = np.array([[0.0, 0.09, 0.0], [0.0, -0.09, 0.0]])
    with pytest.raises(AudioError, match=r"SourcePosition at \(0, 0, 0\)"):
        load_sofa(path)


def test_a_sofa_set_too_large_to_be_hrirs_is_refused_before_it_is_read(tmp_path):
    h5py = pytest.importorskip("h5py")
    path = tmp_path / "bomb.sofa"
    with h5py.File(path, "w") as f:  # a few kB on disk, 149 GiB read
        f.attrs["SOFAConventions"] = "SimpleFreeFieldHRIR"
        f.create_dataset("Data.IR", shape=(100_000, 2, 100_000), dtype="f8", chunks=(100, 2, 1000), compression="gzip")
        f["Data.SamplingRate"] = np.array([44100.0])
        f.create_dataset("SourcePosition", shape=(100_000, 3), dtype="f8")
        f["ReceiverPosition"] = np.array([[0.0, 0.09, 0.0], [0.0, -0.09, 0.0]])
    assert path.stat().st_size < 100_000
    with pytest.raises(AudioError, match="Data.IR holds 20000000000 values"):
        load_sofa(path)
    with h5py.File(path, "w") as f:
        f.attrs["SOFAConventions"] = "SimpleFreeFieldHRIR"
        f["Data.IR"] = np.ones((1, 2, 100_000))  # 2.3 s a response: every block's FFT that long
        f["Data.SamplingRate"] = np.array([44100.0])
        f["SourcePosition"] = np.zeros((1, 3))
        f["ReceiverPosition"] = np.array([[0.0, 0.09, 0.0], [0.0, -0.09, 0.0]])
    with pytest.raises(AudioError, match="responses of 100000 samples"):
        load_sofa(path)


@needs_fluidsynth
@needs_kemar
def test_binaural_a_source_on_the_listeners_left_is_earlier_and_louder_in_the_left_ear(tmp_path):
    from yuesheng.outputs.spatial import render_placed

    timeline = _timeline([_note(0.5, "m1")], [_music("m1", 0, 0.5, instruments=("se",))], se="tang-east")
    out = tmp_path / "b.wav"
    render_placed(timeline, None, out, Listener(-2, -3.5, FACINGS["south"]), hrtf=load_sofa())  # the 瑟 east: his left
    samples, rate = soundfile.read(out, dtype="float64")
    left, right = samples[:, 0], samples[:, 1]
    assert _rms(left, rate, 0.4, 1.5) > 1.5 * _rms(right, rate, 0.4, 1.5)
    assert _onset(left, rate, 0.4, 1.5) < _onset(right, rate, 0.4, 1.5)


def test_binaural_goes_with_a_listener(tmp_path, capsys):
    assert main(["audio", "xiangshe", "--binaural", "-o", str(tmp_path / "x.flac")]) == 2
    assert "--binaural goes with --listener" in capsys.readouterr().err


# --- levels: the limiter ---------------------------------------------------------------------------------------


def _limited(signal: np.ndarray, sizes: list[int]) -> np.ndarray:
    from yuesheng.outputs.spatial import Limiter

    limiter, out, at = Limiter(44100), [], 0
    for size in sizes:
        out.append(limiter.push(signal[at:at + size]))
        at += size
    out.append(limiter.push(None))
    return np.concatenate(out)


def test_the_limiter_holds_peaks_at_the_ceiling_leaves_the_rest_and_does_not_care_where_blocks_end():
    from yuesheng.outputs.spatial import CEILING

    rate = 44100
    t = np.arange(3 * rate) / rate
    tone = 0.5 * np.sin(2 * np.pi * 440 * t)
    signal = np.stack([tone, 0.5 * tone], axis=1)
    signal[rate:rate + 2000, 0] *= 4.0  # a burst of 2.0 on the left ear, just after the first block's end
    whole = _limited(signal, [len(signal)])
    assert len(whole) == len(signal)
    assert np.abs(whole).max() <= CEILING + 1e-9  # to the rounding of a running sum
    assert np.abs(whole[rate + 500:rate + 1500]).max() > 0.95 * CEILING  # held at the ceiling, not below it
    assert np.array_equal(whole[:rate - 300], signal[:rate - 300])  # untouched away from the burst
    assert np.array_equal(whole[rate + 2300:], signal[rate + 2300:])
    assert np.abs(whole[rate + 500:rate + 1500, 1]).max() < 0.5 * 0.5  # both ears take the same gain
    assert np.allclose(_limited(signal, [rate - 100, 150, 50, len(signal)]), whole)
    quiet = 0.5 * signal / 2.0
    assert np.array_equal(_limited(quiet, [1000, len(quiet)]), quiet)


# --- placed stems ----------------------------------------------------------------------------------------------

PLACED = Path(__file__).parent / "data" / "placed.yaml"  # the golden rite with its instruments placed


@needs_fluidsynth
@pytest.mark.slow
def test_placed_stems_are_one_placed_file_a_part_each_heard_from_its_place_and_they_sum_to_the_mix(run, tmp_path):
    stems = tmp_path / "stems"
    stems.mkdir()
    seat = ["--listener", "0,-3.5,south", "--format", "wav"]  # on the 堂, facing the 庭: east is his left
    code, text, err = run("audio", str(PLACED), "--stems", str(stems), *seat)
    assert code == 0, err
    names = ["歌", "瑟", "鐘", "獲者", "鼓"]
    assert sorted(f.name for f in stems.iterdir()) == sorted(f"placed-{n}.wav" for n in names)
    assert text.count("heard from (0, -3.5) facing south") == 5
    sound = {n: soundfile.read(stems / f"placed-{n}.wav", dtype="float64") for n in names}
    rate = sound["鐘"][1]
    bells, drum = sound["鐘"][0], sound["鼓"][0]  # the bells in the east 縣, the drum in the west
    assert _rms(bells[:, 0], rate, 0, 20) > 1.5 * _rms(bells[:, 1], rate, 0, 20)
    # a low drum: little level difference (within 2 dB either way: the room's reflections and its random tail),
    assert abs(20 * math.log10(_rms(drum[:, 1], rate, 0, 20) / _rms(drum[:, 0], rate, 0, 20))) < 2.0
    assert _onset(drum[:, 1], rate, 0, 20) < _onset(drum[:, 0], rate, 0, 20)  # but heard first on the right
    code, _, err = run("audio", str(PLACED), "-o", str(tmp_path / "all.wav"), *seat)
    assert code == 0, err
    mix, _ = soundfile.read(tmp_path / "all.wav", dtype="float64")
    total = sum(s for s, _ in sound.values())
    assert total.shape == mix.shape
    assert np.abs(total - mix).max() <= 5 / 32768  # each file rounds to 16 bits


@needs_fluidsynth
@needs_kemar
def test_cli_binaural_renders_through_the_kemar_set(run, tmp_path):
    out = tmp_path / "bells.wav"
    code, text, err = run("audio", str(PLACED), "--part", "鐘", "--listener", "0,-3.5,south", "--binaural", "-o",
                          str(out))
    assert code == 0, err
    assert f"binaural through {SOFA}" in text
    bells, rate = soundfile.read(out, dtype="float64")  # the east 縣, on the left of a listener facing south
    assert _rms(bells[:, 0], rate, 0, 20) > 1.5 * _rms(bells[:, 1], rate, 0, 20)
    assert run("audio", str(PLACED), "--listener", "0,0", "--binaural", str(tmp_path / "none.sofa"), "-o",
               str(out))[0] == 1


def test_binaural_refuses_to_write_over_its_sofa_file(run, tmp_path):
    sofa = tmp_path / "kemar.wav"  # a SOFA file under an audio name, given as -o too
    sofa.write_bytes(b"HDF5 stand-in")
    code, _, err = run("audio", str(PLACED), "--listener", "0,-3.5,south", "--binaural", str(sofa), "-o", str(sofa))
    assert code == 1 and "one of this command's inputs" in err
    assert sofa.read_bytes() == b"HDF5 stand-in"


@needs_fluidsynth
def test_a_sounding_part_with_no_place_is_an_error_that_names_the_placed_parts(tmp_path):
    from yuesheng.outputs.spatial import render_placed

    timeline = _timeline([_note(0.5, "m1"), _note(1.5, "c1", "獲者")],
                         [_music("m1", 0, 0.5, instruments=("se",)),
                          _music("c1", 1, 1.5, performers=("huozhe",), where="hou")], se="")  # the 瑟 nowhere
    with pytest.raises(AudioError, match="no place on the plan for 瑟: .*; to hear the placed parts alone: --part 獲"):
        render_placed(timeline, None, tmp_path / "x.wav", listener("賓席", timeline, None))
    assert not list(tmp_path.iterdir())


@needs_fluidsynth
def test_a_part_condensed_on_its_own_keeps_its_notes_on_the_rites_clock(tmp_path):
    """The 瑟 is silent from 1 s to 20.5 s while the caller goes on: FluidSynth renders the 瑟 without that
    silence, and its second note must still be heard at 20.5 s plus the path's delay."""
    calls = [_note(at, f"c{n}", "獲者") for n, at in enumerate((5.0, 10.0, 15.0))]
    timeline = _timeline([_note(0.5, "m1"), *calls, _note(20.5, "m2")],
                         [_music("m1", 0, 0.5, instruments=("se",)),
                          *(_music(e.cue, n + 1, e.start_tick / S, performers=("huozhe",), where="hou")
                            for n, e in enumerate(calls)),
                          _music("m2", 4, 20.5, instruments=("se",))])
    from yuesheng.outputs.audio import only_parts, plan

    alone, _ = plan(only_parts(timeline, frozenset(["瑟"])), tmp_path / "x.wav")
    together, _ = plan(timeline, tmp_path / "x.wav")
    assert alone.cuts and not together.cuts  # cut for the 瑟 alone, not for the rite
    from yuesheng.outputs.spatial import render_placed

    out = tmp_path / "se.wav"
    render_placed(timeline, None, out, listener("賓席", timeline, None), parts=frozenset(["瑟"]))
    mono = soundfile.read(out, dtype="float64")[0].sum(axis=1)
    first, second = _onset(mono, 44100, 0.4, 1.5), _onset(mono, 44100, 20.4, 21.5)
    assert second - first == pytest.approx(20.0, abs=0.001)  # the same note from the same place, 20 s later


# --- a staged rite: the places come from its blocking (docs/staging.md) ---------------------------------------------


@pytest.fixture(scope="module")
def staged_xiangshe():
    from yuesheng import load, produce

    root = Path(__file__).resolve().parent.parent
    return produce(load(root / "cues" / "xiangshe.yaml"))


def test_a_staged_rite_hears_each_part_where_its_players_stand(staged_xiangshe):
    rite = staged_xiangshe.staged
    assert rite is not None
    hall = rite.hall.places
    stops = blocking(staged_xiangshe.timeline, rite).stops
    se = [{p.name: (p.x, p.y) for p in stop.places} for stop in stops["瑟"]]
    # the two 工 who play the 瑟 at the 工席 on the 堂, below (遷樂) and up again (即位)
    assert se[0]["gong#1"] == (hall["gong-xi"].point.x, hall["gong-xi"].point.y)
    assert se[1]["gong#1"] == (hall["gong-xia"].point.x, hall["gong-xia"].point.y)
    assert se[2] == se[0] and len(se) == 3
    assert {p.name for stop in stops["歌"] for p in stop.places} == {"gong#3", "gong#4"}  # the other two sing
    sheng = stops["笙"][0].places
    assert len(stops["笙"]) == 1 and {p.name for p in sheng} == {"sheng#1", "sheng#2", "sheng#3"}
    assert min(p.x for p in sheng) > hall["xuan"].point.x  # 縣中磬東立西面 (5-15a)
    assert stops["磬"][0].places[0].name == "xuan"
    at_fa = {(p.x, p.y) for stop in stops["獲者"] for p in stop.places}  # the 獲 are called from the 乏
    assert at_fa == {(hall["fa-xi"].point.x, hall["fa-xi"].point.y)}
    xunuo = {(p.x, p.y) for stop in stops["許諾"] for p in stop.places}  # 許諾 at the 侯 as he sets off for the 乏
    assert (hall["fu-hou"].point.x, hall["fu-hou"].point.y) in xunuo


def test_a_staged_rite_seats_the_listener_on_the_halls_mats(staged_xiangshe):
    seat = blocking(staged_xiangshe.timeline, staged_xiangshe.staged).seats["bin-xi"]
    place = staged_xiangshe.staged.hall.places["bin-xi"]
    assert (seat.x, seat.y, seat.facing) == (place.point.x, place.point.y, "south")


def test_a_staged_rite_is_heard_in_its_own_halls_tang(staged_xiangshe):
    from yuesheng.outputs.placement import with_hall

    physics = with_hall(Physics(), staged_xiangshe.staged)
    assert physics.hall_bu == (-4.0, 4.0, 8.0)  # 州序: the 序 4 步 either side, the 堂 8 步 deep (xiangshe.hall.yaml)
    placed = blocking(staged_xiangshe.timeline, staged_xiangshe.staged)
    stops, seats = placed.stops, placed.seats
    who = Listener(seats["bin-xi"].x, seats["bin-xi"].y, FACINGS["south"])
    se = stops["瑟"][0].places[0]
    assert hear(se, who, physics).hall and not hear(se, who, Physics()).hall  # the 賓's mat lies 6.5 步 back
    assert with_hall(Physics(), None) == Physics()  # a rite placed by its cue sheet keeps the estimate


def test_a_blocking_that_does_not_stage_leaves_the_cue_sheets_places_with_a_notice(tmp_path):
    from yuesheng import load, produce

    root = Path(__file__).resolve().parent.parent
    (tmp_path / "cues").mkdir()
    shutil.copytree(root / "blocking", tmp_path / "blocking")
    shutil.copy(root / "cues" / "xiangshe.yaml", tmp_path / "cues" / "xiangshe.yaml")
    path = tmp_path / "blocking" / "xiangshe.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("to: gong-xia,", "to: gong-xai,", 1), encoding="utf-8")
    production = produce(load(tmp_path / "cues" / "xiangshe.yaml"))
    timeline = production.timeline
    assert production.ground is None and production.staged is None
    assert any(n.startswith("xiangshe.yaml: ") and "cue sheet's places" in n for n in timeline.notices)
    assert blocking(timeline, None).stops["瑟"][0].places[0].name == "gong-tang"


def test_the_block_mix_is_the_convolution_of_each_sound_with_the_response_of_the_stop_it_is_made_at():
    """Block by block, across block edges and a move, the mix equals whole-signal convolution (float32 FFTs)."""
    from scipy.signal import fftconvolve

    from yuesheng.outputs.placement import Stop
    from yuesheng.outputs.spatial import BLOCK, FADE, Voice, _Mix, placed_room

    rate = 44100
    who = Listener(-2, -3.5, FACINGS["south"])
    move = round((BLOCK + 1000) / rate * S)  # 遷樂: from the 堂 to below, just after the first block's edge
    stops = (Stop(0, (Place(-2, -0.5),)), Stop(move, (Place(4, 1.5),)))
    room = placed_room(Physics(), None, {"瑟": stops}, who)
    voice = Voice(stops, who, Physics(), rate, {}, room)
    assert BLOCK < voice.starts[1] < BLOCK + 2000
    sound = np.random.default_rng(1).standard_normal(3 * BLOCK + 123).astype(np.float32) * 0.1
    mix, out, at = _Mix({"瑟": voice}), [], 0
    while at < len(sound):
        count = min(BLOCK, len(sound) - at)
        out.append(mix.block([(voice, sound[at:at + count])], at, count))
        at += count
    heard = np.concatenate(out)
    t = np.arange(len(sound))
    start = voice.starts[1]
    rise = np.clip((t - start) / round(FADE * rate), 0.0, 1.0)
    expected = sum(fftconvolve((sound * weight)[:, None], response, axes=0)[:len(sound)]
                   for weight, response in ((1 - rise, voice.response(0)), (rise, voice.response(1))))
    assert np.abs(heard - expected).max() < 1e-5 * np.abs(expected).max()
