"""Timeline → WAV through FluidSynth and a General MIDI SoundFont, offline and bounded.

The Timeline is written as a MIDI file (``midi.py``: every channel ends with
all-notes-off and all-sound-off at the end of the rite, 三分損益 as MTS octave
tuning) and rendered by the ``fluidsynth`` command in its fast, offline file
mode — no real-time clock, so the result is sample-accurate whatever the
machine's load. The WAV is then cut (or padded with silence) to exactly the
rite's length plus ``TAIL`` seconds, the release of the last notes: the output
length never depends on how long FluidSynth lets a voice ring. While it
renders, the growing file is watched; if it passes that length by more than a
margin, FluidSynth is stopped (a hanging voice once made a 29 GB WAV).

Install on Debian: ``apt-get install fluidsynth fluid-soundfont-gm``.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
import wave
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from yuesheng.errors import YueshengError
from yuesheng.files import atomic_path
from yuesheng.midi import write_midi
from yuesheng.timeline import TICKS_PER_SECOND, Timeline, seconds

TAIL = Fraction(2)  # seconds of release after the last event
SAMPLE_RATE = 44100
CHANNELS, SAMPLE_BYTES = 2, 2
SOUNDFONTS = (
    Path("/usr/share/sounds/sf2/FluidR3_GM.sf2"),  # Debian fluid-soundfont-gm
    Path("/usr/share/sounds/sf2/default-GM.sf2"),
    Path("/usr/share/sounds/sf3/default-GM.sf3"),
)
INSTALL = "install it with: apt-get install fluidsynth fluid-soundfont-gm"


class AudioError(YueshengError):
    """FluidSynth or a SoundFont is missing, or the render failed."""


@dataclass(frozen=True, slots=True)
class Rendered:
    """What was written: frames, seconds, and the SoundFont used."""

    path: str
    frames: int
    sample_rate: int
    soundfont: str

    @property
    def seconds(self) -> float:
        return self.frames / self.sample_rate


def find_fluidsynth() -> str:
    """The fluidsynth command, or AudioError saying how to install it."""
    found = shutil.which("fluidsynth")
    if not found:
        raise AudioError(f"FluidSynth is not installed (no 'fluidsynth' command); {INSTALL}")
    return found


def find_soundfont(path: str | Path | None = None) -> Path:
    """The SoundFont to use: *path*, or the General MIDI one Debian installs."""
    if path is not None:
        if not Path(path).is_file():
            raise AudioError(f"SoundFont {path} not found")
        return Path(path)
    for candidate in SOUNDFONTS:
        if candidate.is_file():
            return candidate
    raise AudioError(f"no General MIDI SoundFont found (looked for {', '.join(map(str, SOUNDFONTS))}); {INSTALL}")


def expected_frames(timeline: Timeline, sample_rate: int = SAMPLE_RATE) -> int:
    """The length of the WAV: the rite plus the release tail, in frames."""
    return round((Fraction(timeline.duration_ticks, TICKS_PER_SECOND) + TAIL) * sample_rate)


def _run(command: list[str], out: Path, limit_bytes: int, progress: Callable[[float], None] | None) -> None:
    """Run FluidSynth, report progress from the file's size, stop it if the file runs past *limit_bytes*."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while process.poll() is None:
            size = out.stat().st_size if out.exists() else 0
            if progress:
                progress(min(1.0, size / limit_bytes))
            if size > limit_bytes:
                process.kill()
                break
            time.sleep(0.05)
        _, err = process.communicate()
    except BaseException:
        process.kill()
        process.wait()
        raise
    if process.returncode not in (0, -9) or not out.exists():
        raise AudioError(f"fluidsynth failed ({process.returncode}): {err.decode(errors='replace').strip()[-400:]}")


def _copy_exactly(source: wave.Wave_read, target: wave.Wave_write, frames: int, chunk: int = 1 << 16) -> None:
    """Copy *frames* frames in chunks, padding with silence if the source is shorter."""
    left = frames
    while left:
        data = source.readframes(min(chunk, left))
        count = len(data) // (CHANNELS * SAMPLE_BYTES)
        if not count:
            data, count = b"\0" * (min(chunk, left) * CHANNELS * SAMPLE_BYTES), min(chunk, left)
        target.writeframes(data)
        left -= count


def render_wav(timeline: Timeline, path: str | Path, *, soundfont: str | Path | None = None,
               sample_rate: int = SAMPLE_RATE, progress: Callable[[float], None] | None = None) -> Rendered:
    """Render *timeline* to a 16-bit stereo WAV at *path*, atomically, exactly the rite's length plus TAIL."""
    command = find_fluidsynth()
    font = find_soundfont(soundfont)
    frames = expected_frames(timeline, sample_rate)
    with tempfile.TemporaryDirectory(prefix="yuesheng-") as tmp:
        mid, raw = Path(tmp) / "rite.mid", Path(tmp) / "rite.wav"
        write_midi(timeline, mid)
        limit = int(frames * CHANNELS * SAMPLE_BYTES * 1.1) + 10 * sample_rate * CHANNELS * SAMPLE_BYTES
        _run([command, "-ni", "-q", "-g", "0.6", "-r", str(sample_rate), "-O", "s16", "-T", "wav", "-F", str(raw),
              str(font), str(mid)], raw, limit, progress)
        with wave.open(str(raw), "rb") as rendered, atomic_path(path) as final, wave.open(str(final), "wb") as out:
            if (rendered.getnchannels(), rendered.getsampwidth()) != (CHANNELS, SAMPLE_BYTES):
                raise AudioError("fluidsynth wrote an unexpected WAV format")
            out.setnchannels(CHANNELS)
            out.setsampwidth(SAMPLE_BYTES)
            out.setframerate(sample_rate)
            _copy_exactly(rendered, out, frames)
    if progress:
        progress(1.0)
    return Rendered(str(path), frames, sample_rate, str(font))


def describe(rendered: Rendered, timeline: Timeline) -> str:
    """One line for the user."""
    return (f"wrote {rendered.path}: {timeline.rite}, {rendered.seconds / 60:.1f} min "
            f"({seconds(timeline.duration_ticks):.1f} s + {float(TAIL):g} s tail) at {rendered.sample_rate} Hz, "
            f"SoundFont {rendered.soundfont}")
