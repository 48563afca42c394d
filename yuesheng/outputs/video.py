"""A rite as a video to share (``yuesheng video``): the plate frame by frame (``frames``) with the sound, through
FFmpeg, to H.264 (yuv420p, ``+faststart``) and AAC in MP4, which a browser and VLC play.

FFmpeg (Debian's ``ffmpeg``) is a child process fed raw RGB frames on its standard input, each in a Matroska cluster
of its own with its time (``matroska_header``, ``matroska_frame``). A frame the same as the one before is not sent:
FFmpeg converts and encodes only the pictures that change, each shown until the next (a variable frame rate on the
grid of ``--fps``, the track's nominal frame length 1/fps so that FFmpeg keeps each time on it; the last frame is
always sent, to give the video its length, and no B-frames, so that the track's length is the file's). It runs in a
process group of its own and dies with yuesheng on Linux (``process.bound_to_us``); on every way out of the render
— an error, a full disk, Ctrl-C, SIGTERM — it is killed and reaped, and its output, a temporary file beside the
target (``files.atomic_path``), removed. The file is renamed over the target only once FFmpeg has finished it.

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
KEYFRAMES = 10  # seconds between keyframes at most, for seeking (x264 counts frames, and few are sent while still)
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


def ffmpeg_arguments(command: str, excerpt: Excerpt, audio: tuple[Path, float] | None, output: Path) -> list[str]:
    """FFmpeg's command line: frames in Matroska on stdin, the audio (a file and where in it the excerpt begins), H.264
    yuv420p at the frames' own times and AAC in MP4 with the index first (+faststart), the excerpt's length."""
    video = ["-f", "matroska", "-i", "pipe:0"]
    sound: list[str] = []
    if audio is not None:
        sound = ["-ss", f"{audio[1]:.3f}", "-t", f"{excerpt.seconds:.3f}", "-i", str(audio[0]),
                 "-map", "0:v", "-map", "1:a", "-c:a", "aac", "-b:a", AUDIO_BITRATE,
                 "-af", f"apad=whole_dur={excerpt.seconds:.3f}"]
    return [command, "-hide_banner", "-loglevel", "error", "-y", *video, *sound, "-fps_mode", "passthrough",
            "-c:v", "libx264", "-preset", PRESET, "-crf", str(CRF), "-bf", "0", "-pix_fmt", "yuv420p",
            "-force_key_frames", f"expr:gte(t,n_forced*{KEYFRAMES})", "-movflags", "+faststart",
            "-t", f"{excerpt.frames / excerpt.fps:.6f}", "-f", "mp4", str(output)]


# --- frames in Matroska: the least of it FFmpeg reads (an EBML header, one track of raw RGB, a cluster a frame) ---


def _size(n: int) -> bytes:
    """An EBML element's size field: the shortest that holds *n* (all ones is reserved for 'unknown')."""
    length = 1
    while n >= (1 << (7 * length)) - 1:
        length += 1
    return ((1 << (7 * length)) | n).to_bytes(length, "big")


def _element(ident: bytes, payload: bytes) -> bytes:
    return ident + _size(len(payload)) + payload


def _uint(ident: bytes, value: int) -> bytes:
    return _element(ident, value.to_bytes(max(1, (value.bit_length() + 7) // 8), "big"))


def matroska_header(size: tuple[int, int], fps: int) -> bytes:
    """The start of a Matroska stream of one video track of *size* raw RGB frames (V_UNCOMPRESSED, 'RGB' 24 bits),
    its times in microseconds, each frame nominally 1/*fps* s (DefaultDuration: FFmpeg's time base, so that a
    frame's time stays on the grid however few are sent); the segment's size unknown (it is written as it goes)."""
    ebml = _element(b"\x1a\x45\xdf\xa3", _element(b"\x42\x82", b"matroska"))
    info = _element(b"\x15\x49\xa9\x66", _uint(b"\x2a\xd7\xb1", 1000))  # TimestampScale: 1000 ns
    video = _element(b"\xe0", _uint(b"\xb0", size[0]) + _uint(b"\xba", size[1]) + _element(b"\x2e\xb5\x24", b"RGB\x18"))
    track = _element(b"\xae", _uint(b"\xd7", 1) + _uint(b"\x73\xc5", 1) + _uint(b"\x83", 1)
                     + _uint(b"\x23\xe3\x83", round(1e9 / fps)) + _element(b"\x86", b"V_UNCOMPRESSED") + video)
    return ebml + b"\x18\x53\x80\x67\x01\xff\xff\xff\xff\xff\xff\xff" + info + _element(b"\x16\x54\xae\x6b", track)


def matroska_frame(micros: int, length: int) -> bytes:
    """What goes before a frame of *length* bytes shown from *micros* µs: a cluster of that time holding one
    SimpleBlock (track 1, a keyframe) whose data is the frame."""
    block = b"\xa3" + _size(4 + length) + b"\x81\x00\x00\x80"
    time = _uint(b"\xe7", micros)
    return b"\x1f\x43\xb6\x75" + _size(len(time) + len(block) + length) + time + block


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

    def write(self, data: bytes) -> None:
        """Give FFmpeg *data* (OutputError, with what it said, if it has stopped)."""
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(data)
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
    """What was written: the file, its frames (*pictures* of them sent to the encoder, the others being the frame
    before again) and length, and what its sound is."""

    path: str
    frames: int
    pictures: int
    seconds: float
    sound: str


def render_video(plate: Plate, excerpt: Excerpt, path: str | Path, *, timeline: Timeline,
                 audio: Path | None | str = "render", soundfont: str | None = None,
                 progress: Callable[[float], None] | None = None) -> Written:
    """Write the video of *excerpt* to *path*, atomically. *audio*: "render" (the rite's own, through FluidSynth),
    a file of the rite's audio (checked beforehand by ``audio_check``), or None for none."""
    command = find_ffmpeg()
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
            with Encoder(ffmpeg_arguments(command, excerpt, sound, out)) as encoder:
                pictures = _frames(plate, excerpt, encoder, progress)
                encoder.finish()
    return Written(str(path), excerpt.frames, pictures, excerpt.seconds, said)


def _frames(plate: Plate, excerpt: Excerpt, encoder: Encoder, progress: Callable[[float], None] | None) -> int:
    """Send the excerpt's frames to *encoder*, each that differs from the one before at its time, and the last
    again at the end; how many were sent."""
    step = excerpt.speed / excerpt.fps
    total = excerpt.frames
    every = max(1, total // 200)
    encoder.write(matroska_header((plate.layout.width, plate.layout.height), excerpt.fps))
    last, sent = b"", 0
    for n in range(total):
        frame = plate.frame(excerpt.at(n), step)
        if frame != last or n == total - 1:  # the last frame always: the video's length
            _send(encoder, frame, n, excerpt.fps)
            last, sent = frame, sent + 1
        if progress and n % every == 0:
            progress(n / total)
    if progress:
        progress(1.0)
    return sent


def _send(encoder: Encoder, frame: bytes, n: int, fps: int) -> None:
    encoder.write(matroska_frame(round(n * 1_000_000 / fps), len(frame)))
    encoder.write(frame)


def describe(written: Written, excerpt: Excerpt, what: str) -> str:
    """One line for the user."""
    m, s = divmod(written.seconds, 60)
    return (f"wrote {written.path}: {what}, {int(m)}:{s:04.1f} ({written.frames} frames at {excerpt.fps} fps, "
            f"×{excerpt.speed:g}), H.264 + {'AAC: ' + written.sound if written.sound != 'no sound' else 'no sound'}")
