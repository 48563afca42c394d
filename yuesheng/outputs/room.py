"""The hall and its court as one room, for every source and listener: pyroomacoustics' hybrid simulator (image
sources to order ``ISM_ORDER``, ray tracing for the rest), octave-band materials, ISO 9613-1 air absorption.
The only module that imports pyroomacoustics.

The room (``room_of``) is a box: east and west the court's walls, south the court's wall with its gate, north the
wall of the 室 and 房 behind the 堂 (the 户牖 wall, at the 堂's drawn depth) or, in a hall without a 室, the back
wall of the 序; its floor the packed ground of the court and the 堂's timber, its top the 堂's roof and the open
sky, each surface's absorption the area-weighted mean of what it is made of. Every material is an assumption, named
in ``MATERIALS`` and docs/seat.md. The room is bounded (``check_bounds``) before pyroomacoustics is called: a hall
whose box would take minutes or gigabytes is refused with its size.

``simulate`` gives, for one source and the two ears, what the head then hears (``spatial``): the image sources of
orders 1 to ``ISM_ORDER`` (where each lies, and its octave-band amplitude after the walls) and the ray-traced diffuse
tail at each ear (two runs of pyroomacoustics' random sequence: decorrelated). Results are kept on disk per hall,
place and listener (``caches``: numpy's own array format, never pickle). pyroomacoustics draws at random (the
scattered rays in its C++ tracer, the tail's sequence in numpy); both its generators are seeded from the room and
the pair alone (not the code's digest in the cache key) before each simulation, and the tails are rounded to the
cache's float32 when made, so the same room, source and ears give the same response, byte for byte, in any run,
simulated or read back.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yuesheng.errors import AudioError
from yuesheng.outputs.placement import HALL_HEIGHT_M, Physics, absorption_db_per_m

if TYPE_CHECKING:
    from yuesheng.staging.model import Hall

BANDS = (125.0, 250.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0)  # octave bands' centre frequencies, Hz
ISM_ORDER = 3  # image sources to this order (each through the head for its direction); ray tracing after
RAYS = 10_000  # rays per source: the tail's histogram is noisy below this, and the cost is linear in it
RECEIVER_M = 1.0  # the ray tracer's receiver radius: a larger one catches more rays (a steadier tail)
TAIL_SECONDS = 2.5  # rays are followed this long at most (a T60 of 2.5 s is past any open hall)
HISTOGRAM_BIN = 0.004  # seconds: pyroomacoustics' default
MAX_SIDE_M = 300.0  # the longest side the room may have: 大射's court is 148 m; past it, see check_bounds
MAX_VOLUME_M3 = 250_000.0  # 大射's box is 29,000 m³
MAX_PAIRS = 400  # source places × listeners simulated in one render
CACHE = "rooms"
CACHE_ENTRIES = 2000
CACHE_LIMIT = 64 << 20  # bytes an entry may have (two tails of 2.5 s at 48 kHz as float32 take 1 MB)


@dataclass(frozen=True, slots=True)
class Material:
    """A surface's energy absorption in the octave bands of ``BANDS``, the share of energy it scatters, and the
    assumption they rest on."""

    name: str
    absorption: tuple[float, ...]
    scattering: float
    assumption: str


MATERIALS = {
    "timber": Material("timber floor laid with mats", (0.15, 0.11, 0.10, 0.07, 0.06, 0.07, 0.07), 0.1,
                       "a wooden floor on joists (tables of wood platforms), the mats (席) taken as thin"),
    "roof": Material("timber and tile roof", (0.15, 0.12, 0.10, 0.08, 0.08, 0.08, 0.08), 0.3,
                     "an open rafter roof of timber under tiles, seen from below"),
    "earth": Material("rammed earth, plastered", (0.03, 0.03, 0.03, 0.04, 0.05, 0.07, 0.07), 0.2,
                      "rammed-earth walls with a lime or clay plaster, as unglazed brick"),
    "ground": Material("packed ground", (0.15, 0.25, 0.40, 0.55, 0.60, 0.60, 0.60), 0.3,
                       "the beaten earth of the court, as rough compacted soil"),
    "sky": Material("open sky", (1.0,) * 7, 0.0, "nothing comes back from above the court"),
    "open": Material("open", (1.0,) * 7, 0.0, "a side the plan draws no wall on"),
}


@dataclass(frozen=True, slots=True)
class Room:
    """A box in plan metres (x east, y south, z up from the court's ground) and each face's absorption per band."""

    name: str
    west: float
    north: float
    east: float
    south: float
    height: float
    faces: Mapping[str, tuple[float, ...]]  # north south east west floor ceiling: absorption per band
    scattering: Mapping[str, float]

    @property
    def size(self) -> tuple[float, float, float]:
        return self.east - self.west, self.south - self.north, self.height

    def digest(self) -> str:
        """What the room is, for the cache's key."""
        data = [self.west, self.north, self.east, self.south, self.height, sorted(self.faces.items()),
                sorted(self.scattering.items())]
        return hashlib.sha256(json.dumps(data).encode()).hexdigest()

    def inside(self, point: Sequence[float], margin: float = 0.05) -> tuple[float, float, float]:
        """*point* (plan metres) moved inside the box by at least *margin*."""
        x, y, z = point
        return (min(max(x, self.west + margin), self.east - margin),
                min(max(y, self.north + margin), self.south - margin), min(max(z, margin), self.height - margin))


def _mix(*shares: tuple[float, str]) -> tuple[float, ...]:
    """The area-weighted absorption of a face made of several materials (weights summing to 1)."""
    return tuple(sum(w * MATERIALS[m].absorption[b] for w, m in shares) for b in range(len(BANDS)))


def _scatter(*shares: tuple[float, str]) -> float:
    return sum(w * MATERIALS[m].scattering for w, m in shares)


def _room(name: str, box: tuple[float, float, float, float], height: float,
          faces: Mapping[str, tuple[tuple[float, str], ...]]) -> Room:
    west, north, east, south = box
    return Room(name, west, north, east, south, height, {f: _mix(*m) for f, m in faces.items()},
                {f: _scatter(*m) for f, m in faces.items()})


def room_of(physics: Physics, hall: Hall | None, points_m: Sequence[Sequence[float]] = ()) -> Room:
    """The room of *hall* (its court's walls, the 堂 at its drawn depth), or, for a rite placed only by its cue
    sheet (None), the 堂 of *physics* with a court open on three sides around *points_m* (plan metres)."""
    bu = physics.bu_m
    west_bu, east_bu, depth_bu = physics.hall_bu
    height = physics.tang_height_m + HALL_HEIGHT_M
    if hall is not None:
        xs = [p.x for w in hall.walls for p in w.points] + [hall.tang[0].x, hall.tang[1].x]
        ys = [p.y for w in hall.walls for p in w.points] + [hall.tang[1].y]
        north = _front_wall(hall)
        box = (min(xs) * bu, north * bu, max(xs) * bu, max(ys) * bu)
        sides = "earth"
    else:
        xs = [west_bu * bu, east_bu * bu] + [p[0] for p in points_m]
        ys = [0.0] + [p[1] for p in points_m]
        margin = 2 * bu
        box = (min(xs) - margin, -depth_bu * bu, max(xs) + margin, max(ys) + margin)
        sides = "open"
    west, north, east, south = box
    tang = max(0.0, min(1.0, (east_bu - west_bu) * bu * -north / max(1e-9, (east - west) * (south - north))))
    return _room(hall.id if hall is not None else "", box, height,
                 {"north": ((1.0, "earth"),), "south": ((1.0, sides),), "east": ((1.0, sides),),
                  "west": ((1.0, sides),), "floor": ((tang, "timber"), (1 - tang, "ground")),
                  "ceiling": ((tang, "roof"), (1 - tang, "sky"))})


def _front_wall(hall: Hall) -> float:
    """The y (步) of the wall behind the 堂: the 室's and 房's south wall (the 户牖) where the hall has them, else
    the 堂's back edge."""
    back = min(hall.tang[0].y, hall.tang[1].y)
    if not hall.has_shi:
        return back
    level = [a.y for w in hall.walls for a, b in w.segments() if a.y == b.y and back < a.y < 0]
    return max(level) if level else back


def enclosed_tang(physics: Physics, hall: Hall | None = None) -> Room:
    """The 堂 alone, closed on its south side by rammed earth: the room Eyring's formula is checked against."""
    bu = physics.bu_m
    west, east, depth = physics.hall_bu
    north = _front_wall(hall) if hall is not None else -depth
    walls = ((1.0, "earth"),)
    return _room("enclosed", (west * bu, north * bu, east * bu, 0.0), HALL_HEIGHT_M,
                 {"north": walls, "south": walls, "east": walls, "west": walls, "floor": ((1.0, "timber"),),
                  "ceiling": ((1.0, "roof"),)})


def eyring(room: Room, band: int, physics: Physics) -> float:
    """Eyring's reverberation time (s) of *room* in octave band *band*, with ISO 9613-1 air absorption."""
    x, y, z = room.size
    areas = {"north": x * z, "south": x * z, "east": y * z, "west": y * z, "floor": x * y, "ceiling": x * y}
    total = sum(areas.values())
    mean = sum(areas[f] * room.faces[f][band] for f in areas) / total
    air = 4 * absorption_db_per_m(BANDS[band], physics) / (10 * math.log10(math.e))
    return 24 * math.log(10) * x * y * z / (physics.speed_m_s * (-total * math.log(1 - mean) + air * x * y * z))


def check_bounds(room: Room, pairs: int) -> None:
    """AudioError, before any simulation, where *room* or the number of source–listener *pairs* would cost more
    time or memory than a render should (docs/limits.md)."""
    x, y, z = room.size
    if min(x, y, z) <= 0:
        raise AudioError(f"the room of hall {room.name or '(the cue sheet)'} is {x:.0f} × {y:.0f} × {z:.0f} m: "
                         "expected a box with room in it (is the 堂 inverted?)")
    if max(x, y) > MAX_SIDE_M or x * y * z > MAX_VOLUME_M3:
        raise AudioError(f"the room of hall {room.name or '(the cue sheet)'} is {x:.0f} × {y:.0f} m, "
                         f"{x * y * z:,.0f} m³: a placed render models at most {MAX_SIDE_M:.0f} m a side and "
                         f"{MAX_VOLUME_M3:,.0f} m³ (大射's court is 42 × 148 m); draw a smaller court or render "
                         "without --listener")
    if pairs > MAX_PAIRS:
        raise AudioError(f"{pairs} places to hear: a placed render simulates at most {MAX_PAIRS}; render fewer "
                         "parts (--part) or a shorter excerpt")


@dataclass(frozen=True, slots=True)
class Simulated:
    """One source heard at two ears: the image sources of orders 1 to ``ISM_ORDER`` (their positions in plan
    metres, 3 × K, and octave-band amplitudes after the walls, bands × K) and each ear's ray-traced tail
    (2 × N samples, amplitude 1 at 1 m, from the moment of emission, air absorption in it)."""

    images: Any
    amplitudes: Any
    tails: Any


def air_coefficients(physics: Physics) -> list[float]:
    """ISO 9613-1 absorption in each band of ``BANDS`` as pyroomacoustics takes it (energy, per metre)."""
    return [absorption_db_per_m(f, physics) / (10 * math.log10(math.e)) for f in BANDS]


def simulate(room: Room, source: Sequence[float], ears: Sequence[Sequence[float]], physics: Physics,
             rate: int) -> Simulated:
    """*source* (plan metres) heard at *ears* (left, right) in *room*: read from the cache, else simulated."""
    from yuesheng import caches

    where = [room.inside(source)] + [room.inside(e) for e in ears]
    settings = [ISM_ORDER, RAYS, RECEIVER_M, TAIL_SECONDS, "seeded"]
    pair = json.dumps([where, rate, physics.speed_m_s, physics.temperature_c, physics.humidity_pct, settings])
    name = caches.key("room", room.digest(), pair, caches.library("pyroomacoustics"))
    folder = caches.folder(CACHE) if caches.enabled() else None
    if folder is not None:
        data = folder.read(name, limit=CACHE_LIMIT)
        found = _decoded(data) if data is not None else None
        if found is not None:
            return found
    seed = int(hashlib.sha256(f"{room.digest()}{pair}".encode()).hexdigest()[:8], 16)  # the pair's, not the code's
    result = _simulate(room, where[0], where[1:], physics, rate, seed)
    if folder is not None:
        folder.write(name, _encoded(result), entries=CACHE_ENTRIES)
    return result


def _encoded(result: Simulated) -> bytes:
    import numpy as np

    out = io.BytesIO()
    np.savez(out, images=result.images, amplitudes=result.amplitudes, tails=result.tails.astype(np.float32))
    return out.getvalue()


def _decoded(data: bytes) -> Simulated | None:
    """A cache entry read back (numpy's format, pickle refused), or None if it is not one."""
    import numpy as np

    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as arrays:
            images, amplitudes, tails = arrays["images"], arrays["amplitudes"], arrays["tails"]
    except (OSError, ValueError, KeyError, EOFError):
        return None
    good = (images.ndim == 2 and images.shape[0] == 3 and amplitudes.shape == (len(BANDS), images.shape[1])
            and tails.ndim == 2 and tails.shape[0] == 2)
    return Simulated(images.astype(np.float64), amplitudes.astype(np.float64), tails.astype(np.float64)) \
        if good and np.isfinite(tails).all() else None


def _simulate(room: Room, source: Sequence[float], ears: Sequence[Sequence[float]], physics: Physics, rate: int,
              seed: int) -> Simulated:
    import numpy as np
    import pyroomacoustics as pra

    offset = np.array([room.west, room.north, 0.0])
    materials = {face: pra.Material({"coeffs": list(values), "center_freqs": list(BANDS)},
                                    room.scattering[face]) for face, values in room.faces.items()}
    pra.constants.set("c", physics.speed_m_s)
    pra.constants.set("rir_hpf_enable", False)
    pra.random.seed(numpy=seed, libroom=seed)  # the scattered rays and the tail's sequence: the same every run
    box = pra.ShoeBox(room.size, fs=rate, materials=materials, max_order=ISM_ORDER, ray_tracing=False,
                      air_absorption=True, use_rand_ism=False)
    # rays set after: the constructor's own count grows with the volume (100,000s for a court)
    box.set_air_absorption(air_coefficients(physics), list(BANDS))
    box.set_ray_tracing(n_rays=RAYS, receiver_radius=RECEIVER_M, time_thres=TAIL_SECONDS,
                        hist_bin_size=HISTOGRAM_BIN)
    box.add_source(np.asarray(source) - offset)
    box.add_microphone_array((np.asarray(ears) - offset).T)
    box.image_source_model()
    box.ray_tracing()
    box.simulator_state["ism_needed"] = False  # the tail alone: the image sources go through the head
    box.compute_rir()
    tails = [np.asarray(box.rir[m][0], dtype=np.float64) for m in (0, 1)]
    src = box.sources[0]
    keep = (src.orders >= 1) & (src.orders <= ISM_ORDER)
    images = src.images[:, keep] + offset[:, None]
    bands = box.octave_bands.centers
    amplitudes = np.array([np.interp(np.log(BANDS), np.log(bands), src.damping[:, k])
                           for k in np.nonzero(keep)[0]]).T.reshape(len(BANDS), -1)
    skip = pra.constants.get("frac_delay_length") // 2
    length = max(len(t) for t in tails) - skip
    both = np.zeros((2, max(length, 1)))
    for m, tail in enumerate(tails):
        both[m, :len(tail) - skip] = tail[skip:]
    return Simulated(images, amplitudes, _levelled(both).astype(np.float32).astype(np.float64))  # as cached


def _levelled(tails: Any) -> Any:
    """The two ears' tails at the same energy, their mean (a diffuse field reaches both ears alike; the ray
    tracer's few hits at each ear made them differ by up to 3 dB at random)."""
    import numpy as np

    energy = (tails ** 2).sum(axis=1)
    if not energy.all():
        return tails
    return tails * np.sqrt(energy.mean() / energy)[:, None]


def decay_figures(response: Any, rate: int) -> tuple[float, float]:
    """T30 and EDT (seconds) of a mono impulse response, from Schroeder's backward integral (ISO 3382-1)."""
    import numpy as np

    energy = np.cumsum((np.asarray(response, dtype=np.float64) ** 2)[::-1])[::-1]
    curve = 10 * np.log10(np.maximum(energy / energy[0], 1e-30))
    times = np.arange(len(curve)) / rate

    def slope(top: float, bottom: float) -> float:
        span = (curve <= top) & (curve >= bottom)
        if span.sum() < 2:
            return float("nan")
        fit = np.polyfit(times[span], curve[span], 1)
        return float(-60.0 / fit[0]) if fit[0] < 0 else float("nan")

    return slope(-5.0, -35.0), slope(0.0, -10.0)


def describe_materials() -> Mapping[str, str]:
    """Each material's name, bands and assumption, for reports."""
    return {key: f"{m.name}: α {' '.join(f'{a:g}' for a in m.absorption)}, scattering {m.scattering:g} "
                 f"({m.assumption})"
            for key, m in MATERIALS.items()}
