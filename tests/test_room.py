"""The seat's room, measured on its impulse responses: one room per hall, heads that hear the reflections, the air,
the tail, the bounds (docs/seat.md)."""

from __future__ import annotations

import math
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
from scipy.signal import butter, sosfiltfilt

from yuesheng.errors import AudioError
from yuesheng.outputs import room as rooms
from yuesheng.outputs import spatial
from yuesheng.outputs.audio import SOUNDFONTS
from yuesheng.outputs.placement import FACINGS, Listener, Physics, Place, blocking, hear, listener, with_hall
from yuesheng.outputs.sofa import DEFAULT as SOFA

RATE = 44100
OCTAVES = (125, 250, 500, 1000, 2000, 4000, 8000)
needs_kemar = pytest.mark.skipif(not SOFA.is_file(), reason="libmysofa1 (the MIT KEMAR SOFA file) not installed")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def _bands_db(x):
    n = 1 << 16
    power = np.abs(np.fft.rfft(x, n, axis=0)) ** 2
    f = np.fft.rfftfreq(n, 1 / RATE)
    return np.array([10 * math.log10(power[(f >= c / math.sqrt(2)) & (f < c * math.sqrt(2))].mean())
                     for c in OCTAVES])


@pytest.fixture(scope="module")
def kemar():
    from yuesheng.outputs.sofa import load

    return load()


@needs_kemar
def test_binaural_minus_stereo_is_within_3_db_per_octave_for_a_frontal_source(kemar):
    who = Listener(0, 0, FACINGS["north"])
    ahead = Place(0, -3)
    binaural = spatial.direct(ahead, who, Physics(), RATE, kemar)
    stereo = spatial.direct(ahead, who, Physics(), RATE, None)
    difference = _bands_db(binaural.mean(axis=1)) - _bands_db(stereo.mean(axis=1))
    assert np.abs(difference).max() <= 3.0, difference


@needs_kemar
def test_the_diffuse_field_of_the_equalised_set_is_flat(kemar):
    from yuesheng.outputs.sofa import diffuse_field

    f, power = diffuse_field(kemar.responses, kemar.rate)
    level = 10 * np.log10(power / np.median(power[(f > 200) & (f < 8000)]))
    band = (f > 100) & (f < 10000)
    assert np.abs(level[band]).max() < 3.0  # raw KEMAR: −19 dB at 50–100 Hz, +12 dB at 2.3 kHz


def test_early_reflections_come_through_the_head_from_their_own_directions():
    """A source to the listener's left, by the west wall: its reflections too are louder in the left ear (before,
    they reached both ears alike and the ILD fell from −19.5 dB to −1.1)."""
    physics = Physics()
    who = Listener(-1, -2, FACINGS["south"])  # on the 堂, facing south: east is his left
    room = spatial.placed_room(physics, None, {}, who)
    far = spatial.reflections(Place(3, -2), who, physics, RATE, room)
    early = far[:round(0.05 * RATE)]
    left, right = (float(np.sum(early[:, e] ** 2)) for e in (0, 1))
    assert 10 * math.log10(left / right) > 2.0


def test_the_tail_is_decorrelated_between_the_ears_and_has_no_dc():
    physics = Physics()
    who = Listener(0, -2, FACINGS["south"])
    room = spatial.placed_room(physics, None, {}, who)
    far = spatial.reflections(Place(0, -1), who, physics, RATE, room)
    tail = far[round(0.1 * RATE):]
    assert len(tail) > RATE // 10
    correlation = np.corrcoef(tail[:, 0], tail[:, 1])[0, 1]
    assert abs(correlation) < 0.5
    assert np.abs(far.sum(axis=0)).max() < 1e-4  # DC: the reflections' sum (26× the plain render's before)
    assert np.abs(far.mean(axis=0)).max() < 1e-4


def test_one_room_for_every_pair_a_court_source_gets_the_court_walls():
    """The 笙 in the court heard from the court: more than a ground reflection (its response ended after 5 ms)."""
    physics = Physics()
    who = Listener(0, 9, FACINGS["north"])
    room = spatial.placed_room(physics, None, {}, who)
    far = spatial.reflections(Place(0, 2), who, physics, RATE, room)
    assert len(far) > 0.1 * RATE
    late = far[round(0.05 * RATE):]
    assert float(np.sum(late ** 2)) > 1e-4 * float(np.sum(far ** 2))


def test_t30_of_the_enclosed_tang_is_within_a_quarter_of_eyring_without_a_cut_at_an_order():
    physics = Physics()
    enclosed = rooms.enclosed_tang(physics)
    who, source = Listener(-2, -1, FACINGS["north"]), Place(2, -3)
    full = spatial.reflections(source, who, physics, RATE, enclosed).mean(axis=1)
    near = spatial.direct(source, who, physics, RATE).mean(axis=1)
    full[:len(near)] += near[:len(full)]
    for band in (1, 3, 5):  # 250 Hz, 1 kHz, 4 kHz
        centre = rooms.BANDS[band]
        sos = butter(3, [centre / math.sqrt(2), centre * math.sqrt(2)], "bandpass", fs=RATE, output="sos")
        t30, _ = rooms.decay_figures(sosfiltfilt(sos, full), RATE)
        expected = rooms.eyring(enclosed, band, physics)
        assert abs(t30 - expected) <= 0.25 * expected, (centre, t30, expected)
    energy = np.cumsum(full[::-1] ** 2)[::-1]
    assert 10 * math.log10(energy[round(1.0 * RATE)] / energy[0]) < -30  # the decay reaches −30 dB, not cut at 0.2 s


def test_iso_air_absorption_filters_the_direct_sound_as_the_standard_says():
    from yuesheng.outputs.placement import absorption_db_per_m

    physics = Physics(temperature_c=20.0, humidity_pct=50.0)
    who = Listener(0, 0, FACINGS["south"])
    f = np.fft.rfftfreq(1 << 16, 1 / RATE)
    at = int(np.argmin(np.abs(f - 8000)))
    levels, distances = [], []
    for metres in (2.0, 24.0):  # the same direction, so the head is the same: only the air differs
        place = Place(0, metres / physics.bu_m)
        spectrum = np.abs(np.fft.rfft(spatial.direct(place, who, physics, RATE).mean(axis=1), 1 << 16))
        levels.append(20 * math.log10(spectrum[at] / hear(place, who, physics).gain))
        distances.append(hear(place, who, physics).distance_m)
    expected = -absorption_db_per_m(8000, physics) * (distances[1] - distances[0])
    assert levels[1] - levels[0] == pytest.approx(expected, abs=0.3)  # −2.3 dB over 22 m at 8 kHz
    humid = Physics(temperature_c=20.0, humidity_pct=90.0)
    assert absorption_db_per_m(8000, humid) != absorption_db_per_m(8000, physics)


def test_the_ground_reflection_depends_on_frequency():
    """The court's packed ground absorbs more at high frequencies: its first reflection is darker than the sound."""
    physics = Physics()
    who = Listener(0, 15, FACINGS["north"])
    room = spatial.placed_room(physics, None, {}, who)
    head = spatial.ears_of(who, physics)[0]
    found = rooms.simulate(room, (0.0, 5 * physics.bu_m, physics.standing_m), spatial.ears_of(who, physics)[1],
                           physics, RATE)
    floor = [k for k in range(found.images.shape[1])
             if abs(found.images[2, k] + physics.standing_m) < 1e-6 and abs(found.images[0, k] - head[0]) < 1e-6
             and abs(found.images[1, k] - 5 * physics.bu_m) < 1e-6]
    assert floor
    amplitudes = found.amplitudes[:, floor[0]]
    assert amplitudes[0] > amplitudes[4] + 0.2  # 125 Hz reflected more than 2 kHz


def test_players_who_sit_together_are_one_source_and_do_not_comb():
    physics = Physics()
    who = Listener(-2, -3.5, FACINGS["south"])
    two = (Place(-0.6, -0.4, "gong#1"), Place(0.2, -0.4, "gong#2"))
    (one, share), = spatial.heard_as(two, physics)
    assert share == 1.0 and (one.x, one.y) == pytest.approx((-0.2, -0.4))
    together = sum(spatial.direct(p, who, physics, RATE) * s for p, s in spatial.heard_as(two, physics))
    single = spatial.direct(Place(-0.2, -0.4), who, physics, RATE)
    f = np.fft.rfftfreq(1 << 14, 1 / RATE)
    ratio = np.abs(np.fft.rfft(together.mean(axis=1), 1 << 14)) / np.abs(np.fft.rfft(single.mean(axis=1), 1 << 14))
    audible = (f > 100) & (f < 8000)
    assert 20 * np.log10(ratio[audible]).min() > -6.0  # no notch (−15 to −39 dB before)
    apart = (Place(-8, 3, "east"), Place(8, 3, "west"))  # the 鐘 of the east and west 縣: each from its own place
    assert [s for _, s in spatial.heard_as(apart, physics)] == pytest.approx([math.sqrt(0.5)] * 2)


def test_the_itd_changes_sign_as_the_listener_turns_past_a_source():
    from yuesheng.outputs.placement import _facing

    physics = Physics()
    source = Place(0, -3)  # due north of the listener
    onsets = []
    for degrees in ("-30", "-10", "10", "30"):  # turning clockwise past north
        who = Listener(0, 0, _facing(degrees, "test"))
        heard = spatial.direct(source, who, physics, RATE)
        left, right = (int(np.argmax(np.abs(heard[:, e]) > 0.05 * np.abs(heard).max())) for e in (0, 1))
        onsets.append(left - right)
    assert onsets[0] > 0 and onsets[1] > 0 and onsets[2] < 0 and onsets[3] < 0  # right ear first, then left


def test_a_huge_hall_is_refused_before_anything_is_simulated():
    physics = Physics(hall_bu=(-10_000.0, 10_000.0, 10_000.0))
    who = Listener(0, 0, FACINGS["north"])
    started = time.process_time()
    with pytest.raises(AudioError, match=r"at most 300 m a side"):
        spatial.placed_room(physics, None, {}, who)
    assert time.process_time() - started < 1.0
    with pytest.raises(AudioError, match="is the 堂 inverted"):
        rooms.check_bounds(rooms.Room("x", 0, 0, -1, 5, 3, {}, {}), 1)
    with pytest.raises(AudioError, match="at most 400"):
        rooms.check_bounds(rooms.Room("x", 0, 0, 10, 10, 3, {}, {}), 401)


def test_responses_are_kept_per_hall_place_and_listener_as_numpy_data_never_pickle(tmp_path):
    from yuesheng import caches

    physics = Physics()
    who = Listener(0, -2, FACINGS["south"])
    room = spatial.placed_room(physics, None, {}, who)
    ears = spatial.ears_of(who, physics)[1]
    first = rooms.simulate(room, (0.0, -1.0, 2.0), ears, physics, RATE)
    folder = caches.folder(rooms.CACHE)
    assert folder is not None
    names = [name for name, _, _ in folder.entries()]
    assert len(names) == 1
    data = folder.read(names[0], limit=rooms.CACHE_LIMIT)
    assert data is not None and data[:4] == b"PK\x03\x04"  # a .npz: a zip of .npy arrays, read without pickle
    started = time.perf_counter()
    again = rooms.simulate(room, (0.0, -1.0, 2.0), ears, physics, RATE)
    assert time.perf_counter() - started < 0.5
    assert np.array_equal(first.tails.astype(np.float32), again.tails.astype(np.float32))
    assert rooms._decoded(b"not an archive") is None


def test_a_staged_hall_is_one_room_from_the_house_wall_to_the_gate():
    from yuesheng import load, produce

    root = Path(__file__).resolve().parent.parent
    production = produce(load(root / "cues" / "xiangyinjiu.yaml"))
    rite = production.staged
    assert rite is not None
    physics = with_hall(Physics(), rite)
    room = rooms.room_of(physics, rite.hall)
    assert room.north == pytest.approx(-4 * physics.bu_m)  # the 户牖 wall: the 堂 4 步 deep, the 賓 just before it
    assert room.south == pytest.approx(20 * physics.bu_m) and room.east - room.west == pytest.approx(20 * physics.bu_m)
    who = listener("default", production.timeline, rite)
    assert room.north < who.y * physics.bu_m < 0  # the 牖 wall 0.97 m behind the 賓
    stops = blocking(production.timeline, rite).stops
    assert spatial.placed_room(physics, rite, stops, who) == room


def test_midi_volume_at_the_reference_distance_is_fluidsynths_default():
    from yuesheng.outputs.placement import Stop, controls

    physics = Physics()
    who = Listener(0, -0.5, FACINGS["north"])  # both seated on the 堂, 4 m apart
    at_reference = Place(0, -0.5 - physics.reference_m / physics.bu_m)
    stops = {"瑟": (Stop(0, (at_reference,)),)}
    assert controls(stops, who, physics)[0].volume == 100


# --- the listener: degrees, negative coordinates, a person followed, an excerpt ----------------------------------


def test_a_listener_who_turns_hears_a_fixed_source_change_sides_across_the_crossfade():
    """A listener whose walks turn him (a path of facings in place): the segment responses' ITD changes sign."""
    from yuesheng.outputs.placement import Stop, Walked, _facing
    from yuesheng.timeline import TICKS_PER_SECOND

    physics = Physics()
    turns = [Listener(0, 0, _facing(d, "test")) for d in ("-20", "20")]
    who = Listener(0, 0, _facing("-40", "test"), "", tuple(
        Walked(k * TICKS_PER_SECOND, k * TICKS_PER_SECOND + TICKS_PER_SECOND // 2, t) for k, t in enumerate(turns, 1)))
    stops = (Stop(0, (Place(0, -3),)),)
    changes = spatial.changes_of(stops, who, RATE)
    assert [seg.start for seg in changes] == [0, RATE, 2 * RATE]
    assert [seg.fade for seg in changes][1:] == [RATE // 2, RATE // 2]  # over each turn, not a click
    signs = []
    for seg in changes:
        near = spatial.direct(stops[0].places[0], seg.who, physics, RATE)
        left, right = (int(np.argmax(np.abs(near[:, e]) > 0.05 * np.abs(near).max())) for e in (0, 1))
        signs.append(np.sign(left - right))
    assert signs == [1, 1, -1]


def test_a_person_is_followed_and_the_listeners_forms_parse(tmp_path, capsys):
    from yuesheng.cli import main

    out = str(tmp_path / "x.mid")
    assert main(["render", "xiangyinjiu", "--listener", "賓", "-o", out]) == 0
    said = capsys.readouterr().out
    assert "heard from 賓" in said and "following him through" in said
    import mido

    pans = [m.value for track in mido.MidiFile(out).tracks for m in track
            if m.type == "control_change" and m.control == 10]
    assert len(set(pans)) > 3  # the picture changes as he goes to his places
    assert main(["render", "xiangyinjiu", "--listener", "-4,16,270", "-o", out]) == 0  # no '=' needed
    assert "(-4, 16) facing west" in capsys.readouterr().out
    assert main(["render", "xiangyinjiu", "--listener", "0,9,45", "-o", out]) == 0
    assert "facing 45°" in capsys.readouterr().out
    from yuesheng.outputs.placement import _is_number

    assert _is_number("-4") and _is_number("1e2") and not _is_number("１０") and not _is_number("nan")
    assert main(["render", "xiangyinjiu", "--listener", "主人", "--temperature", "nan", "-o", out]) == 2
    assert "expected a number in ASCII digits" in capsys.readouterr().err
    assert main(["render", "xiangyinjiu", "--listener", "主人", "--humidity", "5", "-o", out]) == 2
    assert "--humidity 5: expected 10 to 100" in capsys.readouterr().err


def test_a_name_that_is_both_a_seat_and_a_person_is_a_usage_error(monkeypatch):
    from yuesheng import load, produce
    from yuesheng.cli import common
    from yuesheng.errors import UsageError
    from yuesheng.outputs import placement

    root = Path(__file__).resolve().parent.parent
    production = produce(load(root / "cues" / "xiangyinjiu.yaml"))
    seat = placement.Listener(0, 0, FACINGS["north"], "賓")
    monkeypatch.setattr(placement, "listener", lambda text, timeline, rite: seat)  # a hall with a place named 賓
    with pytest.raises(UsageError, match=r"both a seat .* and a person \(賓, bin\)"):
        common._listener_of("賓", production)


def test_an_excerpt_keeps_what_begins_in_it_moved_to_zero():
    from yuesheng import load, produce
    from yuesheng.outputs.condense import excerpt

    root = Path(__file__).resolve().parent.parent
    timeline = produce(load(root / "cues" / "xiangyinjiu.yaml")).timeline
    heyue = next(t for t in timeline.cues if t.cue.id == "heyue")
    cut = excerpt(timeline, heyue.start_tick, heyue.start_tick + 960 * 20)
    inside = [e for e in timeline.events if heyue.start_tick <= e.start_tick < heyue.start_tick + 960 * 20]
    assert len(cut.events) == len(inside) and cut.events[0].start_tick == inside[0].start_tick - heyue.start_tick
    assert max(e.start_tick + e.length_ticks for e in cut.events) <= 960 * 20
    assert {t.cue.id for t in cut.cues} >= {"heyue"}


# --- Ambisonics (--ambisonics N: AmbiX, ACN and SN3D) -----------------------------------------------------------


def test_the_harmonics_are_sn3d_in_acn_order():
    points = np.random.default_rng(3).standard_normal((20000, 3))
    values = np.array([spatial.harmonics(x, y, z, 3) for x, y, z in points])
    power = (values ** 2).mean(axis=0)  # over the sphere: 1 / (2n + 1) for SN3D
    expected = [1 / (2 * math.isqrt(acn) + 1) for acn in range(16)]
    assert power == pytest.approx(expected, rel=0.05)
    assert spatial.harmonics(0, 1, 0, 1) == pytest.approx([1, 1, 0, 0])  # ACN 1 is Y, to the left
    assert spatial.harmonics(1, 0, 0, 1) == pytest.approx([1, 0, 0, 1])  # ACN 3 is X, ahead


def test_an_ambisonic_response_decodes_to_the_sources_direction():
    physics = Physics()
    who = Listener(0, 0, FACINGS["north"])
    left = Place(-3, 0)  # due west: on the left of a listener facing north
    near = spatial.direct(left, who, physics, RATE, order=2)
    assert near.shape[1] == 9
    w = near[:, 0]
    x, y = (float(np.dot(w, near[:, c]) / np.dot(w, w)) for c in (3, 1))
    assert y == pytest.approx(1.0, abs=0.05) and abs(x) < 0.05


def _into_heyue(seconds: int) -> str:
    """The time *seconds* into 鄉飲酒禮's 合樂 (heyue), as ``--to`` takes it: 2h9min24s."""
    import yuesheng
    from yuesheng.timeline import TICKS_PER_SECOND

    timeline = yuesheng.build(yuesheng.load(yuesheng.production.cue_path("xiangyinjiu")))
    start = next(c.start_tick for c in timeline.cues if c.cue.id == "heyue") // TICKS_PER_SECOND + seconds
    return f"{start // 3600}h{start % 3600 // 60}min{start % 60}s"


@pytest.mark.synth
@pytest.mark.skipif(shutil.which("fluidsynth") is None or not any(p.is_file() for p in SOUNDFONTS),
                    reason="fluidsynth and fluid-soundfont-gm not installed")
def test_cli_ambisonics_writes_ambix_read_back_and_decoded(tmp_path, capsys):
    import soundfile

    from yuesheng.cli import main

    out = tmp_path / "amb.wav"
    assert main(["audio", "xiangyinjiu", "--listener", "default", "--from", "heyue", "--to", _into_heyue(8),
                 "--part", "瑟", "--ambisonics", "1", "-o", str(out)]) == 0
    assert "AmbiX order 1" in capsys.readouterr().out
    data, rate = soundfile.read(out)
    assert data.shape[1] == 4 and rate == RATE
    w = data[:, 0]
    x, y = (float(np.dot(w, data[:, c]) / np.dot(w, w)) for c in (3, 1))
    heard = math.degrees(math.atan2(y, x))  # the 瑟 lies 41° to the left of the 賓, who faces south
    assert 0 < heard < 90, heard  # ahead and to the left, the room's reflections (the wall behind him) in it
    assert main(["audio", "xiangyinjiu", "--listener", "default", "--ambisonics", "2", "-o", str(tmp_path / "a.flac"),
                 "--from", "heyue", "--to", _into_heyue(4)]) == 1
    assert "a .wav file" in capsys.readouterr().err
    assert main(["audio", "xiangyinjiu", "--ambisonics", "1", "-o", str(out)]) == 2


@pytest.mark.synth
@pytest.mark.skipif(shutil.which("fluidsynth") is None or not any(p.is_file() for p in SOUNDFONTS),
                    reason="fluidsynth and fluid-soundfont-gm not installed")
def test_whole_mix_ild_at_the_bins_seat_and_far_down_the_court_differ_and_carry_no_dc(tmp_path):
    """合樂 heard from the 賓席 (facing south, the music on his left) and from (8, 16) far down the court's east
    side facing west (the 堂 and the 縣 ahead on his right): their whole-mix ILDs differ by at least 1 dB (measured
    +0.86 and −2.86 dB; with the rooms' generators seeded three other ways, differences of 3.2 to 4.0 dB), neither
    carries DC, and a render simulated afresh (--no-cache) is the cached one, byte for byte."""
    import soundfile

    from yuesheng.cli import main

    ilds, data = [], {}
    for n, seat in enumerate(("default", "8,16,west", "default")):
        out = tmp_path / f"{n}.flac"
        assert main(["audio", "xiangyinjiu", "--listener", seat, "--from", "heyue", "--to", _into_heyue(10),
                     "--binaural", "-o", str(out), *(["--no-cache"] if n == 2 else [])]) == 0
        data[n], _ = soundfile.read(out)
        assert np.abs(data[n].mean(axis=0)).max() < 1e-4
        energy = (data[n] ** 2).sum(axis=0)
        ilds.append(10 * math.log10(energy[0] / energy[1]))
    assert ilds[0] - ilds[1] >= 1.0, ilds
    assert data[0].tobytes() == data[2].tobytes()


# --- determinism ------------------------------------------------------------------------------------------------


def test_the_same_pair_is_simulated_to_the_same_bytes_whatever_ran_before():
    """pyroomacoustics' own generators (numpy's and the C++ tracer's) are seeded from the room and the pair: the
    same pair gives the same tail, after another pair or not (unseeded, two runs differed)."""
    physics = Physics()
    room = rooms.room_of(physics, None, [(0.0, 10.0, 1.2)])
    ears = [(-0.1, 6.0, 1.2), (0.1, 6.0, 1.2)]
    first = rooms._simulate(room, (0.0, 3.0, 1.2), ears, physics, RATE, 1234)
    rooms._simulate(room, (2.0, 3.0, 1.2), ears, physics, RATE, 99)
    again = rooms._simulate(room, (0.0, 3.0, 1.2), ears, physics, RATE, 1234)
    assert first.tails.tobytes() == again.tails.tobytes()
    assert first.images.tobytes() == again.images.tobytes()
    assert first.tails.astype(np.float32).astype(np.float64).tobytes() == first.tails.tobytes()  # as the cache reads


# --- moving: players who walk as they sound, a listener who walks -------------------------------------------------


def _walk_stops(start: Place, end: Place, seconds: float, begin: float = 1.0):
    """A part standing at *start*, walking to *end* from *begin* over *seconds* (passing stops every step)."""
    from yuesheng.outputs.placement import STEP_TICKS, Stop
    from yuesheng.timeline import TICKS_PER_SECOND

    a, b = round(begin * TICKS_PER_SECOND), round((begin + seconds) * TICKS_PER_SECOND)
    points = range(a, b, STEP_TICKS)
    passing = [Stop(t, (Place(start.x + (end.x - start.x) * (t - a) / (b - a),
                              start.y + (end.y - start.y) * (t - a) / (b - a), "p"),), STEP_TICKS, True)
               for t in points]
    return (Stop(0, (start,)), *passing, Stop(b, (end,), b - points[-1]))


def _mixed(stops, who, physics, seconds: float, noise: bool = False):
    """A steady 440 Hz tone (faded in), or noise, sounded at *stops*, heard by *who*: the placed mix, block by
    block."""
    room = spatial.placed_room(physics, None, {"瑟": stops}, who)
    voice = spatial.Voice(stops, who, physics, RATE, {}, room)
    mix = spatial._Mix({"瑟": voice})
    n = round(seconds * RATE)
    t = np.arange(n) / RATE
    mono = (0.1 * np.random.default_rng(5).standard_normal(n) if noise else
            0.1 * np.sin(2 * np.pi * 440 * t) * np.minimum(1.0, t / 0.05)).astype(np.float32)
    block = 4096  # small blocks: many block boundaries inside the walk
    return np.concatenate([mix.block([(voice, mono[at:at + block])], at, len(mono[at:at + block]))
                           for at in range(0, n, block)])


def _clicks(audio):
    """The loudest 5 ms of what lies above 4 kHz (a steady 440 Hz tone has none: a step or a click has)."""
    from scipy.signal import sosfilt

    high = sosfilt(butter(4, 4000, "highpass", fs=RATE, output="sos"), audio, axis=0)[round(0.1 * RATE):]
    frames = high[:len(high) // 220 * 220].reshape(-1, 220, audio.shape[1])
    return float(np.sqrt((frames ** 2).mean(axis=1)).max())


def _ild(audio, a: float, b: float) -> float:
    part = audio[round(a * RATE):round(b * RATE)]
    e = (part ** 2).sum(axis=0)
    return 10 * math.log10(e[0] / e[1])


def test_a_player_who_walks_as_he_plays_is_heard_moving_without_a_click():
    """A 瑟 carried from the listener's left to his right over 4 s: the ILD goes from left to right step by step,
    the level rises as he passes nearest and falls after, and nothing above 4 kHz (a click) comes of the steps
    beyond what the same tone standing still has."""
    physics = Physics()
    who = Listener(0, 4, FACINGS["north"])
    walking = _walk_stops(Place(-5, 2, "a"), Place(5, 2, "b"), 4.0)
    heard = _mixed(walking, who, physics, 6.0, noise=True)
    ilds = [_ild(heard, s, s + 0.5) for s in (0.3, 2.25, 2.75, 3.25, 5.3)]  # standing, walking past, standing
    assert ilds[0] > 3 and ilds[-1] < -3, ilds  # left, then right
    assert ilds[0] > ilds[1] > ilds[2] > ilds[3] > ilds[4], ilds  # step by step, one way
    level = [float((heard[round(s * RATE):round((s + 0.5) * RATE)] ** 2).sum()) for s in (1.0, 2.8, 4.6)]
    assert level[1] > level[0] and level[1] > level[2], level  # nearest midway (2 步 ahead), farther at either end
    moving, still = _mixed(walking, who, physics, 6.0), _mixed(walking[:1], who, physics, 6.0)
    assert _clicks(moving) < 2 * _clicks(still) + 1e-5, (_clicks(moving), _clicks(still))


def test_a_listener_who_walks_hears_the_points_between_and_no_click():
    """A listener walking past a fixed source (the points of his walk, ``Walked.between``): the source's ITD moves
    through zero in small steps, the direct sound's level follows 1/r, and the mix has no click."""
    from yuesheng.outputs.placement import STEP_TICKS, Stop, Walked
    from yuesheng.timeline import TICKS_PER_SECOND

    physics = Physics()
    a, b = TICKS_PER_SECOND, 9 * TICKS_PER_SECOND  # 10 步 in 8 s: 1.7 m/s
    between = tuple((t, Listener(-5 + 10 * (t - a) / (b - a), 4, FACINGS["north"])) for t in range(a, b, STEP_TICKS))
    who = Listener(-5, 4, FACINGS["north"], "", (Walked(a, b, Listener(5, 4, FACINGS["north"]), between),))
    stops = (Stop(0, (Place(0, 2, "fixed"),)),)
    segments = spatial.changes_of(stops, who, RATE)
    assert len(segments) == len(between) + 1 and segments[-1].who == who.path[0].to
    itds, gains = [], []
    for seg in segments:
        near = spatial.near(seg.stop, seg.who, physics, RATE)
        onsets = [int(np.argmax(np.abs(near[:, e]) > 0.3 * np.abs(near[:, e]).max())) for e in (0, 1)]
        itds.append((onsets[0] - onsets[1]) / RATE * 1000)  # ms: right ear first (source on the right) > 0
        gains.append(hear(seg.stop.places[0], seg.who, physics).gain)
    assert itds[0] > 0.3 and itds[-1] < -0.3, itds  # on his right as he comes, on his left as he goes
    assert max(abs(x - y) for x, y in zip(itds, itds[1:], strict=False)) < 0.15, itds  # through zero in small steps
    assert gains.index(max(gains)) in range(len(gains) // 2 - 2, len(gains) // 2 + 3)  # nearest midway
    assert max(seg.room[0][0] for seg in segments[1:-1]) < 1.0  # the room between: the stands' on either side
    moving = _mixed(stops, who, physics, 10.0)
    still = _mixed(stops, who.still, physics, 10.0)
    assert _clicks(moving) < 2 * _clicks(still) + 1e-5, (_clicks(moving), _clicks(still))


def test_the_staged_blocking_hears_a_caller_walk_as_he_calls_and_the_followed_listener_his_points():
    """In 鄉射 the 獲者 answers (許諾) as he walks from the 侯 to the 乏: the blocking gives his part passing stops
    along his route, a quarter second apart; a followed 賓 passes points every quarter second."""
    import yuesheng
    from yuesheng.outputs.placement import STEP_TICKS, blocking, following

    production = yuesheng.produce(yuesheng.load(yuesheng.production.cue_path("xiangshe")))
    stops = blocking(production.timeline, production.staged).stops["許諾"]
    passing = [s for s in stops if s.passing]
    assert len(passing) > 100
    k = stops.index(passing[0])
    run = stops[k:next(i for i in range(k, len(stops)) if not stops[i].passing)]
    steps = [math.hypot(p.places[0].x - q.places[0].x, p.places[0].y - q.places[0].y)
             for p, q in zip(run, run[1:], strict=False)]
    assert max(steps) < 1.0 and sum(steps) > 10.0, steps  # 步 a quarter second: from the 侯 toward the 乏
    assert all(b.start_tick - a.start_tick == STEP_TICKS for a, b in zip(run, run[1:], strict=False))
    motion = yuesheng.produce(yuesheng.load(yuesheng.production.cue_path("xiangyinjiu"))).motion
    assert motion is not None
    walk = following("賓", "bin", motion).path[0]
    assert len(walk.between) >= 2 and walk.between[0][0] == walk.start_tick
    assert {(p.x, p.y) for _, p in walk.between} - {(walk.to.x, walk.to.y)}  # points before he arrives
