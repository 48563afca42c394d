"""Audio through FluidSynth: not silent, the expected length, 三分損益 audible within ±3 cents, clear errors."""

from __future__ import annotations

import shutil
import wave
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from yuesheng.audio import SOUNDFONTS, TAIL, AudioError, expected_frames, find_soundfont, render_wav
from yuesheng.validate import load_cuesheet
from yuesheng.lulu import LU, Pitch, Realization, Tuning, cents_offset
from yuesheng.timeline import Event, EventKind, Timeline, build_timeline, ticks

DATA = Path(__file__).parent / "data"
has_fluidsynth = shutil.which("fluidsynth") is not None and any(p.is_file() for p in SOUNDFONTS)
needs_fluidsynth = pytest.mark.skipif(not has_fluidsynth, reason="fluidsynth and fluid-soundfont-gm not installed")


def _samples(path: Path) -> tuple[np.ndarray, int]:
    with wave.open(str(path)) as w:
        data = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).reshape(-1, w.getnchannels())
        return data[:, 0].astype(float), w.getframerate()


def _pitch_hz(samples: np.ndarray, rate: int, around: float) -> float:
    """The frequency of the strongest peak within 3% of *around*, by FFT with parabolic interpolation."""
    segment = samples[rate // 2: rate * 7 // 2] * np.hanning(rate * 3)
    size = 1 << 20
    spectrum = np.abs(np.fft.rfft(segment, size))
    freqs = np.fft.rfftfreq(size, 1 / rate)
    lo, hi = np.searchsorted(freqs, [around * 0.97, around * 1.03])
    k = lo + int(np.argmax(spectrum[lo:hi]))
    a, b, c = np.log(spectrum[k - 1: k + 2])
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * rate / size


@needs_fluidsynth
def test_a_short_rite_renders_with_sound_and_the_expected_length(repertoire, tmp_path):
    timeline = build_timeline(load_cuesheet(DATA / "golden.yaml", repertoire))
    out = tmp_path / "golden.wav"
    seen: list[float] = []
    rendered = render_wav(timeline, out, progress=seen.append)
    samples, rate = _samples(out)
    assert len(samples) == rendered.frames == expected_frames(timeline)
    assert len(samples) / rate == pytest.approx(228 + float(TAIL))
    assert np.sqrt(np.mean(samples[: rate * 20] ** 2)) > 100  # 肆夏 on the bells, not silence
    assert seen[-1] == 1.0


@needs_fluidsynth
@pytest.mark.parametrize("name", ["仲", "林", "夾"])
def test_sanfen_tuning_is_audible_within_three_cents(tmp_path, name):
    the_lu = next(l for l in LU if l.short == name)
    real = Realization(60, Tuning.SANFEN)
    key, _ = real.midi(Pitch(the_lu))
    note = Event(0, ticks(Fraction(4)), EventKind.NOTE, "tone", part="歌", key=key, velocity=100)
    out = tmp_path / "tone.wav"
    render_wav(Timeline("tone", "tone", (note,), (), (), (), real), out)
    samples, rate = _samples(out)
    measured = _pitch_hz(samples, rate, real.frequency(Pitch(the_lu)))
    equal = 440 * 2 ** ((key - 69) / 12)
    cents = 1200 * np.log2(measured / equal)
    assert cents == pytest.approx(cents_offset(the_lu, Tuning.SANFEN), abs=3)


@needs_fluidsynth
def test_a_ringing_instrument_does_not_make_the_render_run_on(tmp_path):
    bells = tuple(Event(ticks(Fraction(n, 4)), ticks(Fraction(1, 4)), EventKind.NOTE, "b", part="鐘", key=60 + n,
                        velocity=127) for n in range(8))
    timeline = Timeline("bells", "bells", bells, (), (), (), Realization())
    out = tmp_path / "bells.wav"
    rendered = render_wav(timeline, out)
    assert rendered.seconds == pytest.approx(2 + float(TAIL))
    assert out.stat().st_size < 1_000_000


def test_a_missing_soundfont_says_how_to_get_one(tmp_path):
    with pytest.raises(AudioError, match="not found"):
        find_soundfont(tmp_path / "none.sf2")


def test_missing_fluidsynth_says_how_to_install_it(monkeypatch, tmp_path):
    monkeypatch.setattr("shutil.which", lambda _name: None)
    timeline = Timeline("t", "t", (), (), (), (), Realization())
    with pytest.raises(AudioError, match="apt-get install fluidsynth fluid-soundfont-gm"):
        render_wav(timeline, tmp_path / "x.wav")
    assert not (tmp_path / "x.wav").exists()


def test_audio_command_usage_and_errors(run, tmp_path, monkeypatch):
    assert run("audio", "xiangyinjiu", "-o", str(tmp_path / "x.mp3"))[0] == 2
    monkeypatch.setattr("shutil.which", lambda _name: None)
    code, _, err = run("audio", "xiangyinjiu", "-o", str(tmp_path / "x.wav"))
    assert code == 1 and "apt-get install" in err
