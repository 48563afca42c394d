"""A rite as a video to share (``yuesheng video``): the plate frame by frame (``frames``) with the sound, through
FFmpeg, to H.264 (yuv420p, ``+faststart``) and AAC in MP4, which a browser and VLC play.

FFmpeg (Debian's ``ffmpeg``) is a child process fed raw RGB frames on its standard input. It runs in a process group
of its own and dies with yuesheng on Linux (``process.bound_to_us``); on every way out of the render — an error, a
full disk, Ctrl-C, SIGTERM — it is killed and reaped, and its output, a temporary file beside the target
(``files.atomic_path``), removed. The file is renamed over the target only once FFmpeg has finished it.

The sound: the rite's own audio for the excerpt, rendered through FluidSynth (``audio.render``) from the Timeline's
sounding events cut to the excerpt (a note begun before it sounds from its start), or an audio file given, a render
of the same rite (its tags checked by the command, ``outputs/tags.py``, then ``audio_check``: its length must be the
rite's and the release tail's), cut by FFmpeg; or none.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from yuesheng.errors import AudioError, OutputError
from yuesheng.files import atomic_path
from yuesheng.process import bound_to_us
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

if TYPE_CHECKING:
    from yuesheng.outputs.frames import Plate

INSTALL = "install it with: apt-get install ffmpeg"
PRESET = "veryfast"  # x264's: real time for a 720p plate on two shared cores, with room to spare
CRF = 23
AUDIO_BITRATE = "160k"
LENGTH_SLACK = 0.05  # seconds an audio file's length may differ from the rite's (its encoder's padding)


@dataclass(frozen=True, slots=True)
class Excerpt:
    """What a video shows: the rite from *start* to *end* seconds, played *speed* times as fast, at *fps*."""

    start: float
    end: float
    speed: float
    fps: int

    @property
    def seconds(self) -> float:
        """The video's length."""
        return (self.end - self.start) / self.speed

    @property
    def frames(self) -> int:
        return max(1, round(self.seconds * self.fps))

    def at(self, frame: int) -> float:
        """The rite's time shown by *frame*."""
        return self.start + frame * self.speed / self.fps


def find_ffmpeg(name: str = "ffmpeg") -> str:
    """The ffmpeg (or ffprobe) command, or OutputError saying how to install it."""
    found = shutil.which(name)
    if not found:
        raise OutputError(f"FFmpeg is not installed (no {name!r} command); {INSTALL}")
    return found


def media_seconds(path: Path) -> float:
    """The length of an audio or video file, read with ffprobe (AudioError where it is not one)."""
    command = [find_ffmpeg("ffprobe"), "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", str(path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=60, start_new_session=True,
                              preexec_fn=bound_to_us(), check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise AudioError(f"cannot read {path} with ffprobe: {exc}") from None
    try:
        return float(done.stdout.strip())
    except ValueError:
        raise AudioError(f"{path} is not an audio file ffprobe can read: {done.stderr.strip()[-300:]}") from None


def audio_check(path: Path, timeline: Timeline) -> None:
    """AudioError unless *path* is as long as a render of *timeline* (the rite, and ``audio.TAIL``): another rite's,
    other options', or a ``--music-only`` render is not, and would not keep step."""
    from yuesheng.outputs.audio import TAIL

    want = timeline.duration_ticks / TICKS_PER_SECOND + float(TAIL)
    got = media_seconds(path)
    if abs(got - want) > LENGTH_SLACK:
        raise AudioError(f"{path} is {got:.2f} s long, but a render of {timeline.rite} with these options is "
                         f"{want:.2f} s (the rite and a {float(TAIL):g} s tail): a render of another rite or other "
                         "options, or a --music-only one, would not keep step with the plate")


def excerpt_timeline(timeline: Timeline, start: float, end: float) -> Timeline:
    """The sounding events of *timeline* from *start* to *end* seconds, moved to begin at 0: a note begun before
    *start* sounds from 0 for what is left of it, one past *end* is cut there; a drum or call begun before is not
    heard."""
    from yuesheng.outputs.condense import sounds

    lo, hi = round(start * TICKS_PER_SECOND), round(end * TICKS_PER_SECOND)
    out = []
    for e in timeline.events:
        stop = e.start_tick + e.length_ticks
        if not sounds(e) or stop <= lo or e.start_tick >= hi:
            continue
        if e.start_tick < lo and e.kind is not EventKind.NOTE:
            continue
        begin = max(e.start_tick, lo)
        out.append(e._replace(start_tick=begin - lo, length_ticks=min(stop, hi) - begin))
    out.append(Event(start_tick=hi - lo, length_ticks=0, kind=EventKind.MARKER, cue="end"))
    out.sort(key=lambda e: e.sort_key)
    return dataclasses.replace(timeline, events=tuple(out), cues=(), tallies=(), notices=(), holds={})


def render_audio(timeline: Timeline, excerpt: Excerpt, folder: Path, soundfont: str | None) -> Path:
    """The rite's sound for *excerpt*, rendered through FluidSynth to a WAV in *folder*."""
    from yuesheng.outputs.audio import render

    path = folder / "excerpt.wav"
    render(excerpt_timeline(timeline, excerpt.start, excerpt.end), path, soundfont=soundfont)
    return path


def ffmpeg_arguments(command: str, size: tuple[int, int], excerpt: Excerpt, audio: tuple[Path, float] | None,
                     output: Path) -> list[str]:
    """FFmpeg's command line: raw RGB frames on stdin, the audio (a file and where in it the excerpt begins), H.264
    yuv420p and AAC in MP4 with the index first (+faststart), exactly the excerpt's length."""
    video = ["-f", "rawvideo", "-pix_fmt", "rgb24", "-s", f"{size[0]}x{size[1]}", "-r", str(excerpt.fps),
             "-i", "pipe:0"]
    sound: list[str] = []
    if audio is not None:
        sound = ["-ss", f"{audio[1]:.3f}", "-t", f"{excerpt.seconds:.3f}", "-i", str(audio[0]),
                 "-map", "0:v", "-map", "1:a", "-c:a", "aac", "-b:a", AUDIO_BITRATE, "-af", "apad"]
    return [command, "-hide_banner", "-loglevel", "error", "-y", *video, *sound,
            "-c:v", "libx264", "-preset", PRESET, "-crf", str(CRF), "-pix_fmt", "yuv420p",
            "-movflags", "+faststart", "-t", f"{excerpt.seconds:.3f}", "-f", "mp4", str(output)]


class Encoder:
    """One run of FFmpeg reading frames on stdin; a context manager that kills and reaps it on every way out."""

    def __init__(self, arguments: list[str]) -> None:
        self.arguments = arguments

    def __enter__(self) -> Encoder:
        self.errors = tempfile.TemporaryFile(prefix="yuesheng-ffmpeg-")
        try:
            self.process = subprocess.Popen(self.arguments, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                            stderr=self.errors, start_new_session=True, preexec_fn=bound_to_us())
        except OSError as exc:
            self.errors.close()
            raise OutputError(f"cannot start FFmpeg ({self.arguments[0]}): {exc.strerror or exc}") from None
        return self

    def write(self, frame: bytes) -> None:
        """Give FFmpeg one frame (OutputError, with what it said, if it has stopped)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(frame)
        except (BrokenPipeError, ValueError):
            self.process.wait()
            raise OutputError(f"FFmpeg stopped (exit {self.process.returncode}){self._said()}") from None

    def finish(self) -> None:
        """Close the frames and wait for FFmpeg to finish the file; OutputError if it failed."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
        except BrokenPipeError:
            pass
        if self.process.wait() != 0:
            raise OutputError(f"FFmpeg failed (exit {self.process.returncode}){self._said()}")

    def _said(self) -> str:
        self.errors.seek(0)
        text = self.errors.read().decode(errors="replace").strip()
        return f": {text[-400:]}" if text else ""

    def __exit__(self, *exc_info: object) -> None:
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except BrokenPipeError:
                pass
        self.process.wait()
        self.errors.close()


@dataclass(frozen=True, slots=True)
class Written:
    """What was written: the file, its frames and length, and what its sound is."""

    path: str
    frames: int
    seconds: float
    sound: str


def render_video(plate: Plate, excerpt: Excerpt, path: str | Path, *, timeline: Timeline,
                 audio: Path | None | str = "render", soundfont: str | None = None,
                 progress: Callable[[float], None] | None = None) -> Written:
    """Write the video of *excerpt* to *path*, atomically. *audio*: "render" (the rite's own, through FluidSynth),
    a file of the rite's audio (checked beforehand by ``audio_check``), or None for none."""
    command = find_ffmpeg()
    size = (plate.layout.width, plate.layout.height)
    with tempfile.TemporaryDirectory(prefix="yuesheng-video-") as tmp:
        sound: tuple[Path, float] | None = None
        said = "no sound"
        if audio == "render":
            sound = (render_audio(timeline, excerpt, Path(tmp), soundfont), 0.0)
            said = "the rite's sound rendered through FluidSynth"
        elif isinstance(audio, Path):
            sound = (audio, excerpt.start)
            said = f"the sound of {audio}"
        with atomic_path(path) as out:
            with Encoder(ffmpeg_arguments(command, size, excerpt, sound, out)) as encoder:
                _frames(plate, excerpt, encoder, progress)
                encoder.finish()
    return Written(str(path), excerpt.frames, excerpt.seconds, said)


def _frames(plate: Plate, excerpt: Excerpt, encoder: Encoder, progress: Callable[[float], None] | None) -> None:
    step = excerpt.speed / excerpt.fps
    total = excerpt.frames
    every = max(1, total // 200)
    for n in range(total):
        encoder.write(plate.frame(excerpt.at(n), step))
        if progress and n % every == 0:
            progress(n / total)
    if progress:
        progress(1.0)


def describe(written: Written, excerpt: Excerpt, what: str) -> str:
    """One line for the user."""
    m, s = divmod(written.seconds, 60)
    return (f"wrote {written.path}: {what}, {int(m)}:{s:04.1f} ({written.frames} frames at {excerpt.fps} fps, "
            f"×{excerpt.speed:g}), H.264 + {'AAC: ' + written.sound if written.sound != 'no sound' else 'no sound'}")
