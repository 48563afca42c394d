"""Timeline → an audio file (WAV, FLAC, Ogg Vorbis, Opus) through FluidSynth and a General MIDI SoundFont.

How a render goes:

1. **Plan.** The format follows the output's extension (``ENCODINGS``). The file
   is exactly the rite's length plus ``TAIL`` seconds. A WAV whose data would
   pass the 4 GiB a RIFF header can count is written as RF64 (the EBU's 64-bit
   WAV, which libsndfile, FluidSynth, ffmpeg, Audacity and SoX read). The size
   is estimated — exactly for WAV, as an upper bound for the compressed
   formats — and checked against the free space of the output's file system
   before anything is rendered.
2. **Only the sound is rendered.** A rite is mostly silence (actions). The
   Timeline's sounding events are condensed (``condense.py``): every silence,
   counted from a note's end plus ``RING`` seconds of release, loses a
   multiple of ``QUANTUM`` ticks (3.2 s: a whole number of milliseconds and of
   FluidSynth's 64-sample blocks at 44.1 and 48 kHz), so every note keeps its
   exact place on FluidSynth's clock. That MIDI (``midi.py``) is rendered by
   the ``fluidsynth`` command in its fast offline mode, streaming raw float
   samples into a pipe — no intermediate WAV anywhere.
3. **Written once.** The samples go through soundfile (libsndfile) into a
   temporary file beside the output, with zeros where silence was removed, at
   the same sample positions as a straight render; the file is renamed over
   the output at the end (``files.atomic_path``); its tags (``set_tags``) go in
   before the first sample. A render that yields fewer samples than planned, a
   FluidSynth error (a SoundFont it cannot load), a full disk, Ctrl-C or
   SIGTERM: the temporary file is removed, FluidSynth is killed, the existing
   output is untouched.

FluidSynth runs in its own process group, with a time limit, and on Linux with
a parent-death signal, so it dies with yuesheng even when yuesheng is killed
with SIGKILL. The MIDI it reads lives in a temporary directory (kilobytes).

Install on Debian: ``apt-get install fluidsynth fluid-soundfont-gm``.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from yuesheng.errors import AudioError, OutputError, UnknownNameError
from yuesheng.files import atomic_path
from yuesheng.music.instruments import PARTS, find_part
from yuesheng.outputs.condense import Cut, condense, sounds
from yuesheng.process import bound_to_us
from yuesheng.text import suggest
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline, seconds, ticks

TAIL = Fraction(2)  # seconds of release after the last event
SAMPLE_RATE = 44100
CHANNELS, SAMPLE_BYTES = 2, 2
RING = Fraction(6)  # seconds a note may ring after its end before the silence that follows is cut
QUANTUM = 3072  # ticks (3.2 s) removed at a time: whole milliseconds and whole 64-sample blocks at 44.1/48 kHz
RIFF_LIMIT = 0xFFFFFFFF  # the largest size a RIFF header can state
WAV_HEADER = 44
CHUNK = 1 << 16  # frames read or written at a time
SOUNDFONTS = (
    Path("/usr/share/sounds/sf2/FluidR3_GM.sf2"),  # Debian fluid-soundfont-gm
    Path("/usr/share/sounds/sf2/default-GM.sf2"),
    Path("/usr/share/sounds/sf3/default-GM.sf3"),
)
INSTALL = "install it with: apt-get install fluidsynth fluid-soundfont-gm"


@dataclass(frozen=True, slots=True)
class Encoding:
    """An output format: libsndfile's format and subtype, its sample rate, and bytes per second at most."""

    name: str
    container: str
    subtype: str
    sample_rate: int = SAMPLE_RATE
    sound_rate: int = SAMPLE_RATE * CHANNELS * SAMPLE_BYTES  # bytes per second of sound, an upper bound
    silence_rate: int = SAMPLE_RATE * CHANNELS * SAMPLE_BYTES  # bytes per second of silence, an upper bound


ENCODINGS = {
    ".wav": Encoding("WAV (16-bit PCM)", "WAV", "PCM_16"),
    ".flac": Encoding("FLAC", "FLAC", "PCM_16", silence_rate=1_000),  # ~170 B/s measured for silence
    ".ogg": Encoding("Ogg Vorbis", "OGG", "VORBIS", sound_rate=40_000, silence_rate=1_000),  # ~16 kB/s, ~100 B/s
    ".opus": Encoding("Opus", "OGG", "OPUS", 48_000, sound_rate=40_000, silence_rate=1_000),  # Opus runs at 48 kHz
}


@dataclass(frozen=True, slots=True)
class Plan:
    """What a render will write: where, how, how long, and how big at most."""

    path: Path
    encoding: Encoding
    container: str  # WAV, RF64, FLAC or OGG
    frames: int
    sound_frames: int  # frames FluidSynth renders; the rest is written as zeros
    cuts: tuple[Cut, ...]
    size_bytes: int

    @property
    def sample_rate(self) -> int:
        return self.encoding.sample_rate


@dataclass(frozen=True, slots=True)
class Rendered:
    """What was written: frames, seconds, the format, and the SoundFont used."""

    path: str
    frames: int
    sample_rate: int
    container: str
    soundfont: str

    @property
    def seconds(self) -> float:
        return self.frames / self.sample_rate


# --- finding the tools -------------------------------------------------------------------------------


def find_fluidsynth() -> str:
    """The fluidsynth command, or AudioError saying how to install it."""
    found = shutil.which("fluidsynth")
    if not found:
        raise AudioError(f"FluidSynth is not installed (no 'fluidsynth' command); {INSTALL}")
    return found


def check_soundfont(path: Path) -> None:
    """AudioError unless *path* is a whole RIFF ``sfbk`` file (a .sf2, or a compressed .sf3)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(12)
        size = path.stat().st_size
    except OSError as exc:
        raise AudioError(f"cannot read SoundFont {path}: {exc.strerror or exc}") from None
    if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"sfbk":
        raise AudioError(f"{path} is not a SoundFont (expected a RIFF 'sfbk' file, .sf2 or .sf3)")
    if int.from_bytes(head[4:8], "little") + 8 > size:
        raise AudioError(f"SoundFont {path} is truncated ({size} bytes, its header says "
                         f"{int.from_bytes(head[4:8], 'little') + 8})")


def find_soundfont(path: str | Path | None = None) -> Path:
    """The SoundFont to use: *path*, checked, or the General MIDI one Debian installs."""
    if path is not None:
        if not Path(path).is_file():
            raise AudioError(f"SoundFont {path} not found")
        check_soundfont(Path(path))
        return Path(path)
    for candidate in SOUNDFONTS:
        if candidate.is_file():
            check_soundfont(candidate)
            return candidate
    raise AudioError(f"no General MIDI SoundFont found (looked for {', '.join(map(str, SOUNDFONTS))}); {INSTALL}")


def encoding_for(path: str | Path) -> Encoding:
    """The Encoding an output's extension asks for, if this libsndfile can write it; else AudioError."""
    import soundfile

    suffix = Path(path).suffix.lower()
    if suffix not in ENCODINGS:
        raise AudioError(f"{path}: unknown audio format {suffix or '(no extension)'}; "
                         f"use one of {', '.join(ENCODINGS)}")
    encoding = ENCODINGS[suffix]
    if not soundfile.check_format(encoding.container, encoding.subtype):
        raise AudioError(f"{path}: this libsndfile ({soundfile.__libsndfile_version__}) cannot write {encoding.name}")
    return encoding


# --- parts ---------------------------------------------------------------------------------------------


def sounding_parts(timeline: Timeline) -> list[str]:
    """The parts that sound in *timeline*, in the order of the instrument table."""
    found = {e.part for e in timeline.events if sounds(e)}
    return [name for name in PARTS if name in found]


def part_names(names: list[str], timeline: Timeline) -> frozenset[str]:
    """The parts *names* (歌, 瑟, 鍾, 建鼓, 獲者…) stand for; AudioError for one unknown or silent in this rite."""
    present = sounding_parts(timeline)
    out = set()
    for name in names:
        part = find_part(name)
        if part is None:
            raise AudioError(f"{UnknownNameError('part', name, suggest(name, list(PARTS)))}; parts: {' '.join(PARTS)}")
        if part.name not in present:
            raise AudioError(f"{part.name} does not sound in {timeline.rite}; its parts: {' '.join(present)}")
        out.add(part.name)
    return frozenset(out)


def only_parts(timeline: Timeline, parts: frozenset[str]) -> Timeline:
    """*timeline* with the sound of *parts* alone; actions, markers and cues stay, so its length is the same."""
    return dataclasses.replace(timeline, events=tuple(e for e in timeline.events if not sounds(e) or e.part in parts))


# --- the plan ------------------------------------------------------------------------------------------


def expected_frames(timeline: Timeline, sample_rate: int = SAMPLE_RATE) -> int:
    """The length of the file: the rite plus the release tail, in frames."""
    return round((Fraction(timeline.duration_ticks, TICKS_PER_SECOND) + TAIL) * sample_rate)


def container_for(encoding: Encoding, frames: int) -> str:
    """The container: RF64 for a WAV whose data would not fit a RIFF header, else the encoding's own."""
    if encoding.container == "WAV" and frames * CHANNELS * SAMPLE_BYTES + WAV_HEADER > RIFF_LIMIT:
        return "RF64"
    return encoding.container


def size_bound(encoding: Encoding, frames: int, sound_frames: int) -> int:
    """The size of the file: exact for PCM, an upper bound for the compressed formats."""
    if encoding.subtype == "PCM_16" and encoding.container == "WAV":
        return frames * CHANNELS * SAMPLE_BYTES + 80  # RF64 adds a ds64 chunk to the 44-byte header
    rate = encoding.sample_rate
    return (sound_frames * encoding.sound_rate + (frames - sound_frames) * encoding.silence_rate) // rate + 65_536


def render_timeline(timeline: Timeline) -> Timeline:
    """What FluidSynth plays: the sounding events, and an end a little past the tail so it renders all of it."""
    end = Event(start_tick=timeline.duration_ticks + ticks(TAIL) + QUANTUM // 8, length_ticks=0, kind=EventKind.MARKER,
                cue="end")
    events = tuple(e for e in timeline.events if sounds(e)) + (end,)
    return dataclasses.replace(timeline, events=events, cues=(), tallies=(), notices=(), holds={})


def plan(timeline: Timeline, path: str | Path) -> tuple[Plan, Timeline]:
    """The Plan of rendering *timeline* to *path*, and the condensed Timeline FluidSynth renders."""
    encoding = encoding_for(path)
    rate = encoding.sample_rate
    condensed = condense(render_timeline(timeline), gap_ticks=0, ring_ticks=ticks(RING), quantum_ticks=QUANTUM)
    frames = expected_frames(timeline, rate)
    cuts = condensed.cuts
    zeros = sum(frames for sound, frames in segments(cuts, rate, frames) if not sound)
    size = size_bound(encoding, frames, frames - zeros)
    return Plan(Path(path), encoding, container_for(encoding, frames), frames, frames - zeros, cuts, size), \
        condensed.timeline


def segments(cuts: tuple[Cut, ...], sample_rate: int, frames: int) -> list[tuple[bool, int]]:
    """The file as (sound?, frames) runs: sound from FluidSynth, zeros where a cut removed silence."""
    out: list[tuple[bool, int]] = []
    done = 0
    for cut in cuts:
        at = min(frames, cut.start_tick * sample_rate // TICKS_PER_SECOND)
        zeros = min(frames - at, cut.removed_ticks * sample_rate // TICKS_PER_SECOND)
        if at > done:
            out.append((True, at - done))
        if zeros > 0:
            out.append((False, zeros))
        done = at + max(0, zeros)
    if frames > done:
        out.append((True, frames - done))
    return out


def check_space(target: Plan) -> None:
    """OutputError if the output's file system has less free space than the file may take."""
    try:
        free = shutil.disk_usage(target.path.parent).free
    except OSError as exc:
        raise OutputError(f"cannot write {target.path}: {exc.strerror or exc}") from None
    if free < target.size_bytes:
        raise OutputError(f"not enough space for {target.path}: {target.encoding.name} of "
                          f"{target.frames / target.sample_rate / 3600:.1f} h needs up to {_size(target.size_bytes)}, "
                          f"{_size(free)} free" + ("; try .flac, .ogg or .opus" if target.encoding.container == "WAV"
                                                  else ""))


def _size(count: int) -> str:
    return f"{count / 1e9:.2f} GB" if count >= 1e8 else f"{count / 1e6:.1f} MB"


# --- FluidSynth ----------------------------------------------------------------------------------------


class FluidSynth:
    """One run of the ``fluidsynth`` command, its samples read from a pipe; a context manager.

    It runs in a process group of its own, dies with this process on Linux, is
    killed when *time_limit* seconds pass, and is killed and reaped on every way
    out of the ``with`` block. Its failures — an error on its stderr (a
    SoundFont it cannot load), a non-zero exit, a render shorter than asked
    for, the time limit — are AudioErrors.
    """

    def __init__(self, arguments: list[str], time_limit: float) -> None:
        self.arguments, self.time_limit = arguments, time_limit
        self.timed_out = threading.Event()
        self.frames_read = 0
        self.checked = False

    def __enter__(self) -> FluidSynth:
        self.errors = tempfile.TemporaryFile(prefix="yuesheng-fluidsynth-")
        try:
            self.process = subprocess.Popen(
                self.arguments, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.errors,
                start_new_session=True,
                preexec_fn=bound_to_us())
        except OSError as exc:
            self.errors.close()
            raise AudioError(f"cannot start FluidSynth ({self.arguments[0]}): {exc.strerror or exc}") from None
        self.watchdog = threading.Timer(self.time_limit, self._expire)
        self.watchdog.daemon = True
        self.watchdog.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.watchdog.cancel()
        self._kill()
        assert self.process.stdout is not None
        self.process.stdout.close()
        self.process.wait()
        self.errors.close()

    def read(self, frames: int) -> Any:
        """The next *frames* stereo frames as a float32 array (frames × 2); AudioError if the render stops short."""
        import numpy as np

        assert self.process.stdout is not None
        data = self.process.stdout.read(frames * CHANNELS * 4)
        if not self.checked:
            self._check_messages()
        if len(data) < frames * CHANNELS * 4:
            self.process.wait()
            self._check()
            got = self.frames_read + len(data) // (CHANNELS * 4)
            raise AudioError(f"FluidSynth stopped after {got} frames of its render, {self.frames_read + frames} "
                             f"expected{self._stderr_tail()}")
        self.frames_read += frames
        return np.frombuffer(data, dtype=np.float32).reshape(-1, CHANNELS)

    def finish(self, extra_frames: int) -> None:
        """Read what FluidSynth renders past the end (at most *extra_frames*, else stop it), then check how it ended."""
        assert self.process.stdout is not None
        left = extra_frames * CHANNELS * 4
        while left > 0 and (data := self.process.stdout.read(min(left, CHUNK * CHANNELS * 4))):
            left -= len(data)
        if left <= 0:  # running on past its MIDI: it is stopped, its samples are not needed
            self._kill()
        self.process.wait()
        self._check(stopped=left <= 0)

    def _check(self, stopped: bool = False) -> None:
        if self.timed_out.is_set():
            raise AudioError(f"FluidSynth took longer than {self.time_limit:.0f} s and was stopped")
        self._check_messages()
        if self.process.returncode and not stopped:
            raise AudioError(f"fluidsynth failed (exit {self.process.returncode}){self._stderr_tail()}")

    def _check_messages(self) -> None:
        """AudioError for the first error FluidSynth printed (it goes on after them, silently, with no SoundFont)."""
        self.checked = True
        self.errors.flush()
        self.errors.seek(0)
        lines = self.errors.read().decode(errors="replace").splitlines()
        self.errors.seek(0, os.SEEK_END)
        found = [line.strip() for line in lines if "error" in line.lower() or "not a soundfont" in line.lower()]
        if found:
            raise AudioError(f"FluidSynth: {'; '.join(found[:3])}")

    def _stderr_tail(self) -> str:
        self.errors.seek(0)
        text = self.errors.read().decode(errors="replace").strip()
        return f": {text[-400:]}" if text else ""

    def _expire(self) -> None:
        self.timed_out.set()
        self._kill()

    def _kill(self) -> None:
        """SIGKILL FluidSynth's process group, if it is still running."""
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def fluidsynth_arguments(command: str, font: Path, midi: Path, sample_rate: int, *, effects: bool = True) -> list[str]:
    """The command line: quiet, no shell, no MIDI input, raw 32-bit float samples to stdout, as fast as it can."""
    dry = [] if effects else ["-R", "0", "-C", "0"]
    return [command, "-n", "-i", "-q", "-g", "0.6", "-r", str(sample_rate), *dry, "-O", "float", "-T", "raw", "-F", "-",
            str(font), str(midi)]


# --- tags -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Tags:
    """What a render says of itself: a title for players, and yuesheng's document (``outputs/tags.py``), ASCII."""

    title: str
    document: str


TAG_FIELDS = ("comment", "album", "artist", "genre", "copyright", "date")  # the document's pieces, in order
TAG_PIECE = 2000  # characters a piece holds: libsndfile drops a WAV LIST/INFO string past 2045 bytes


def set_tags(audio: Any, tags: Tags | None) -> None:
    """Write *tags* into the open soundfile *audio* before its first frame (FLAC and Ogg write their Vorbis comments
    then): the title and ``software`` for players, the document in pieces of ``TAG_PIECE`` over ``TAG_FIELDS`` (a
    WAV's LIST/INFO chunk: ICMT, IPRD, IART, IGNR, ICOP, ICRD; Vorbis comments COMMENT, ALBUM, …)."""
    if tags is None:
        return
    pieces = [tags.document[n:n + TAG_PIECE] for n in range(0, len(tags.document), TAG_PIECE)]
    if len(pieces) > len(TAG_FIELDS) or not tags.document.isascii():
        raise AudioError(f"the render's tags take {len(tags.document)} characters: at most "
                         f"{TAG_PIECE * len(TAG_FIELDS)} ASCII ones fit")
    audio.title = tags.title
    audio.software = "yuesheng"
    for name, piece in zip(TAG_FIELDS, pieces, strict=False):
        setattr(audio, name, piece)


def read_tags(path: str | Path) -> str:
    """The document ``set_tags`` wrote into the audio file at *path* ('' if it has none), read from the file's header
    without decoding its sound; AudioError for a file libsndfile cannot open."""
    import soundfile

    try:
        with soundfile.SoundFile(path) as audio:
            found = audio.copy_metadata()
    except (soundfile.SoundFileError, OSError, RuntimeError) as exc:
        raise AudioError(f"{path}: not an audio file libsndfile reads ({str(exc).strip()})") from None
    document = ""
    for name in TAG_FIELDS:
        if not (piece := found.get(name, "")):
            break
        document += piece
    return document


# --- rendering -------------------------------------------------------------------------------------------


def render(timeline: Timeline, path: str | Path, *, soundfont: str | Path | None = None,
           effects: bool = True, progress: Callable[[float], None] | None = None, tags: Tags | None = None) -> Rendered:
    """Render *timeline* to *path* (format by extension), atomically, exactly the rite's length plus TAIL, with
    *tags* (``set_tags``) in it."""
    import soundfile

    from yuesheng.outputs.midi import write_midi

    command = find_fluidsynth()
    font = find_soundfont(soundfont)
    target, condensed = plan(timeline, path)
    check_space(target)
    rate = target.sample_rate
    sound_seconds = target.sound_frames / rate
    with tempfile.TemporaryDirectory(prefix="yuesheng-") as tmp, atomic_path(path) as out:
        mid = Path(tmp) / "rite.mid"
        try:
            write_midi(condensed, mid)
        except OutputError as exc:
            raise OutputError(f"cannot write the MIDI file FluidSynth reads, in {tmp}: {exc}") from None
        arguments = fluidsynth_arguments(command, font, mid, rate, effects=effects)
        with FluidSynth(arguments, 60 + sound_seconds / 5) as synth:
            try:
                with soundfile.SoundFile(out, "w", rate, CHANNELS, target.encoding.subtype, format=target.container) \
                        as audio:
                    set_tags(audio, tags)
                    _write(audio, synth, target, progress)
            except (soundfile.SoundFileError, OSError) as exc:
                raise OutputError(f"cannot write {path}: {_why(exc, Path(path))}") from None
            synth.finish(extra_frames=10 * rate)
    if progress:
        progress(1.0)
    return Rendered(str(path), target.frames, rate, target.container, str(font))


def _write(audio: Any, synth: FluidSynth, target: Plan, progress: Callable[[float], None] | None) -> None:
    """FluidSynth's samples where it sounds and zeros where silence was cut, chunk by chunk."""
    import numpy as np

    zeros = np.zeros((CHUNK, CHANNELS), dtype=np.int16)
    done = 0
    for sound, frames in segments(target.cuts, target.sample_rate, target.frames):
        while frames:
            count = min(CHUNK, frames)
            audio.write(np.clip(synth.read(count), -1.0, 1.0) if sound else zeros[:count])
            frames -= count
            done += count
            if progress:
                progress(done / target.frames)


def _why(exc: BaseException, path: Path) -> str:
    """A write error in words (libsndfile says only 'System error' for a full disk), with the space left."""
    text = str(exc.strerror if isinstance(exc, OSError) and exc.strerror else exc).strip().rstrip(".")
    known = isinstance(exc, OSError) and exc.errno not in (None, errno.ENOSPC, errno.EFBIG)
    if known or "system error" not in text.lower() and not isinstance(exc, OSError):
        return text  # an error that says what it is
    try:
        free = shutil.disk_usage(path.parent).free
    except OSError:
        return text
    return f"no space left on the device ({text})" if free < 1 << 20 else \
        f"{text} (a full disk or a file-size limit; {_size(free)} free there now)"


def describe(rendered: Rendered, timeline: Timeline) -> str:
    """One line for the user."""
    form = rendered.container + (" (a WAV past 4 GiB)" if rendered.container == "RF64" else "")
    return (f"wrote {rendered.path}: {timeline.rite}, {rendered.seconds / 60:.1f} min "
            f"({seconds(timeline.duration_ticks):.1f} s + {float(TAIL):g} s tail), "
            f"{form} at {rendered.sample_rate} Hz, SoundFont {rendered.soundfont}")
