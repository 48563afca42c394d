"""Placed audio: the rite heard from a seat. The only module that imports pyroomacoustics (scipy also in ``sofa``).

Each sounding part is rendered alone by FluidSynth (dry: no synthesizer reverb), one process per part, each
condensed on its own clock: FluidSynth renders only where that part sounds (``audio.plan`` of the part alone),
and a thread reads it ahead while the mix is made. Each place a part's ``placement.Stop`` gives is heard, per
ear, as one impulse response from the moment of emission:

- **direct sound**: delayed by the distance over the speed of sound, plus the far ear's interaural time
  difference (Woodworth); scaled by the distance (1/r); low-passed where ISO 9613-1 air absorption over the path
  reaches 3 dB (one pole); shaped per ear by Brown and Duda's head-shadow filter (one pole, one zero), which gives
  the interaural level difference, rising with frequency;
- **reflections**: the image-source response of pyroomacoustics less its direct path, at two points a head's
  width apart (so they reach the ears at different times, without the head's shadow) —
  the 堂 as a box open to the south (walls, floor and roof of the hall) when the part and the listener are both
  on it, else the ground of the 庭 (first order).

The parts are mixed block by block by FFT convolution (overlap-add) with those responses, whose spectra are
computed once per stop; a part silent in a block costs nothing. A part that moves (遷樂) crossfades the sound
it makes from its old place to its new one over ``FADE`` seconds; what it made before rings on from the old.
The file has the same length and format as a plain render; only its sound differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from yuesheng.errors import AudioError, OutputError
from yuesheng.files import atomic_path
from yuesheng.music.instruments import PARTS
from yuesheng.outputs.audio import (
    CHANNELS,
    CHUNK,
    FluidSynth,
    Rendered,
    _why,
    check_space,
    find_fluidsynth,
    find_soundfont,
    fluidsynth_arguments,
    only_parts,
    plan,
    segments,
    sounding_parts,
)
from yuesheng.outputs.placement import (
    Listener,
    Physics,
    Place,
    Stop,
    bearing,
    blocking,
    hear,
    position_m,
    with_hall,
)
from yuesheng.outputs.sofa import Hrtf
from yuesheng.timeline import TICKS_PER_SECOND, Timeline

if TYPE_CHECKING:
    from yuesheng.staging.rite import StagedRite

FADE = 0.05  # seconds of crossfade when a part moves
BLOCK = CHUNK  # samples mixed at a time, by FFT convolution
FILTER_TAPS = 1024  # the air and head filters' responses are cut here (the slowest, 200 Hz, has fallen by 1e-12)
READ_AHEAD = 4  # chunks of each part read ahead of the mix
CEILING = 10 ** (-1 / 20)  # −1 dBFS: the limiter keeps every sample of the placed mix at or below it
LIMIT_WINDOW = 0.005  # seconds over which the limiter's gain falls before a peak and rises after it
HALL_ORDER = 6  # image-source order inside the 堂
# Energy absorption of the 堂's surfaces (assumptions; docs/seat.md): a south face open to the 庭, rammed-earth
# and plaster walls (序, and the wall of the 房 and 室 behind), a timber floor laid with mats, a timber and tile roof.
HALL_ABSORPTION = {"south": 1.0, "north": 0.1, "east": 0.1, "west": 0.1, "floor": 0.3, "ceiling": 0.25}
HALL_HEIGHT_M = 3.5  # from the 堂's floor to the roof over it (assumption)
GROUND_ABSORPTION = 0.2  # the beaten earth of the 庭 (assumption)
HEAD_ALPHA_MIN, HEAD_THETA_MIN = 0.1, math.radians(150)  # Brown and Duda (1998), the spherical head's shadow


def head_shadow(angle: float, physics: Physics, rate: int) -> tuple[Any, Any]:
    """Brown and Duda's head shadow for an ear *angle* radians from the source, as a digital filter (bilinear)."""
    import numpy as np

    alpha = (1 + HEAD_ALPHA_MIN / 2) + (1 - HEAD_ALPHA_MIN / 2) * math.cos(min(angle, math.pi) / HEAD_THETA_MIN
                                                                            * math.pi)
    tau = physics.head_radius_m / (2 * physics.speed_m_s)
    k = 2.0 * rate * tau
    return np.array([1 + alpha * k, 1 - alpha * k]) / (1 + k), np.array([1.0, (1 - k) / (1 + k)])


def _air(cutoff: float, rate: int) -> tuple[Any, Any]:
    import numpy as np

    pole = math.exp(-2 * math.pi * cutoff / rate) if cutoff < rate / 2 else 0.0
    return np.array([1 - pole, 0.0]), np.array([1.0, -pole])


def reflections(place: Place, who: Listener, physics: Physics, rate: int) -> Any:
    """The reflections of *place* heard by *who* (pyroomacoustics' image sources less the direct path), scaled so
    that the direct path would have the level ``placement.hear`` gives it; inside the 堂, source and listener
    are kept within its walls."""
    import numpy as np
    import pyroomacoustics as pra

    heard = hear(place, who, physics)
    source = np.array(position_m(place.x, place.y, physics, source=True))
    ear = np.array(position_m(who.x, who.y, physics, source=False))
    flip = np.array([1.0, -1.0, 1.0])
    if heard.hall:  # pyroomacoustics' y runs north from the 堂's south edge; its floor is the 堂's
        west, east, depth = physics.hall_bu
        lo = np.array([west * physics.bu_m, 0.0, 0.0])
        size = np.array([(east - west) * physics.bu_m, depth * physics.bu_m, HALL_HEIGHT_M])
        materials = {wall: pra.Material(value) for wall, value in HALL_ABSORPTION.items()}
        order = HALL_ORDER
        lift = np.array([0.0, 0.0, physics.tang_height_m])
        source, ear = (source - lift) * flip - lo, (ear - lift) * flip - lo
    else:  # the open 庭: only the ground reflects (the 堂's floor, when both are up on it)
        floor = physics.tang_height_m if place.y < 0 and who.y < 0 else 0.0
        lo = np.minimum(source, ear) - np.array([2.0, 2.0, floor])
        size = np.abs(source - ear) + np.array([4.0, 4.0, 0.0])
        size[2] = 30.0
        materials = {wall: pra.Material(1.0) for wall in ("north", "south", "east", "west", "ceiling")}
        materials["floor"] = pra.Material(GROUND_ABSORPTION)
        order = 1
        source, ear = source - lo, ear - lo
    margin = 0.05
    source = np.clip(source, margin, size - margin)
    fx, fy = who.facing
    right = np.array([-fy, fx, 0.0]) * (flip if heard.hall else 1.0) * physics.head_radius_m
    ears = np.clip(np.stack([ear - right, ear + right]), margin, size - margin)  # left, right
    pra.constants.set("c", physics.speed_m_s)
    pra.constants.set("rir_hpf_enable", False)  # its zero-phase high-pass would ring before the first reflection

    def response(max_order: int) -> list[Any]:
        room = pra.ShoeBox(size, fs=rate, materials=materials, max_order=max_order)
        room.add_source(source)
        room.add_microphone_array(ears.T)
        room.compute_rir()
        return [np.asarray(room.rir[m][0], dtype=np.float64) for m in (0, 1)]

    full, direct = response(order), response(0)
    skip = pra.constants.get("frac_delay_length") // 2
    out = []
    for ear_full, ear_direct in zip(full, direct, strict=True):
        echoes = ear_full.copy()
        echoes[:len(ear_direct)] -= ear_direct[:len(echoes)]
        # pyroomacoustics' direct path is a fractional-delay pulse whose sum is its level: scaled to ``hear``'s
        out.append(echoes[skip:] * heard.gain / float(np.sum(ear_direct)))
    length = max(len(e) for e in out)
    both = np.zeros((length, 2))
    for n, echoes in enumerate(out):
        both[:len(echoes), n] = echoes
    audible = np.nonzero(np.abs(both).max(axis=1) > 1e-5)[0]
    return both[:audible[-1] + 1] if len(audible) else both[:1] * 0


def direct(place: Place, who: Listener, physics: Physics, rate: int, hrtf: Hrtf | None = None) -> Any:
    """The direct sound of *place* at each ear of *who* (samples × 2), from the moment of emission: delayed by
    the path, scaled by the distance and low-passed by the air (its filter's response cut at ``FILTER_TAPS``);
    then the head: the HRIR pair of the direction if *hrtf* is given, else the far ear's interaural time
    difference (Woodworth) and Brown and Duda's head shadow."""
    import numpy as np
    from scipy.signal import lfilter

    heard = hear(place, who, physics)
    air_b, air_a = _air(heard.cutoff_hz, rate)
    impulse = np.zeros(FILTER_TAPS)
    impulse[0] = heard.gain
    if hrtf is not None:
        air = lfilter(air_b, air_a, impulse)
        ahead, right, up = bearing(place, who, physics)
        pair = hrtf.toward(ahead, -right, up)
        delay = round(heard.delay_s * rate)
        out = np.zeros((delay + FILTER_TAPS + pair.shape[1] - 1, CHANNELS))
        for ear in range(CHANNELS):
            out[delay:, ear] = np.convolve(air, pair[ear])
        return out
    right = abs(heard.azimuth - math.pi / 2)
    left = abs(heard.azimuth + math.pi / 2)
    right, left = (min(a, 2 * math.pi - a) for a in (right, left))
    late = (heard.itd_s if heard.azimuth > 0 else 0.0, heard.itd_s if heard.azimuth < 0 else 0.0)  # the far ear
    delays = [round((heard.delay_s + extra) * rate) for extra in late]
    out = np.zeros((max(delays) + FILTER_TAPS, CHANNELS))
    for ear, (angle, delay) in enumerate(zip((left, right), delays, strict=True)):
        b, a = head_shadow(angle, physics, rate)
        out[delay:delay + FILTER_TAPS, ear] = lfilter(np.convolve(b, air_b), np.convolve(a, air_a), impulse)
    return out


def response(stop: Stop, who: Listener, physics: Physics, rate: int,
             cache: dict[tuple[Place, Listener], Any], hrtf: Hrtf | None = None) -> Any:
    """All that *who* hears of a sound made at *stop* (samples × 2, from its emission): each place's direct
    sound and reflections, each place at 1/√n of the power."""
    import numpy as np

    heard = []
    for place in stop.places:
        if (place, who) not in cache:
            near, far = direct(place, who, physics, rate, hrtf), reflections(place, who, physics, rate)
            both = np.zeros((max(len(near), len(far)), CHANNELS))
            both[:len(near)] += near
            both[:len(far)] += far
            cache[place, who] = both
        heard.append(cache[place, who])
    out = np.zeros((max(len(h) for h in heard), CHANNELS))
    for h in heard:
        out[:len(h)] += h / math.sqrt(len(heard))
    return out


class Voice:
    """One part heard from the seat: the response of each of its stops, from the file's sample where it begins.

    A block of the part's sound is heard through the stop it is made at; across a change the sound made fades
    from the old stop to the new over ``FADE`` seconds, and what was made before rings on from the old place."""

    def __init__(self, stops: tuple[Stop, ...], who: Listener, physics: Physics, rate: int,
                 cache: dict[tuple[Place, Listener], Any], hrtf: Hrtf | None = None) -> None:
        self.starts = [stop.start_tick * rate // TICKS_PER_SECOND for stop in stops]
        self.responses = [response(stop, who, physics, rate, cache, hrtf) for stop in stops]
        self.fade = max(1, round(FADE * rate))
        self.spectra: dict[tuple[int, int], Any] = {}

    @property
    def length(self) -> int:
        """The longest response, in samples."""
        return max(len(r) for r in self.responses)

    def add(self, mono: Any, at: int, size: int, into: Any) -> None:
        """Add to *into* (a spectrum, size // 2 + 1 × 2) the sound of *mono*, made from sample *at* on, as heard."""
        import numpy as np
        from scipy.fft import rfft

        n = len(mono)
        plain = None
        for k, start in enumerate(self.starts):
            end = self.starts[k + 1] if k + 1 < len(self.starts) else None
            if start >= at + n or (end is not None and end + self.fade <= at):
                continue
            if (k == 0 or start + self.fade <= at) and (end is None or at + n <= end):
                if plain is None:
                    plain = rfft(mono, size)
                heard = plain
            else:
                t = np.arange(at, at + n)
                weight = np.ones(n, dtype=np.float32) if k == 0 else np.clip((t - start) / self.fade, 0.0, 1.0)
                if end is not None:
                    weight -= np.clip((t - end) / self.fade, 0.0, 1.0)
                heard = rfft((mono * weight).astype(np.float32), size)
            spectrum = self._spectrum(k, size)
            for ear in range(CHANNELS):
                into[:, ear] += heard * spectrum[:, ear]

    def _spectrum(self, k: int, size: int) -> Any:
        import numpy as np
        from scipy.fft import rfft

        if (k, size) not in self.spectra:
            self.spectra[k, size] = rfft(self.responses[k].astype(np.float32), size, axis=0)
        return self.spectra[k, size]


class _Mix:
    """The parts' sound summed block by block by FFT convolution (overlap-add), each part's response as a
    spectrum computed once per stop; a block where no part sounds costs nothing but its reflections' tails."""

    def __init__(self, voices: Mapping[str, Voice]) -> None:
        import numpy as np
        from scipy.fft import next_fast_len

        self.size = next_fast_len(BLOCK + max([v.length for v in voices.values()] + [1]) - 1, real=True)
        self.carry = np.zeros((self.size, CHANNELS))

    def block(self, heard: list[tuple[Voice, Any]], at: int, n: int) -> Any:
        """The next *n* samples of the mix: each (voice, mono) of *heard* sounds from sample *at* on."""
        import numpy as np
        from scipy.fft import irfft

        if heard:
            spectrum = np.zeros((self.size // 2 + 1, CHANNELS), dtype=np.complex64)
            for voice, mono in heard:
                voice.add(mono, at, self.size, spectrum)
            self.carry += irfft(spectrum, self.size, axis=0)
        out = self.carry[:n].copy()
        self.carry[:-n] = self.carry[n:]
        self.carry[-n:] = 0.0
        return out


class _Feed:
    """One part's mono samples on the file's clock: FluidSynth's where the part sounds, none where its own
    silences were cut. A thread reads FluidSynth ahead, so that the synthesizers run while the mix is made."""

    def __init__(self, synth: FluidSynth, runs: list[tuple[bool, int]]) -> None:
        import queue
        import threading

        self.synth, self.runs = synth, runs
        self.total = sum(frames for sound, frames in runs if sound)  # here: take() shortens the runs as it goes
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=READ_AHEAD)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.left: Any = None
        self.run = 0

    def start(self) -> None:
        self.thread.start()

    def close(self) -> None:
        """Stop reading (its FluidSynth is stopped first) and wait for the thread."""
        self.stopping.set()
        if self.thread.is_alive():
            self.thread.join()

    def _read(self) -> None:
        import queue

        import numpy as np

        total = self.total
        while total and not self.stopping.is_set():
            count = min(CHUNK, total)
            try:
                item: Any = self.synth.read(count).mean(axis=1, dtype=np.float32)
            except Exception as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                item, total = exc, count
            total -= count
            while not self.stopping.is_set():
                try:
                    self.queue.put(item, timeout=0.1)
                    break
                except queue.Full:
                    continue

    def take(self, n: int) -> Any:
        """The next *n* samples, or None if the part is silent in all of them."""
        import numpy as np

        out = np.zeros(n, dtype=np.float32)
        done = 0
        while done < n:
            sound, frames = self.runs[self.run]
            count = min(n - done, frames)
            if sound:
                out[done:done + count] = self._sound(count)
            self.runs[self.run] = (sound, frames - count)
            if frames == count:
                self.run += 1
            done += count
        return out if out.any() else None

    def _sound(self, count: int) -> Any:
        import numpy as np

        pieces = []
        while count:
            if self.left is None or not len(self.left):
                item = self.queue.get()
                if isinstance(item, Exception):
                    raise item
                self.left = item
            piece, self.left = self.left[:count], self.left[count:]
            pieces.append(piece)
            count -= len(piece)
        return np.concatenate(pieces)


def _first_stop(stops: tuple[Stop, ...]) -> tuple[Stop, ...]:
    """*stops* with the first moved to tick 0, so a part always has a placement."""
    return (Stop(0, stops[0].places), *stops[1:]) if stops and stops[0].start_tick else stops


def render_placed(timeline: Timeline, rite: StagedRite | None, path: str | Path, who: Listener, *,
                  physics: Physics | None = None,
                  parts: frozenset[str] = frozenset(), soundfont: str | Path | None = None,
                  hrtf: Hrtf | None = None, progress: Callable[[float], None] | None = None) -> Rendered:
    """Render *timeline* (its *parts*, or all; placed by the staged *rite* where there is one, else by the cue
    sheet's places) to *path* in stereo as heard by *who* (binaurally through
    *hrtf*, if given), atomically; the same length and format as ``audio.render``. Each part is condensed on its
    own (FluidSynth renders only where it sounds)."""
    import contextlib
    import tempfile

    import soundfile

    from yuesheng.outputs.midi import write_midi

    physics = with_hall(physics or Physics(), rite)
    command = find_fluidsynth()
    font = find_soundfont(soundfont)
    target, condensed = plan(timeline, path)
    check_space(target)
    rate = target.sample_rate
    names = [p for p in sounding_parts(condensed) if not parts or p in parts]
    stops = blocking(timeline, rite).stops
    unplaced = [p for p in names if p not in stops]
    if unplaced:
        placed = "".join(f" --part {p}" for p in names if p in stops)
        raise AudioError(f"{timeline.rite}: no place on the plan for {' '.join(unplaced)}: "
                         "a placed render needs x, y for their positions (docs/cuesheet.md)"
                         + (f"; to hear the placed parts alone:{placed}" if placed else ""))
    cache: dict[tuple[Place, Listener], Any] = {}
    hrtf = hrtf.at_rate(rate) if hrtf else None
    voices = {p: Voice(_first_stop(stops[p]), who, physics, rate, cache, hrtf) for p in names}
    with tempfile.TemporaryDirectory(prefix="yuesheng-") as tmp, atomic_path(path) as out, \
            contextlib.ExitStack() as stack:
        feeds: dict[str, _Feed] = {}
        for name in names:
            alone, squeezed = plan(only_parts(timeline, frozenset([name])), path)
            mid = Path(tmp) / f"part{PARTS[name].channel}-{len(feeds)}.mid"
            try:
                write_midi(squeezed, mid)
            except OutputError as exc:
                raise OutputError(f"cannot write the MIDI file FluidSynth reads, in {tmp}: {exc}") from None
            # FluidSynth waits on the mix, so its time is the whole render's (at 5× real time at least)
            synth = FluidSynth(fluidsynth_arguments(command, font, mid, rate, effects=False),
                               60 + target.sound_frames / rate / 5)
            feeds[name] = _Feed(synth, segments(alone.cuts, rate, alone.frames))
            stack.callback(feeds[name].close)  # after FluidSynth has been stopped
            stack.enter_context(synth)
        for feed in feeds.values():
            feed.start()
        try:
            with soundfile.SoundFile(out, "w", rate, CHANNELS, target.encoding.subtype, format=target.container) \
                    as audio:
                _write(audio, feeds, voices, target.frames, rate, progress)
        except (soundfile.SoundFileError, OSError) as exc:
            raise OutputError(f"cannot write {path}: {_why(exc, Path(path))}") from None
        for feed in feeds.values():
            feed.close()
            feed.synth.finish(extra_frames=10 * rate)
    if progress:
        progress(1.0)
    return Rendered(str(path), target.frames, rate, target.container, str(font))


def _write(audio: Any, feeds: Mapping[str, _Feed], voices: Mapping[str, Voice], frames: int, rate: int,
           progress: Callable[[float], None] | None) -> None:
    """The parts placed and summed, block by block, for the whole length of the file, through the limiter."""
    mix = _Mix(voices)
    limiter = Limiter(rate)
    at = 0
    while at < frames:
        count = min(BLOCK, frames - at)
        heard = [(voices[name], mono) for name, feed in feeds.items() if (mono := feed.take(count)) is not None]
        audio.write(limiter.push(mix.block(heard, at, count)))
        at += count
        if progress:
            progress(at / frames)
    audio.write(limiter.push(None))


class Limiter:
    """A look-ahead peak limiter, the mix's safety net: where either ear would pass ``CEILING``, the gain of both
    falls to hold it there, smoothly over ``LIMIT_WINDOW`` seconds before the peak, and rises as smoothly after.

    The gain is the mean over a window of the least gain needed over a window (so it is never more than the
    gain needed anywhere); it needs a window's look-ahead, so the mix is held back one block. Where nothing passes
    the ceiling (the usual case: each part is as loud 4 m away as in the plain render) the mix is untouched."""

    def __init__(self, rate: int) -> None:
        import numpy as np

        self.window = max(2, round(LIMIT_WINDOW * rate))
        self.held: Any = None
        self.before = np.ones(self.window - 1)  # the gain needed just before the held block

    def push(self, block: Any) -> Any:
        """The held block, limited, now that *block* (None at the end) follows it; the first call gives none."""
        import numpy as np

        held, self.held = self.held, block
        if held is None:
            return np.zeros((0, CHANNELS))
        ahead = np.ones(self.window - 1)
        if block is not None:
            ahead[:min(len(block), len(ahead))] = self._needed(block[:len(ahead)])
        needed = self._needed(held)
        context = np.concatenate([self.before, needed, ahead])
        self.before = context[-2 * (self.window - 1):-(self.window - 1)]
        if context.min() >= 1.0:
            return held
        from numpy.lib.stride_tricks import sliding_window_view

        least = sliding_window_view(context, self.window).min(axis=1)  # least[s]: over samples s … s + window − 1
        cut = np.concatenate([[0.0], np.cumsum(1.0 - least)])  # summed as cuts, so that no cut gives exactly 1
        gain = 1.0 - (cut[self.window:] - cut[:-self.window]) / self.window  # the mean of least[t … t + window − 1]
        return held * gain[:, None]

    @staticmethod
    def _needed(block: Any) -> Any:
        import numpy as np

        peak = np.abs(block).max(axis=1)
        return np.minimum(1.0, CEILING / np.maximum(peak, 1e-12))
