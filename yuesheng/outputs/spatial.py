"""Placed audio: the rite heard from a seat (scipy here and in ``sofa``; pyroomacoustics in ``room``).

Each sounding part is rendered alone by FluidSynth (dry: no synthesizer reverb), one process per part, each
condensed on its own clock: FluidSynth renders only where that part sounds (``audio.plan`` of the part alone),
and a thread reads it ahead while the mix is made. Each source a part's ``placement.Stop`` gives (``heard_as``:
players of one part sitting together are one source) is heard, per ear, as one impulse response from the moment
of emission, in the one room of the hall (``room.room_of``) whoever speaks and wherever the listener sits:

- **direct sound**: delayed by the distance over the speed of sound; scaled by the distance (1/r); filtered by
  ISO 9613-1 air absorption over the path (minimum phase);
- **early reflections** (the image sources of orders 1 to 3): each delayed and scaled by its own path, filtered by
  its walls' octave-band absorption and the air's;
- each of these through the head (``Head``) for its own direction: the HRIR pair of a diffuse-field equalised set
  (``--binaural``), else Woodworth's interaural time difference and Brown and Duda's head shadow;
- **the diffuse tail**: pyroomacoustics' ray tracing, at each ear its own random sequence (decorrelated);
- the reflections and tail high-passed (``HIGH_PASS_HZ``): no DC.

The parts are mixed block by block by FFT convolution (overlap-add) with those responses, whose spectra are
computed once per stop; a part silent in a block costs nothing. A part that moves (遷樂) crossfades the sound
it makes from its old place to its new one over ``FADE`` seconds; what it made before rings on from the old. A
walk (a player's while his part sounds, or a followed listener's) is heard at a point every quarter second,
crossfaded point to point: each point's direct sound, the room of the stands on either side (``changes_of``).
The file has the same length and format as a plain render; only its sound differs.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
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
    Tags,
    _why,
    check_space,
    find_fluidsynth,
    find_soundfont,
    fluidsynth_arguments,
    only_parts,
    plan,
    segments,
    set_tags,
    sounding_parts,
)
from yuesheng.outputs.placement import (
    STEP_TICKS,
    Listener,
    Physics,
    Place,
    Stop,
    absorption_db_per_m,
    bearing,
    blocking,
    hear,
    position_m,
    stop_at,
    with_hall,
)
from yuesheng.outputs.room import BANDS, Room, check_bounds, decay_figures, room_of, simulate
from yuesheng.outputs.sofa import Hrtf
from yuesheng.timeline import TICKS_PER_SECOND, Timeline

if TYPE_CHECKING:
    from yuesheng.staging.rite import StagedRite

FADE = 0.05  # seconds of crossfade when a part moves
BLOCK = CHUNK  # samples mixed at a time, by FFT convolution
FILTER_TAPS = 1024  # the air and wall filters' minimum-phase responses (23 ms at 44.1 kHz)
READ_AHEAD = 4  # chunks of each part read ahead of the mix
CEILING = 10 ** (-1 / 20)  # −1 dBFS: the limiter keeps every sample of the placed mix at or below it
LIMIT_WINDOW = 0.005  # seconds over which the limiter's gain falls before a peak and rises after it
HIGH_PASS_HZ = 30.0  # the reflections' high-pass (2nd-order Butterworth): no DC from the room's responses
ALLPASS_TAPS = 512  # the ambisonic tail's decorrelating all-passes
AMBISONIC_ORDERS = (1, 2, 3)
AUDIBLE = 1e-5  # a response ends where it last reaches this
GROUP_M = 3.0  # players of one part all within this of their middle are heard as one source there (docs/seat.md)
HEAD_ALPHA_MIN, HEAD_THETA_MIN = 0.1, math.radians(150)  # Brown and Duda (1998), the spherical head's shadow


def head_shadow(angle: float, physics: Physics, rate: int) -> tuple[Any, Any]:
    """Brown and Duda's head shadow for an ear *angle* radians from the source, as a digital filter (bilinear)."""
    import numpy as np

    alpha = (1 + HEAD_ALPHA_MIN / 2) + (1 - HEAD_ALPHA_MIN / 2) * math.cos(min(angle, math.pi) / HEAD_THETA_MIN
                                                                            * math.pi)
    tau = physics.head_radius_m / (2 * physics.speed_m_s)
    k = 2.0 * rate * tau
    return np.array([1 + alpha * k, 1 - alpha * k]) / (1 + k), np.array([1.0, (1 - k) / (1 + k)])


def minimum_phase(magnitude: Any) -> Any:
    """The minimum-phase response (``FILTER_TAPS`` samples) of *magnitude*, given on the ``rfft`` grid of
    2 × ``FILTER_TAPS`` points (homomorphic: the folded real cepstrum)."""
    import numpy as np

    n = 2 * FILTER_TAPS
    cepstrum = np.fft.irfft(np.log(np.maximum(magnitude, 1e-6)), n)
    fold = np.zeros(n)
    fold[0], fold[n // 2] = cepstrum[0], cepstrum[n // 2]
    fold[1:n // 2] = 2 * cepstrum[1:n // 2]
    return np.fft.irfft(np.exp(np.fft.rfft(fold)), n)[:FILTER_TAPS]


def frequencies(rate: int) -> Any:
    """The frequencies of ``minimum_phase``'s grid."""
    import numpy as np

    return np.fft.rfftfreq(2 * FILTER_TAPS, 1 / rate)


def air_gain(distance_m: float, physics: Physics, rate: int) -> Any:
    """ISO 9613-1 air absorption over *distance_m*, as amplitude on ``frequencies(rate)``."""
    import numpy as np

    grid = np.geomspace(10.0, rate / 2, 96)
    db = np.array([absorption_db_per_m(f, physics) for f in grid]) * distance_m
    return 10 ** (-np.interp(frequencies(rate), grid, db) / 20)


def band_gain(amplitudes: Any, rate: int) -> Any:
    """Octave-band amplitudes (``room.BANDS``) on ``frequencies(rate)``, interpolated in log frequency."""
    import numpy as np

    f = np.maximum(frequencies(rate), 1.0)
    return np.interp(np.log(f), np.log(BANDS), amplitudes)


class Head:
    """How an arrival from a direction reaches the ears (``CHANNELS`` out): the HRIR pair of its direction (a
    diffuse-field equalised set), else Woodworth's interaural time difference and Brown and Duda's head shadow."""

    channels = CHANNELS

    def __init__(self, physics: Physics, rate: int, hrtf: Hrtf | None) -> None:
        self.physics, self.rate, self.hrtf = physics, rate, hrtf

    def tail(self, tails: Any) -> Any:
        """The ray-traced tails at the two ears (2 × samples) as this head's channels (samples × 2)."""
        return tails.T

    def arrival(self, ahead: float, right: float, up: float, delay_s: float, filtered: Any) -> tuple[int, Any]:
        """The ears' response (from sample *delay*, taps × 2) to *filtered* (a mono response) arriving from
        (*ahead*, *right*, *up*) after *delay_s*."""
        import numpy as np
        from scipy.signal import lfilter

        delay = round(delay_s * self.rate)
        if self.hrtf is not None:
            pair = self.hrtf.toward(ahead, -right, up)
            return delay, np.stack([np.convolve(filtered, pair[ear]) for ear in range(CHANNELS)], axis=1)
        azimuth = math.atan2(right, ahead) if ahead or right else 0.0
        horizontal = math.hypot(ahead, right)
        lateral = math.asin(max(-1.0, min(1.0, right / max(1e-12, math.sqrt(horizontal ** 2 + up ** 2)))))
        itd = self.physics.head_radius_m / self.physics.speed_m_s * (abs(lateral) + math.sin(abs(lateral)))
        extra = round(itd * self.rate)
        out = np.zeros((len(filtered) + extra, CHANNELS))
        for ear, side in enumerate((-math.pi / 2, math.pi / 2)):  # left, right
            angle = abs(azimuth - side)
            b, a = head_shadow(min(angle, 2 * math.pi - angle), self.physics, self.rate)
            late = extra if (right > 0) == (ear == 0) and right else 0  # the far ear
            out[late:late + len(filtered), ear] = lfilter(b, a, filtered)
        return delay, out


class Ambisonic:
    """How an arrival from a direction is written in AmbiX (ACN channel order, SN3D normalisation) of *order* 1 to
    3: the arrival times the real spherical harmonics of its direction; the diffuse tail from the two ears' tails,
    decorrelated once more per channel (a random-phase all-pass each), at the power a diffuse field has in SN3D
    (1 / (2n + 1) of W's in each channel of order n)."""

    def __init__(self, order: int, rate: int) -> None:
        self.order, self.rate = order, rate
        self.channels = (order + 1) ** 2

    def arrival(self, ahead: float, right: float, up: float, delay_s: float, filtered: Any) -> tuple[int, Any]:
        import numpy as np

        return round(delay_s * self.rate), np.outer(filtered, harmonics(ahead, -right, up, self.order))

    def tail(self, tails: Any) -> Any:
        import numpy as np
        from scipy.signal import fftconvolve

        rng = np.random.default_rng(7)
        out = np.zeros((tails.shape[1] + ALLPASS_TAPS - 1, self.channels))
        out[:tails.shape[1], 0] = tails.mean(axis=0) * math.sqrt(2)  # two decorrelated ears: W at one's power
        for channel in range(1, self.channels):
            n = math.isqrt(channel)
            phase = np.exp(2j * np.pi * rng.random(ALLPASS_TAPS // 2 + 1))
            phase[0] = phase[-1] = 1.0
            allpass = np.fft.irfft(phase, ALLPASS_TAPS)
            out[:, channel] = fftconvolve(tails[channel % 2], allpass) / math.sqrt(2 * n + 1)
        return out


def harmonics(x: float, y: float, z: float, order: int) -> Any:
    """The real spherical harmonics, SN3D, in ACN order, to *order* (1 to 3) of the direction (*x* ahead, *y* to
    the left, *z* up)."""
    import numpy as np

    norm = math.sqrt(x * x + y * y + z * z) or 1.0
    x, y, z = x / norm, y / norm, z / norm
    r3, r15 = math.sqrt(3), math.sqrt(15)
    values = [1.0, y, z, x,
              r3 * x * y, r3 * y * z, (3 * z * z - 1) / 2, r3 * x * z, r3 / 2 * (x * x - y * y),
              math.sqrt(5 / 8) * y * (3 * x * x - y * y), r15 * x * y * z, math.sqrt(3 / 8) * y * (5 * z * z - 1),
              z * (5 * z * z - 3) / 2, math.sqrt(3 / 8) * x * (5 * z * z - 1), r15 / 2 * z * (x * x - y * y),
              math.sqrt(5 / 8) * x * (x * x - 3 * y * y)]
    return np.array(values[:(order + 1) ** 2])


def scene(physics: Physics, rate: int, hrtf: Hrtf | None = None, order: int = 0) -> Head | Ambisonic:
    """The ears (through *hrtf*, or the spherical head), or AmbiX of *order* where it is 1 to 3."""
    return Ambisonic(order, rate) if order else Head(physics, rate, hrtf)


def _placed(parts: list[tuple[int, Any]]) -> Any:
    """Arrivals (sample, taps × channels) summed into one response from sample 0."""
    import numpy as np

    length = max(at + len(r) for at, r in parts)
    out = np.zeros((length, parts[0][1].shape[1]))
    for at, r in parts:
        out[at:at + len(r)] += r
    return out


def direct(place: Place, who: Listener, physics: Physics, rate: int, hrtf: Hrtf | None = None,
           order: int = 0) -> Any:
    """The direct sound of *place* at each ear of *who* (samples × 2, from the moment of emission): delayed by
    the path, scaled by the distance, filtered by ISO 9613-1 air absorption over it (minimum phase); then the head
    (``Head``)."""
    heard = hear(place, who, physics)
    filtered = minimum_phase(air_gain(heard.distance_m, physics, rate)) * heard.gain
    return _placed([scene(physics, rate, hrtf, order).arrival(*bearing(place, who, physics), heard.delay_s,
                                                              filtered)])


def ears_of(who: Listener, physics: Physics) -> Any:
    """The listener's ears (left, right) in plan metres."""
    import numpy as np

    head = np.array(position_m(who.x, who.y, physics, source=False))
    fx, fy = who.facing
    right = np.array([-fy, fx, 0.0]) * physics.head_radius_m
    return head, np.stack([head - right, head + right])


def reflections(place: Place, who: Listener, physics: Physics, rate: int, room: Room,
                hrtf: Hrtf | None = None, order: int = 0) -> Any:
    """What *who* hears of *place* after the direct sound, in *room* (``room.simulate``): each image source of
    orders 1 to 3 through the head for its own direction (its walls' octave-band absorption and the air's over its
    path as one minimum-phase filter), then each ear's ray-traced tail (decorrelated between the ears); all
    high-passed (``HIGH_PASS_HZ``), so that no DC is added; scaled as ``placement.hear`` scales the direct sound."""
    import numpy as np
    from scipy.signal import butter, sosfilt

    source = position_m(place.x, place.y, physics, source=True)
    head, ears = ears_of(who, physics)
    found = simulate(room, source, ears, physics, rate)
    fx, fy = who.facing
    heads = scene(physics, rate, hrtf, order)
    arrivals = []
    for k in range(found.images.shape[1]):
        dx, dy, dz = found.images[:, k] - head
        distance = math.sqrt(dx * dx + dy * dy + dz * dz)
        spectrum = band_gain(found.amplitudes[:, k], rate) * air_gain(distance, physics, rate)
        filtered = minimum_phase(spectrum) * physics.reference_m / max(distance, physics.nearest_m)
        arrivals.append(heads.arrival(dx * fx + dy * fy, -dx * fy + dy * fx, dz, distance / physics.speed_m_s,
                                      filtered))
    arrivals.append((0, heads.tail(found.tails) * physics.reference_m))
    both = _placed(arrivals)
    both = np.concatenate([both, np.zeros((round(0.1 * rate), heads.channels))])  # room for the high-pass to ring out
    both = sosfilt(butter(2, HIGH_PASS_HZ, "highpass", fs=rate, output="sos"), both, axis=0)
    audible = np.nonzero(np.abs(both).max(axis=1) > AUDIBLE)[0]
    return _without_dc(both[:audible[-1] + 1]) if len(audible) else both[:1] * 0


def _without_dc(response: Any) -> Any:
    """*response* less what its cut end left of DC (its sum), taken out smoothly over its last tenth."""
    import numpy as np

    span = max(2, len(response) // 10)
    window = np.hanning(span + 2)[1:-1]
    out = response.copy()
    out[-span:] -= np.outer(window / window.sum(), response.sum(axis=0))
    return out


def heard_as(places: tuple[Place, ...], physics: Physics) -> tuple[tuple[Place, float], ...]:
    """The sources a stop's *places* are heard as, each with its share of amplitude: players of one part who all
    sit within ``GROUP_M`` of their middle (two 瑟, three 笙, the 歌) as one source there, at full level (the
    text groups them: 工四人二瑟, 笙三人 — one part, one line, played together); players farther apart (the
    鐘 of the east and the west 縣) each from his own place at 1/√n of the power."""
    if len(places) > 1:
        mx, my = sum(p.x for p in places) / len(places), sum(p.y for p in places) / len(places)
        spread = max(math.hypot(p.x - mx, p.y - my) for p in places) * physics.bu_m
        if spread <= GROUP_M and all((p.y < 0) == (my < 0) for p in places):
            return ((Place(mx, my, "+".join(p.name for p in places)), 1.0),)
    return tuple((p, 1 / math.sqrt(len(places))) for p in places)


Cache = dict[tuple[str, Place, Listener], Any]


def _summed(heard: list[tuple[Any, float]]) -> Any:
    """Responses (samples × channels, from sample 0) summed, each times its weight."""
    import numpy as np

    out = np.zeros((max(len(h) for h, _ in heard), heard[0][0].shape[1]))
    for h, weight in heard:
        out[:len(h)] += h * weight
    return out


def near(stop: Stop, who: Listener, physics: Physics, rate: int, hrtf: Hrtf | None = None, order: int = 0,
         cache: Cache | None = None) -> Any:
    """The direct sound of each source of *stop* (``heard_as``) at *who*, summed (kept in *cache* if given)."""
    heard = []
    for place, share in heard_as(stop.places, physics):
        if cache is None or ("near", place, who) not in cache:
            found = direct(place, who, physics, rate, hrtf, order)
            if cache is None:
                heard.append((found, share))
                continue
            cache["near", place, who] = found
        heard.append((cache["near", place, who], share))
    return _summed(heard)


def far(stop: Stop, who: Listener, physics: Physics, rate: int, cache: Cache, room: Room,
        hrtf: Hrtf | None = None, order: int = 0) -> Any:
    """The reflections and tail of each source of *stop* at *who* in *room*, summed; each pair simulated once."""
    heard = []
    for place, share in heard_as(stop.places, physics):
        if ("far", place, who) not in cache:
            cache["far", place, who] = reflections(place, who, physics, rate, room, hrtf, order)
        heard.append((cache["far", place, who], share))
    return _summed(heard)


def response(stop: Stop, who: Listener, physics: Physics, rate: int, cache: Cache, room: Room,
             hrtf: Hrtf | None = None, order: int = 0) -> Any:
    """All that *who* hears of a sound made at *stop* (samples × 2, from its emission): each source's direct
    sound and reflections (``heard_as``)."""
    return _summed([(near(stop, who, physics, rate, hrtf, order, cache), 1.0),
                    (far(stop, who, physics, rate, cache, room, hrtf, order), 1.0)])


@dataclass(frozen=True, slots=True)
class Segment:
    """From file sample *start* (gliding in over *fade* samples) the part is heard as the direct sound of *stop*
    at *who* and the room of the stands around them: *room*, weighted pairs of a stop and a listener that are
    not passing points of a walk (so simulated once each)."""

    start: int
    fade: int
    stop: Stop
    who: Listener
    room: tuple[tuple[float, Stop, Listener], ...]


class Voice:
    """One part heard from the seat: its segments (``changes_of``), each one response from the file's sample
    where it begins, made when the part first sounds in it and let go once it is past.

    A block of the part's sound is heard through the segment it is made in; across a change the sound made fades
    from the old response to the new (linearly: the responses of neighbouring points are coherent), over
    ``FADE`` seconds where the part moves, over a quarter second between the points of a walk (of the players or
    the listener), and what was made before rings on from the old."""

    def __init__(self, stops: tuple[Stop, ...], who: Listener, physics: Physics, rate: int, cache: Cache,
                 room: Room, hrtf: Hrtf | None = None, order: int = 0) -> None:
        self.segments = changes_of(stops, who, rate)
        self.starts = [s.start for s in self.segments]
        self.fades = [s.fade for s in self.segments]
        self.physics, self.rate, self.cache, self.room, self.hrtf, self.order = physics, rate, cache, room, hrtf, order
        self.responses: dict[int, Any] = {}
        self.spectra: dict[tuple[int, int], Any] = {}
        rooms = {(s, w) for seg in self.segments for _, s, w in seg.room}
        longest = [len(far(s, w, physics, rate, cache, room, hrtf, order)) for s, w in rooms]
        reach = math.hypot(*room.size) / physics.speed_m_s  # the farthest direct sound, from any point of the room
        self.length = max(longest + [round(reach * rate) + 2 * FILTER_TAPS + (hrtf.responses.shape[-1] if hrtf else 0)])
        self.channels = (order + 1) ** 2 if order else CHANNELS

    def response(self, k: int) -> Any:
        """Segment *k*'s response (samples × channels, from the emission), made if it is not held."""
        if k not in self.responses:
            self.responses[k] = self._made(k)
        return self.responses[k]

    def _made(self, k: int) -> Any:
        seg = self.segments[k]
        heard = [(near(seg.stop, seg.who, self.physics, self.rate, self.hrtf, self.order,
                       None if seg.stop.passing or len(seg.room) > 1 else self.cache), 1.0)]
        heard += [(far(s, w, self.physics, self.rate, self.cache, self.room, self.hrtf, self.order), weight)
                  for weight, s, w in seg.room]
        return _summed(heard)

    def add(self, mono: Any, at: int, size: int, into: Any) -> None:
        """Add to *into* (a spectrum, size // 2 + 1 × channels) the sound of *mono*, made from sample *at* on, as
        heard; the segments past before *at* are let go."""
        import numpy as np
        from scipy.fft import rfft

        n = len(mono)
        first = max(0, bisect.bisect_right(self.starts, at) - 1)
        while first > 0 and self.starts[first] + self.fades[first] > at:  # the one before still fades out
            first -= 1
        for k in [k for k in self.responses if k < first]:
            del self.responses[k]
        for key in [key for key in self.spectra if key[0] < first]:
            del self.spectra[key]
        plain = None
        for k in range(first, bisect.bisect_left(self.starts, at + n)):
            start = self.starts[k]
            end = self.starts[k + 1] if k + 1 < len(self.starts) else None
            out = self.fades[k + 1] if end is not None else 0
            if end is not None and end + out <= at:
                continue
            if (k == 0 or start + self.fades[k] <= at) and (end is None or at + n <= end):
                if plain is None:
                    plain = rfft(mono, size)
                heard = plain
            else:
                t = np.arange(at, at + n)
                weight = np.ones(n, dtype=np.float32) if k == 0 else np.clip((t - start) / self.fades[k], 0.0, 1.0)
                if end is not None:
                    weight -= np.clip((t - end) / out, 0.0, 1.0)
                heard = rfft((mono * weight).astype(np.float32), size)
            spectrum = self._spectrum(k, size)
            for channel in range(spectrum.shape[1]):
                into[:, channel] += heard * spectrum[:, channel]

    def _spectrum(self, k: int, size: int) -> Any:
        import numpy as np
        from scipy.fft import rfft

        if (k, size) not in self.spectra:
            self.spectra[k, size] = rfft(self.response(k)[:self.length].astype(np.float32), size, axis=0)
        return self.spectra[k, size]


class _Mix:
    """The parts' sound summed block by block by FFT convolution (overlap-add), each part's response as a
    spectrum computed once per stop; a block where no part sounds costs nothing but its reflections' tails."""

    def __init__(self, voices: Mapping[str, Voice]) -> None:
        import numpy as np
        from scipy.fft import next_fast_len

        self.size = next_fast_len(BLOCK + max([v.length for v in voices.values()] + [1]) - 1, real=True)
        self.channels = next(iter(voices.values())).channels if voices else CHANNELS
        self.carry = np.zeros((self.size, self.channels))

    def block(self, heard: list[tuple[Voice, Any]], at: int, n: int) -> Any:
        """The next *n* samples of the mix: each (voice, mono) of *heard* sounds from sample *at* on."""
        import numpy as np
        from scipy.fft import irfft

        if heard:
            spectrum = np.zeros((self.size // 2 + 1, self.channels), dtype=np.complex64)
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


def changes_of(stops: tuple[Stop, ...], who: Listener, rate: int) -> list[Segment]:
    """Where a part's sound changes (``Segment``): at each stop of the part (gliding in over its ``glide_ticks``,
    else a ``FADE``) and at each point of a walk of a listener who follows a person (over a step; a walk without
    points, over the whole walk), each glide no longer than the segment before it. Between the stands, at the
    points of a walk, the direct sound is the point's and the room the stands' on either side, weighted by how
    far the walk has gone (players' and listener's alike)."""
    changes: dict[int, int] = {}
    for stop in stops:
        changes[stop.start_tick] = max(changes.get(stop.start_tick, 0),
                                       stop.glide_ticks or round(FADE * TICKS_PER_SECOND))
    for walk in who.path:
        if not walk.between:
            changes[walk.start_tick] = max(changes.get(walk.start_tick, 0), walk.end_tick - walk.start_tick)
        for tick, _ in walk.between:
            changes[tick] = max(changes.get(tick, 0), STEP_TICKS)
        if walk.between:
            arrived = max(walk.end_tick, walk.between[-1][0] + STEP_TICKS)
            changes[arrived] = max(changes.get(arrived, 0), STEP_TICKS)
    out: list[Segment] = []
    for tick in sorted(changes):
        stop, heard = stop_at(stops, tick), who.hearing(tick)
        if out and (out[-1].stop, out[-1].who) == (stop, heard):
            continue
        start = tick * rate // TICKS_PER_SECOND
        fade = max(1, changes[tick] * rate // TICKS_PER_SECOND)
        if out:
            fade = max(1, min(fade, start - out[-1].start))
        room = tuple((a * b, s, w) for a, s in _stands(stops, stop, tick) for b, w in _seats(who, tick) if a * b)
        out.append(Segment(start, fade, stop, heard, room))
    return out


def _stands(stops: tuple[Stop, ...], stop: Stop, tick: int) -> list[tuple[float, Stop]]:
    """The stops that are not passing points around *stop* at *tick*, with their weights: itself, or, on a walk,
    the stop before the walk and the one it ends at, by the share of the walk gone."""
    if not stop.passing:
        return [(1.0, stop)]
    k = stops.index(stop)
    first = k
    while first > 0 and stops[first - 1].passing:
        first -= 1
    last = k
    while last + 1 < len(stops) and stops[last].passing:
        last += 1
    before, after = stops[first - 1] if first else stops[last], stops[last]
    share = (tick - stops[first].start_tick) / max(1, after.start_tick - stops[first].start_tick)
    return [(1.0 - share, before), (share, after)]


def _seats(who: Listener, tick: int) -> list[tuple[float, Listener]]:
    """Where *who* stands around *tick*, with weights: where he is, or, on a walk with its points, where he stood
    before it and where it ends, by the share of the walk gone."""
    for walk in reversed(who.path):
        if walk.start_tick <= tick:
            arrived = walk.between[-1][0] + STEP_TICKS if walk.between else walk.start_tick
            if tick < arrived:
                share = (tick - walk.start_tick) / max(1, arrived - walk.start_tick)
                return [(1.0 - share, who.at(walk.start_tick - 1)), (share, walk.to)]
            break
    return [(1.0, who.at(tick))]


def _first_stop(stops: tuple[Stop, ...]) -> tuple[Stop, ...]:
    """*stops* with the first moved to tick 0, so a part always has a placement."""
    return (dataclasses.replace(stops[0], start_tick=0), *stops[1:]) if stops and stops[0].start_tick else stops


def placed_room(physics: Physics, rite: StagedRite | None, stops: Mapping[str, tuple[Stop, ...]],
                who: Listener) -> Room:
    """The one room every part of *stops* is heard in from *who* (``room.room_of``), checked against the bounds of
    time and memory (``room.check_bounds``) before anything is simulated."""
    sources = {source for part in stops.values() for stop in part if not stop.passing
               for source, _ in heard_as(stop.places, physics)}
    points = [position_m(p.x, p.y, physics, source=True) for p in sources]
    points += [position_m(w.x, w.y, physics, source=False) for w in (who, *(walk.to for walk in who.path))]
    room = room_of(physics, rite.hall if rite is not None else None, points)
    check_bounds(room, len(sources))
    return room


def room_figures(timeline: Timeline, rite: StagedRite | None, who: Listener, physics: Physics | None = None,
                 parts: frozenset[str] = frozenset(), rate: int = 44100) -> list[str]:
    """Each source of the placed parts (or *parts*) as *who* hears it in the room: distance, T30 and EDT of its
    whole response (both ears, Schroeder), and the direct-to-reverberant ratio (the direct sound's energy over the
    reflections' and tail's)."""
    import numpy as np

    physics = with_hall(physics or Physics(), rite)
    stops = {p: s for p, s in blocking(timeline, rite).stops.items() if not parts or p in parts}
    room = placed_room(physics, rite, stops, who)
    lines, seen = [], set()
    for part, part_stops in stops.items():
        for stop in part_stops:
            for place, _ in heard_as(stop.places, physics) if not stop.passing else ():
                if place in seen:
                    continue
                seen.add(place)
                near, far = direct(place, who, physics, rate), reflections(place, who, physics, rate, room)
                whole = np.zeros((max(len(near), len(far)), CHANNELS))
                whole[:len(near)] += near
                whole[:len(far)] += far
                t30, edt = decay_figures(whole.mean(axis=1), rate)
                drr = 10 * math.log10(float(np.sum(near ** 2)) / max(float(np.sum(far ** 2)), 1e-30))
                lines.append(f"{part} {place.name} ({place.x:g}, {place.y:g}) "
                             f"{hear(place, who, physics).distance_m:.1f} m: T30 {t30:.2f} s, EDT {edt:.2f} s, "
                             f"DRR {drr:+.1f} dB")
    return lines


def render_placed(timeline: Timeline, rite: StagedRite | None, path: str | Path, who: Listener, *,
                  physics: Physics | None = None,
                  parts: frozenset[str] = frozenset(), soundfont: str | Path | None = None,
                  hrtf: Hrtf | None = None, progress: Callable[[float], None] | None = None,
                  order: int = 0, tags: Tags | None = None) -> Rendered:
    """Render *timeline* (its *parts*, or all; placed by the staged *rite* where there is one, else by the cue
    sheet's places) to *path* in stereo as heard by *who* (binaurally through *hrtf*, if given), or in AmbiX of
    *order* 1 to 3 (a WAV file of (order + 1)² channels, ACN and SN3D, for head-tracked playback), atomically; the
    same length as ``audio.render``. Each part is condensed on its own (FluidSynth renders only where it
    sounds)."""
    import contextlib
    import tempfile

    import soundfile

    from yuesheng.outputs.midi import write_midi

    physics = with_hall(physics or Physics(), rite)
    command = find_fluidsynth()
    font = find_soundfont(soundfont)
    target, condensed = plan(timeline, path)
    channels = (order + 1) ** 2 if order else CHANNELS
    if order and (order not in AMBISONIC_ORDERS or target.container not in ("WAV", "RF64")):
        raise AudioError(f"Ambisonics of order {order} to {path}: expected order 1, 2 or 3 and a .wav file")
    check_space(dataclasses.replace(target, size_bytes=target.size_bytes * channels // CHANNELS))
    rate = target.sample_rate
    names = [p for p in sounding_parts(condensed) if not parts or p in parts]
    stops = blocking(timeline, rite).stops
    unplaced = [p for p in names if p not in stops]
    if unplaced:
        placed = "".join(f" --part {p}" for p in names if p in stops)
        raise AudioError(f"{timeline.rite}: no place on the plan for {' '.join(unplaced)}: "
                         "a placed render needs x, y for their positions (docs/cuesheet.md)"
                         + (f"; to hear the placed parts alone:{placed}" if placed else ""))
    room = placed_room(physics, rite, stops, who)  # every placed part's: one room, whichever are rendered
    cache: Cache = {}
    hrtf = hrtf.at_rate(rate) if hrtf else None
    voices = {p: Voice(_first_stop(stops[p]), who, physics, rate, cache, room, hrtf, order) for p in names}
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
            with soundfile.SoundFile(out, "w", rate, channels, target.encoding.subtype, format=target.container) \
                    as audio:
                set_tags(audio, tags)
                _write(audio, feeds, voices, target.frames, rate, progress, channels)
        except (soundfile.SoundFileError, OSError) as exc:
            raise OutputError(f"cannot write {path}: {_why(exc, Path(path))}") from None
        for feed in feeds.values():
            feed.close()
            feed.synth.finish(extra_frames=10 * rate)
    if progress:
        progress(1.0)
    return Rendered(str(path), target.frames, rate, target.container, str(font))


def _write(audio: Any, feeds: Mapping[str, _Feed], voices: Mapping[str, Voice], frames: int, rate: int,
           progress: Callable[[float], None] | None, channels: int = CHANNELS) -> None:
    """The parts placed and summed, block by block, for the whole length of the file, through the limiter."""
    mix = _Mix(voices)
    limiter = Limiter(rate, channels)
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

    def __init__(self, rate: int, channels: int = CHANNELS) -> None:
        import numpy as np

        self.channels = channels
        self.window = max(2, round(LIMIT_WINDOW * rate))
        self.held: Any = None
        self.before = np.ones(self.window - 1)  # the gain needed just before the held block

    def push(self, block: Any) -> Any:
        """The held block, limited, now that *block* (None at the end) follows it; the first call gives none."""
        import numpy as np

        held, self.held = self.held, block
        if held is None:
            return np.zeros((0, self.channels))
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
