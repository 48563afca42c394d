"""Audio through FluidSynth: formats, length, sound where music sounds and silence where not, the RIFF limit,
free space, clean interruption, clear errors, 三分損益 audible within ±3 cents."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections import namedtuple
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import soundfile

import yuesheng.outputs.audio as audio
from yuesheng import build, load
from yuesheng.errors import AudioError, OutputError
from yuesheng.music.lulu import LU, Pitch, Realization, Tuning, cents_offset
from yuesheng.outputs.audio import (
    ENCODINGS,
    RIFF_LIMIT,
    SOUNDFONTS,
    TAIL,
    FluidSynth,
    container_for,
    expected_frames,
    find_soundfont,
    plan,
    render,
    segments,
)
from yuesheng.timeline import Event, EventKind, Timeline, ticks
from yuesheng.timeline import clock as show_clock

from hang import time_limit

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
has_fluidsynth = shutil.which("fluidsynth") is not None and any(p.is_file() for p in SOUNDFONTS)


def needs_fluidsynth(test: Callable[..., None]) -> Callable[..., None]:
    """A test that renders through FluidSynth: marked ``synth``, and skipped where FluidSynth is not installed."""
    skipped = pytest.mark.skipif(not has_fluidsynth, reason="fluidsynth and fluid-soundfont-gm not installed")(test)
    marked: Callable[..., None] = pytest.mark.synth(skipped)
    return marked


S = ticks(Fraction(1))


def _timeline(*events: Event, rite: str = "t") -> Timeline:
    return Timeline(rite=rite, rite_id=rite, events=tuple(sorted(events, key=lambda e: e.sort_key)),
                    realization=Realization())


def _phrase(at: int, part: str = "瑟") -> list[Event]:
    """Two seconds of notes from *at* seconds."""
    return [Event(start_tick=(at * 4 + n) * S // 4, length_ticks=S // 4, kind=EventKind.NOTE, cue="m", part=part,
                  key=60 + n, velocity=100)
            for n in range(8)]


def _sound_and_silence() -> Timeline:
    """Music 0–2 s and 30–32 s, silence between (an action), the end at 32 s: 34 s of audio with the tail."""
    action = Event(start_tick=2 * S, length_ticks=28 * S, kind=EventKind.ACTION, cue="wait", text="拜")
    return _timeline(*_phrase(0), action, *_phrase(30, "笙"))


def _rms(samples: np.ndarray, rate: int, start: float, end: float) -> float:
    part = samples[int(start * rate): int(end * rate)].astype(float)
    return float(np.sqrt(np.mean(part ** 2)))


# --- the plan: format, RIFF limit, free space (no rendering) ----------------------------------------------


def test_a_wav_past_the_riff_limit_becomes_rf64_and_compact_formats_stay_as_they_are():
    wav = ENCODINGS[".wav"]
    fits = (RIFF_LIMIT - 44) // 4
    assert container_for(wav, fits) == "WAV"
    assert container_for(wav, fits + 1) == "RF64"
    assert container_for(ENCODINGS[".flac"], fits * 3) == "FLAC"
    assert container_for(ENCODINGS[".opus"], fits * 3) == "OGG"


def test_a_twelve_hour_rite_is_planned_without_rendering_it():
    """A synthetic rite longer than a RIFF WAV can hold: RF64, its exact size, and only its sound to render."""
    long_wait = Event(start_tick=2 * S, length_ticks=12 * 3600 * S, kind=EventKind.ACTION, cue="wait", text="拜")
    timeline = _timeline(*_phrase(0), long_wait, *_phrase(12 * 3600))
    wav, _ = plan(timeline, "rite.wav")
    frames = expected_frames(timeline)
    assert wav.container == "RF64" and wav.frames == frames == (12 * 3600 + 2 + 2) * 44100
    assert wav.size_bytes > RIFF_LIMIT and wav.size_bytes == frames * 4 + 80
    assert wav.sound_frames < 60 * 44100  # the notes and their release, not twelve hours
    assert sum(n for _, n in segments(wav.cuts, 44100, frames)) == frames
    flac, condensed = plan(timeline, "rite.flac")
    assert flac.container == "FLAC" and flac.size_bytes < 100_000_000
    assert condensed.duration_ticks < 60 * S  # what FluidSynth is given
    opus, _ = plan(timeline, "rite.opus")
    assert opus.sample_rate == 48000 and opus.frames == (12 * 3600 + 4) * 48000


@pytest.mark.parametrize(("rite", "container"), [("xiangyinjiu", "WAV"), ("xiangshe", "WAV"), ("yanli", "WAV"),
                                                ("dashe", "RF64")])
def test_every_shipped_rite_has_a_wav_that_holds_it_and_little_to_render(repertoire, rite, container):
    from yuesheng.music.repertoire import data_dir

    timeline = build(load(data_dir("cues") / f"{rite}.yaml", repertoire=repertoire))
    wav, _ = plan(timeline, f"{rite}.wav")
    assert wav.container == container and (wav.size_bytes > RIFF_LIMIT) == (container == "RF64")
    assert wav.sound_frames < wav.frames / 2  # a rite is mostly silence: FluidSynth renders under half of it


def test_too_little_free_space_is_refused_before_rendering(monkeypatch, tmp_path):
    long_wait = Event(start_tick=0, length_ticks=8 * 3600 * S, kind=EventKind.ACTION, cue="wait", text="拜")
    timeline = _timeline(long_wait)
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: Usage(10**9, 10**9 - 10**8, 10**8))
    monkeypatch.setattr(audio, "FluidSynth", None)  # rendering would fail differently
    with pytest.raises(OutputError, match=r"not enough space for .*rite\.wav: .* needs up to 5\.08 GB, 0\.10 GB free; "
                                          r"try \.flac, \.ogg or \.opus"):
        render(timeline, tmp_path / "rite.wav")
    assert list(tmp_path.iterdir()) == []


def test_the_cli_reports_a_full_disk_as_an_error(run, monkeypatch, tmp_path):
    Usage = namedtuple("Usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda _path: Usage(10**9, 10**9, 1000))
    code, _, err = run("audio", str(DATA / "golden.yaml"), "-o", str(tmp_path / "g.flac"))
    assert code == 1 and "not enough space" in err
    assert list(tmp_path.iterdir()) == []


# --- rendering ----------------------------------------------------------------------------------------------


@needs_fluidsynth
@pytest.mark.parametrize("suffix", [".wav", ".flac",
                                    *(pytest.param(s, marks=pytest.mark.slow) for s in (".ogg", ".opus"))])
def test_each_format_renders_with_sound_where_music_sounds_and_silence_where_not(tmp_path, suffix):
    timeline = _sound_and_silence()
    out = tmp_path / f"t{suffix}"
    rendered = render(timeline, out)
    info = soundfile.info(str(out))
    rate = 48000 if suffix == ".opus" else 44100
    assert info.samplerate == rate == rendered.sample_rate and info.channels == 2
    assert info.duration == pytest.approx(32 + float(TAIL), abs=0.03)
    samples, _ = soundfile.read(str(out), dtype="int16")
    assert _rms(samples, rate, 0, 2) > 300 and _rms(samples, rate, 30, 32) > 300
    quiet = _rms(samples, rate, 12, 26)
    assert (quiet == 0) if suffix in (".wav", ".flac") else quiet < 3
    assert [p.name for p in tmp_path.iterdir()] == [out.name]  # no temporary file left


@needs_fluidsynth
def test_rendering_only_the_sound_gives_the_straight_render_sample_for_sample(tmp_path, monkeypatch):
    """Dry (no reverb, chorus): bit-identical. Wet, only their modulation's phase differs: same loudness."""
    timeline = _sound_and_silence()
    for effects in (False, True):
        cut = tmp_path / f"cut{effects}.wav"
        render(timeline, cut, effects=effects)
        with monkeypatch.context() as patch:
            patch.setattr(audio, "RING", Fraction(10**6))  # every silence rings: nothing is cut
            assert plan(timeline, cut)[0].cuts == ()
            render(timeline, tmp_path / "straight.wav", effects=effects)
        a, rate = soundfile.read(str(cut), dtype="int16")
        b, _ = soundfile.read(str(tmp_path / "straight.wav"), dtype="int16")
        assert len(a) == len(b)
        if not effects:
            assert np.array_equal(a, b)
        else:
            for second in range(34):
                assert _rms(a, rate, second, second + 1) == pytest.approx(_rms(b, rate, second, second + 1),
                                                                       rel=0.05, abs=2)


@needs_fluidsynth
def test_a_short_rite_renders_with_sound_and_the_expected_length(repertoire, tmp_path):
    timeline = build(load(DATA / "golden.yaml", repertoire=repertoire))
    out = tmp_path / "golden.flac"
    seen: list[float] = []
    rendered = render(timeline, out, progress=seen.append)
    samples, rate = soundfile.read(str(out), dtype="int16")
    assert len(samples) == rendered.frames == expected_frames(timeline)
    assert len(samples) / rate == pytest.approx(228 + float(TAIL))
    assert _rms(samples, rate, 0, 20) > 100  # 肆夏 on the bells, not silence
    assert seen[-1] == 1.0 and seen == sorted(seen)


def _pitch_hz(samples: np.ndarray, rate: int, around: float) -> float:
    """The frequency of the strongest peak within 3% of *around*, by FFT with parabolic interpolation."""
    segment = samples[rate // 2: rate * 7 // 2] * np.hanning(rate * 3)
    size = 1 << 20
    spectrum = np.abs(np.fft.rfft(segment, size))
    freqs = np.fft.rfftfreq(size, 1 / rate)
    lo, hi = np.searchsorted(freqs, [around * 0.97, around * 1.03])
    k = lo + int(np.argmax(spectrum[lo:hi]))
    a, b, c = np.log(spectrum[k - 1: k + 2])
    return float((k + 0.5 * (a - c) / (a - 2 * b + c)) * rate / size)


@needs_fluidsynth
@pytest.mark.parametrize("name", ["仲", *(pytest.param(n, marks=pytest.mark.slow) for n in ("林", "夾"))])
def test_sanfen_tuning_is_audible_within_three_cents(tmp_path, name):
    the_lu = next(lu for lu in LU if lu.short == name)
    real = Realization(60, Tuning.SANFEN)
    key, _ = real.midi(Pitch(the_lu))
    note = Event(start_tick=0, length_ticks=ticks(Fraction(4)), kind=EventKind.NOTE, cue="tone", part="歌", key=key,
                 velocity=100)
    out = tmp_path / "tone.wav"
    render(Timeline(rite="tone", rite_id="tone", events=(note,), realization=real), out)
    samples, rate = soundfile.read(str(out), dtype="int16")
    measured = _pitch_hz(samples[:, 0].astype(float), rate, real.frequency(Pitch(the_lu)))
    equal = 440 * 2 ** ((key - 69) / 12)
    cents = 1200 * np.log2(measured / equal)
    assert cents == pytest.approx(cents_offset(the_lu, Tuning.SANFEN), abs=3)


@needs_fluidsynth
def test_a_ringing_instrument_does_not_make_the_render_run_on(tmp_path):
    bells = tuple(Event(start_tick=ticks(Fraction(n, 4)), length_ticks=ticks(Fraction(1, 4)), kind=EventKind.NOTE,
                        cue="b", part="鐘", key=60 + n,
                        velocity=127) for n in range(8))
    out = tmp_path / "bells.wav"
    rendered = render(Timeline(rite="bells", rite_id="bells", events=bells, realization=Realization()), out)
    assert rendered.seconds == pytest.approx(2 + float(TAIL))
    assert out.stat().st_size < 1_000_000


# --- the command ---------------------------------------------------------------------------------------------


@needs_fluidsynth
def test_music_only_with_labels_lands_every_mark_on_its_cue(run, tmp_path):
    out = tmp_path / "mini.flac"
    code, text, err = run("audio", str(DATA / "mini_xiangshe.yaml"), "--music-only", "--gap", "3s", "--labels",
                          "-o", str(out))
    assert code == 0, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mini.cue", "mini.flac", "mini.labels.txt",
                                                          "mini.runsheet.txt"]
    samples, rate = soundfile.read(str(out), dtype="int16")
    labels = [line.split("\t") for line in (tmp_path / "mini.labels.txt").read_text(encoding="utf-8").splitlines()]
    runsheet = (tmp_path / "mini.runsheet.txt").read_text(encoding="utf-8")
    assert "music only: every silence longer than 3 s shortened to 3 s" in runsheet
    assert len(samples) / rate == pytest.approx(float(labels[-1][1]) + 2, abs=0.01)  # the condensed rite + tail
    for start, _end, what in labels:
        if "終)" in what:  # a piece's 終 or stanza: its music sounds from its label on
            assert _rms(samples, rate, float(start), float(start) + 1) > 100, what
            continue
        cue_id = what.split(":")[0]
        clock = show_clock(round(float(start) * 960))
        assert any(line.startswith(clock) and f" {cue_id} " in line for line in runsheet.splitlines()), what
        if "♪" in what and "唱聲" not in what:  # music: it sounds from its mark on, and not before
            assert _rms(samples, rate, float(start), float(start) + 2) > 100, what
            if float(start) > 0:
                assert _rms(samples, rate, float(start) - 0.3, float(start)) < _rms(samples, rate, float(start),
                                                                                   float(start) + 0.3), what
    cue = (tmp_path / "mini.cue").read_text(encoding="utf-8-sig")
    music = [float(start) for start, _, what in labels if "♪" in what]
    for line in cue.splitlines():
        if line.strip().startswith("INDEX 01"):
            m, s, f = map(int, line.split()[-1].split(":"))
            assert any(0 <= start - (m * 60 + s + f / 75) < 1 / 75 for start in music)


@needs_fluidsynth
def test_stems_are_one_file_a_part_and_sum_to_those_parts_together(run, tmp_path):
    stems = tmp_path / "stems"
    stems.mkdir()
    code, text, err = run("audio", str(DATA / "golden.yaml"), "--stems", str(stems), "--part", "鍾", "--part", "鼓",
                          "--format", "wav", "--dry")
    assert code == 0, err
    assert sorted(f.name for f in stems.iterdir()) == ["golden-鐘.wav", "golden-鼓.wav"]
    code, text, _ = run("audio", str(DATA / "golden.yaml"), "--part", "鐘", "--part", "建鼓", "-o",
                        str(tmp_path / "both.wav"), "--dry")
    assert code == 0 and text.rstrip().endswith("— 鐘 鼓")
    both, _ = soundfile.read(str(tmp_path / "both.wav"), dtype="int16")
    bells, rate = soundfile.read(str(stems / "golden-鐘.wav"), dtype="int16")
    drum, _ = soundfile.read(str(stems / "golden-鼓.wav"), dtype="int16")
    assert both.shape == bells.shape == drum.shape
    assert _rms(bells, rate, 0, 20) > 100 and _rms(drum, rate, 0, 20) > 100
    residue = bells.astype(int) + drum - both  # FluidSynth mixes linearly; only a few attacks differ by a click
    assert _rms(residue, rate, 0, 178) < 0.02 * _rms(both, rate, 0, 178)


@needs_fluidsynth
def test_solo_keeps_its_part_and_sounds_the_others_as_many_decibels_softer_as_asked(run, tmp_path):
    """--solo 鼓: the 鐘 (rendered alone with --part to measure it) 12 dB below its own render; --solo 鐘 --others
    -6: the drum 6 dB below. Measured in the rendered audio (FluidSynth's velocity curve, within 1 dB)."""
    golden = str(DATA / "golden.yaml")
    for part, solo, others, db in (("鐘", "鼓", [], -12.0), ("鼓", "鐘", ["--others", "-6"], -6.0)):
        alone, soft = tmp_path / f"{part}.wav", tmp_path / f"{part}-soft.wav"
        assert run("audio", golden, "--part", part, "--dry", "-o", str(alone))[0] == 0
        code, text, err = run("audio", golden, "--part", part, "--dry", "--solo", solo, *others, "-o", str(soft))
        assert code == 0 and f"solo {solo}, the others at {db:+g} dB" in text, err
        loud, rate = soundfile.read(str(alone), dtype="int16")
        quiet, _ = soundfile.read(str(soft), dtype="int16")
        measured = 20 * np.log10(_rms(quiet, rate, 0, 228) / _rms(loud, rate, 0, 228))
        assert measured == pytest.approx(db, abs=1.0), part
    code, _, err = run("audio", golden, "--solo", "管", "-o", str(tmp_path / "x.flac"))
    assert code == 2 and "--solo: 管 does not sound in" in err
    assert run("audio", golden, "--others", "-12", "-o", str(tmp_path / "x.flac"))[0] == 2


@needs_fluidsynth
def test_breath_is_heard_after_each_sung_line_end_and_said_to_be_editorial(run, tmp_path):
    """--breath: 騶虞's first line 彼茁者葭 ends at 18 s (its syllables 1 s apart from 15 s); its 葭 is held half a
    beat, so the end of that beat falls silent, and the next line comes in on time."""
    golden = str(DATA / "golden.yaml")
    sung, breathed = tmp_path / "sung.wav", tmp_path / "breathed.wav"
    assert run("audio", golden, "--part", "歌", "--dry", "-o", str(sung))[0] == 0
    code, text, err = run("audio", golden, "--part", "歌", "--dry", "--breath", "-o", str(breathed))
    assert code == 0 and "editorial breaths at the line ends" in text, err
    plain, rate = soundfile.read(str(sung), dtype="int16")
    held, _ = soundfile.read(str(breathed), dtype="int16")
    assert _rms(held, rate, 18.7, 18.98) < 0.1 * _rms(plain, rate, 18.7, 18.98)  # the breath
    assert _rms(held, rate, 17.6, 17.95) == pytest.approx(_rms(plain, rate, 17.6, 17.95), rel=0.01)  # 者 as sung
    assert _rms(held, rate, 19.2, 19.5) == pytest.approx(_rms(plain, rate, 19.2, 19.5), rel=0.05)  # on time


def test_an_unknown_or_silent_part_is_a_usage_error(run, tmp_path):
    code, _, err = run("audio", str(DATA / "golden.yaml"), "--part", "琵琶", "-o", str(tmp_path / "x.flac"))
    assert code == 2 and "unknown part '琵琶'" in err
    code, _, err = run("audio", str(DATA / "golden.yaml"), "--part", "管", "-o", str(tmp_path / "x.flac"))
    assert code == 2 and "管 does not sound in" in err
    assert list(tmp_path.iterdir()) == []


def test_audio_command_usage_errors(run, tmp_path):
    assert run("audio", "xiangyinjiu", "-o", str(tmp_path / "x.mp3"))[0] == 2
    assert run("audio", "xiangyinjiu", "--gap", "3s")[0] == 2
    assert run("audio", "xiangyinjiu", "--stems", str(tmp_path / "none"))[0] == 2
    assert run("audio", "xiangyinjiu", "--format", "ogg", "-o", str(tmp_path / "x.flac"))[0] == 2
    assert list(tmp_path.iterdir()) == []


def test_missing_fluidsynth_says_how_to_install_it(monkeypatch, run, tmp_path):
    monkeypatch.setattr("shutil.which", lambda _name: None)
    with pytest.raises(AudioError, match="apt-get install fluidsynth fluid-soundfont-gm"):
        render(_timeline(), tmp_path / "x.wav")
    code, _, err = run("audio", "xiangyinjiu", "-o", str(tmp_path / "x.wav"))
    assert code == 1 and "apt-get install" in err
    assert list(tmp_path.iterdir()) == []


# --- SoundFonts and unwritable outputs ----------------------------------------------------------------------


def test_a_missing_soundfont_is_an_error(run, tmp_path):
    with pytest.raises(AudioError, match="not found"):
        find_soundfont(tmp_path / "none.sf2")
    code, _, err = run("audio", str(DATA / "golden.yaml"), "--soundfont", str(tmp_path / "none.sf2"),
                       "-o", str(tmp_path / "g.flac"))
    assert code == 1 and f"SoundFont {tmp_path / 'none.sf2'} not found" in err


@pytest.mark.parametrize(("content", "message"), [
    (b"not a soundfont at all", "is not a SoundFont"),
    (b"RIFF" + (10**6).to_bytes(4, "little") + b"sfbkLIST", "is truncated"),
])
def test_a_file_that_is_not_a_whole_soundfont_is_refused(tmp_path, content, message):
    font = tmp_path / "bad.sf2"
    font.write_bytes(content)
    with pytest.raises(AudioError, match=message):
        find_soundfont(font)


@needs_fluidsynth
def test_a_soundfont_fluidsynth_cannot_load_is_an_error_not_silence(run, tmp_path):
    font = tmp_path / "garbled.sf2"
    body = b"LIST" + (12).to_bytes(4, "little") + b"junkjunkjunk"
    font.write_bytes(b"RIFF" + (4 + len(body)).to_bytes(4, "little") + b"sfbk" + body)
    out = tmp_path / "g.flac"
    code, _, err = run("audio", str(DATA / "golden.yaml"), "--soundfont", str(font), "-o", str(out))
    assert code == 1 and "FluidSynth:" in err and "error" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbled.sf2"]


def test_an_unwritable_output_is_an_error(run, tmp_path):
    code, _, err = run("audio", str(DATA / "golden.yaml"), "-o", str(tmp_path / "no" / "such" / "g.flac"))
    assert code == 1 and "cannot write" in err


@needs_fluidsynth
def test_a_disk_that_fills_during_the_render_is_an_error_and_leaves_nothing(tmp_path):
    """A file-size limit makes the writes fail part-way, as a full disk does (FluidSynth itself is exempt)."""
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (300_000, resource.RLIM_INFINITY))\n"
        "import yuesheng.process as process\n"
        "process.die_with_parent = lambda _parent: resource.setrlimit(resource.RLIMIT_FSIZE, (-1, -1))\n"
        "from yuesheng.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    existing = tmp_path / "g.wav"
    existing.write_bytes(b"the previous render")
    done = subprocess.run([sys.executable, "-c", code, "audio", str(DATA / "golden.yaml"), "-o", str(existing)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and f"cannot write {existing}" in done.stderr and "Traceback" not in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["g.wav"] and existing.read_bytes() == b"the previous render"


def _fake_fluidsynth(tmp_path: Path, script: str) -> str:
    command = tmp_path / "fluidsynth"
    command.write_text("#!/bin/sh\n" + script + "\n")
    command.chmod(0o755)
    return str(command)


@needs_fluidsynth
def test_a_render_that_stops_short_is_an_error_not_padded_with_silence(monkeypatch, tmp_path):
    fake = _fake_fluidsynth(tmp_path, "head -c 80000 /dev/zero; echo 'Audio file write error' >&2; exit 0")
    monkeypatch.setattr(audio, "find_fluidsynth", lambda: fake)
    out = tmp_path / "out" / "t.flac"
    out.parent.mkdir()
    with pytest.raises(AudioError, match="FluidSynth: Audio file write error"):
        render(_sound_and_silence(), out)
    fake = _fake_fluidsynth(tmp_path, "head -c 80000 /dev/zero")
    monkeypatch.setattr(audio, "find_fluidsynth", lambda: fake)
    with pytest.raises(AudioError, match="FluidSynth stopped after 10000 frames of its render, 65536 expected"):
        render(_sound_and_silence(), out)
    assert list(out.parent.iterdir()) == []


@needs_fluidsynth
def test_a_fluidsynth_that_hangs_is_stopped_at_its_time_limit(monkeypatch, tmp_path):
    fake = _fake_fluidsynth(tmp_path, "exec sleep 30")
    monkeypatch.setattr(audio, "find_fluidsynth", lambda: fake)
    monkeypatch.setattr(audio, "FluidSynth", lambda arguments, _limit: FluidSynth(arguments, 0.5))
    with time_limit(10), pytest.raises(AudioError, match="FluidSynth took longer than 0 s and was stopped"):
        render(_sound_and_silence(), tmp_path / "t.flac")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fluidsynth"]


# --- interruption -------------------------------------------------------------------------------------------


def _fluidsynth_children(pid: int) -> list[int]:
    """The fluidsynth processes whose parent is *pid*."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            name, rest = stat[stat.index("(") + 1: stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
            if name == "fluidsynth" and int(rest[1]) == pid:
                found.append(int(entry.name))
    return found


def _start_render(tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    """`python -m yuesheng audio` on a half-hour rite, once its FluidSynth is running."""
    process = subprocess.Popen([sys.executable, "-m", "yuesheng", "audio", str(DATA / "mini_xiangyin.yaml"), "-o",
                                str(tmp_path / "out" / "x.flac")], cwd=ROOT, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(tmp_path / "tmp")})
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        children = _fluidsynth_children(process.pid)
        if children and any(f.stat().st_size > 0 for f in (tmp_path / "out").iterdir()):  # audio is being written
            return process, children[0]
        time.sleep(0.05)
    process.kill()
    raise AssertionError("FluidSynth did not start")


def _gone(pid: int, within: float = 5) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = (Path("/proc") / str(pid) / "stat").read_text().split(")")[1].split()[0]
        except OSError:
            return True
        if state == "Z":  # dead, not yet reaped by its parent
            return True
        time.sleep(0.05)
    return False


@needs_fluidsynth
@pytest.mark.skipif(sys.platform != "linux", reason="reads /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, pytest.param(signal.SIGINT, marks=pytest.mark.slow)])
def test_an_interrupted_render_leaves_no_temporary_file_and_no_fluidsynth(tmp_path, signum):
    (tmp_path / "out").mkdir()
    (tmp_path / "tmp").mkdir()
    process, synth = _start_render(tmp_path)
    process.send_signal(signum)
    _, err = process.communicate(timeout=20)
    expected = {signal.SIGTERM: (143, "terminated (SIGTERM)"), signal.SIGINT: (130, "interrupted (Ctrl-C)")}[signum]
    assert (process.returncode, err.strip().splitlines()[-1].split(":")[0]) == expected and "Traceback" not in err
    assert _gone(synth)
    assert list((tmp_path / "out").iterdir()) == [] and list((tmp_path / "tmp").iterdir()) == []


@needs_fluidsynth
@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_PDEATHSIG is Linux's")
def test_fluidsynth_dies_with_a_killed_yuesheng(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "tmp").mkdir()
    process, synth = _start_render(tmp_path)
    process.kill()
    process.communicate(timeout=20)
    assert _gone(synth)


def test_the_files_written_beside_the_audio_are_checked_before_rendering(run, tmp_path, monkeypatch):
    rendered = []
    monkeypatch.setattr(audio, "render", lambda *a, **k: rendered.append(a))
    sheet = tmp_path / "g.yaml"
    sheet.write_text((DATA / "golden.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "y.cue").symlink_to(sheet)  # the .cue beside y.flac would replace the cue sheet
    code, _, err = run("audio", str(sheet), "--labels", "-o", str(tmp_path / "y.flac"))
    assert code == 1 and "it is one of this command's inputs" in err and rendered == []
    assert sheet.read_text(encoding="utf-8").startswith("# A small rite")


def test_a_fifo_cannot_hold_audio_and_an_empty_gap_is_not_the_default(run, tmp_path, monkeypatch):
    rendered = []
    monkeypatch.setattr(audio, "render", lambda *a, **k: rendered.append(a))
    fifo = tmp_path / "f.wav"
    os.mkfifo(fifo)
    code, _, err = run("audio", str(DATA / "golden.yaml"), "-o", str(fifo))
    assert code == 2 and "a FIFO or device cannot hold audio" in err
    code, _, err = run("audio", str(DATA / "golden.yaml"), "--music-only", "--gap", "", "-o", str(tmp_path / "m.flac"))
    assert code == 2 and "--gap: bad duration ''" in err and rendered == []
