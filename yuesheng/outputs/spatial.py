"""Placed audio: the rite heard from a seat. The only module that imports pyroomacoustics and scipy.

Each sounding part is rendered alone by FluidSynth (dry: no synthesizer reverb), all on the same condensed clock
as a plain render (``audio.plan``), one process per part, read chunk by chunk. Each part's mono signal is then
placed at every place its ``placement.Stop`` gives, and the places summed into two ears:

- **direct sound**: delayed by the distance over the speed of sound, plus the far ear's interaural time
  difference (Woodworth); scaled by the distance (1/r); low-passed where ISO 9613-1 air absorption over the path
  reaches 3 dB (one pole); shaped per ear by Brown and Duda's head-shadow filter (one pole, one zero), which gives
  the interaural level difference, rising with frequency;
- **reflections**: the image-source response of pyroomacoustics less its direct path, at two points a head's
  width apart (so they reach the ears at different times, without the head's shadow) —
  the 堂 as a box open to the south (walls, floor and roof of the hall) when the part and the listener are both
  on it, else the ground of the 庭 (first order).

A part that moves (遷樂) crossfades from its old placement to its new one over ``FADE`` seconds at the change.
The file has the same length, format and silences as a plain render; only its sound differs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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
from yuesheng.outputs.condense import mapping
from yuesheng.outputs.placement import Listener, Physics, Place, Stop, blocking, hear, position_m
from yuesheng.timeline import TICKS_PER_SECOND, Timeline

FADE = 0.05  # seconds of crossfade when a part moves
HALL_ORDER = 6  # image-source order inside the 堂
# Energy absorption of the 堂's surfaces (assumptions; docs/seat.md): a south face open to the 庭, rammed-earth
# and plaster walls (序, and the wall of the 房 and 室 behind), a timber floor laid with mats, a timber and tile roof.
HALL_ABSORPTION = {"south": 1.0, "north": 0.1, "east": 0.1, "west": 0.1, "floor": 0.3, "ceiling": 0.25}
HALL_HEIGHT_M = 3.5  # from the 堂's floor to the roof over it (assumption)
GROUND_ABSORPTION = 0.2  # the beaten earth of the 庭 (assumption)
HEAD_ALPHA_MIN, HEAD_THETA_MIN = 0.1, math.radians(150)  # Brown and Duda (1998), the spherical head's shadow


@dataclass
class _Path:
    """One place of a part as heard: per ear its delay (samples), gain and filter, and the reflections."""

    delays: tuple[int, int]
    gain: float
    filters: tuple[tuple[Any, Any], tuple[Any, Any]]  # (b, a) per ear
    reflections: Any  # an impulse response per ear (samples × 2), from the moment of emission


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
        lo = np.array([-4 * physics.bu_m, 0.0, 0.0])
        size = np.array([8 * physics.bu_m, 4 * physics.bu_m, HALL_HEIGHT_M])
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


def paths(stop: Stop, who: Listener, physics: Physics, rate: int,
          cache: dict[tuple[Place, Listener], Any] | None = None) -> list[_Path]:
    """Every place of *stop* as *who* hears it, each at 1/√n of the power."""
    import numpy as np

    out = []
    share = 1 / math.sqrt(len(stop.places))
    for place in stop.places:
        heard = hear(place, who, physics)
        right = abs(heard.azimuth - math.pi / 2)
        left = abs(heard.azimuth + math.pi / 2)
        right, left = (min(a, 2 * math.pi - a) for a in (right, left))
        late_right = heard.itd_s if heard.azimuth < 0 else 0.0  # the ear away from the source hears it later
        late_left = heard.itd_s if heard.azimuth > 0 else 0.0
        air_b, air_a = _air(heard.cutoff_hz, rate)
        filters = []
        for angle in (left, right):
            b, a = head_shadow(angle, physics, rate)
            filters.append((np.convolve(b, air_b), np.convolve(a, air_a)))
        if cache is not None and (place, who) in cache:
            echoes = cache[place, who]
        else:
            echoes = reflections(place, who, physics, rate)
            if cache is not None:
                cache[place, who] = echoes
        out.append(_Path((round((heard.delay_s + late_left) * rate), round((heard.delay_s + late_right) * rate)),
                         heard.gain * share, (filters[0], filters[1]), echoes * share))
    return out


class Voice:
    """One part heard from the seat, fed chunk by chunk (mono), giving stereo chunks; keeps its delay line, filter
    states and reflection tails from chunk to chunk."""

    def __init__(self, stops: tuple[Stop, ...], who: Listener, physics: Physics, rate: int,
                 cache: dict[tuple[Place, Listener], Any] | None = None) -> None:
        import numpy as np

        self.rate = rate
        self.changes = [(stop.start_tick * rate // TICKS_PER_SECOND, paths(stop, who, physics, rate, cache))
                        for stop in stops]
        longest = max(max(max(p.delays) for p in ps) for _, ps in self.changes)
        self.history = np.zeros(longest + 1)
        self.tail = np.zeros((0, CHANNELS))
        self.current: list[_Path] = []
        self.states: list[list[Any]] = []
        self.next = 0
        self.fade = max(1, round(FADE * rate))

    def _state(self, chain: list[_Path]) -> list[list[Any]]:
        import numpy as np

        return [[np.zeros(len(p.filters[ear][1]) - 1) for ear in (0, 1)] for p in chain]

    def process(self, chunk: Any, at: int) -> Any:
        """The stereo sound of the mono *chunk*, which starts at sample *at* of the render."""
        import numpy as np
        from scipy.signal import lfilter, oaconvolve

        n = len(chunk)
        extended = np.concatenate([self.history, chunk])
        base = len(self.history)
        out = np.zeros((n, CHANNELS))
        pending = []
        while self.next < len(self.changes) and self.changes[self.next][0] < at + n:
            pending.append((max(0, self.changes[self.next][0] - at), self.changes[self.next][1]))
            self.next += 1
        cuts = [0] + [offset for offset, _ in pending] + [n]
        echoes = np.zeros((n + max([len(self.tail)] + [len(p.reflections) for _, ps in self.changes for p in ps]),
                           CHANNELS))
        echoes[:len(self.tail)] += self.tail
        for number, (start, end) in enumerate(zip(cuts[:-1], cuts[1:], strict=True)):
            if number:  # a change: the old placement fades out while the new one fades in
                old, old_states = self.current, self.states
                self.current = pending[number - 1][1]
                self.states = self._state(self.current)
                span = min(self.fade, n - start)
                ramp = np.linspace(0.0, 1.0, span, endpoint=False)
                faded = np.zeros((span, CHANNELS))
                self._direct(old, old_states, extended, base, start, start + span, faded, lfilter)
                out[start:start + span] += faded * (1 - ramp)[:, None]
            if end > start:
                self._direct(self.current, self.states, extended, base, start, end, out[start:end], lfilter,
                             ramp_in=self.fade if number else 0)
                for p in self.current:
                    if len(p.reflections) and np.any(chunk[start:end]):
                        r = oaconvolve(chunk[start:end, None], p.reflections, axes=0)
                        echoes[start:start + len(r)] += r
        out += echoes[:n]
        self.tail = echoes[n:].copy()
        self.history = extended[-len(self.history):]
        return out

    @staticmethod
    def _direct(chain: list[_Path], states: list[list[Any]], extended: Any, base: int, start: int, end: int,
                into: Any, lfilter: Callable[..., Any], ramp_in: int = 0) -> None:
        import numpy as np

        for p, state in zip(chain, states, strict=True):
            for ear in (0, 1):
                d = p.delays[ear]
                b, a = p.filters[ear]
                y, state[ear] = lfilter(b, a, extended[base + start - d:base + end - d], zi=state[ear])
                if ramp_in:
                    span = min(ramp_in, len(y))
                    y[:span] *= np.linspace(0.0, 1.0, span, endpoint=False)
                into[:, ear] += p.gain * y


def _first_stop(stops: tuple[Stop, ...]) -> tuple[Stop, ...]:
    """*stops* with the first moved to tick 0, so a part always has a placement."""
    return (Stop(0, stops[0].places), *stops[1:]) if stops and stops[0].start_tick else stops


def render_placed(timeline: Timeline, path: str | Path, who: Listener, *, physics: Physics | None = None,
                  parts: frozenset[str] = frozenset(), soundfont: str | Path | None = None,
                  progress: Callable[[float], None] | None = None) -> Rendered:
    """Render *timeline* (its *parts*, or all) to *path* in stereo as heard by *who*, atomically; the same length
    and format as ``audio.render``."""
    import contextlib

    import soundfile

    from yuesheng.outputs.midi import write_midi

    physics = physics or Physics()
    command = find_fluidsynth()
    font = find_soundfont(soundfont)
    target, condensed = plan(timeline, path)
    check_space(target)
    rate = target.sample_rate
    names = [p for p in sounding_parts(condensed) if not parts or p in parts]
    squeezed = mapping(target.cuts)  # the blocking of the rite, on FluidSynth's condensed clock
    stops = {part: tuple(Stop(squeezed(s.start_tick), s.places) for s in run)
             for part, run in blocking(timeline).stops.items()}
    unplaced = [p for p in names if p not in stops]
    if unplaced:
        raise AudioError(f"{timeline.rite}: no place on the plan for {' '.join(unplaced)}: "
                         "a placed render needs x, y for their positions (docs/cuesheet.md)")
    import tempfile

    cache: dict[tuple[Place, Listener], Any] = {}
    voices = {p: Voice(_first_stop(stops[p]), who, physics, rate, cache) for p in names}
    with tempfile.TemporaryDirectory(prefix="yuesheng-") as tmp, atomic_path(path) as out, \
            contextlib.ExitStack() as stack:
        synths: dict[str, FluidSynth] = {}
        for name in names:
            mid = Path(tmp) / f"part{PARTS[name].channel}-{len(synths)}.mid"
            try:
                write_midi(only_parts(condensed, frozenset([name])), mid)
            except OutputError as exc:
                raise OutputError(f"cannot write the MIDI file FluidSynth reads, in {tmp}: {exc}") from None
            arguments = fluidsynth_arguments(command, font, mid, rate, effects=False)
            synths[name] = stack.enter_context(FluidSynth(arguments, 60 + target.sound_frames / rate / 5))
        try:
            with soundfile.SoundFile(out, "w", rate, CHANNELS, target.encoding.subtype, format=target.container) \
                    as audio:
                _write(audio, synths, voices, target, progress)
        except (soundfile.SoundFileError, OSError) as exc:
            raise OutputError(f"cannot write {path}: {_why(exc, Path(path))}") from None
        for synth in synths.values():
            synth.finish(extra_frames=10 * rate)
    if progress:
        progress(1.0)
    return Rendered(str(path), target.frames, rate, target.container, str(font))


def _write(audio: Any, synths: Mapping[str, FluidSynth], voices: Mapping[str, Voice], target: Any,
           progress: Callable[[float], None] | None) -> None:
    """Each part's samples placed and summed where the rite sounds, zeros where silence was cut."""
    import numpy as np

    zeros = np.zeros((CHUNK, CHANNELS), dtype=np.int16)
    done = played = 0
    for sound, frames in segments(target.cuts, target.sample_rate, target.frames):
        while frames:
            count = min(CHUNK, frames)
            if sound:
                mix = np.zeros((count, CHANNELS))
                for name, synth in synths.items():
                    mono = synth.read(count).astype(np.float64).mean(axis=1)
                    mix += voices[name].process(mono, played)
                played += count
                audio.write(np.clip(mix, -1.0, 1.0))
            else:
                audio.write(zeros[:count])
            frames -= count
            done += count
            if progress:
                progress(done / target.frames)
