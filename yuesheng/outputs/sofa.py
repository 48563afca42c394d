"""Head-related impulse responses from a SOFA file (AES69), for ``yuesheng audio --listener … --binaural``.

A SOFA file is netCDF-4, that is HDF5, read here with h5py. Only the ``SimpleFreeFieldHRIR`` convention is
read: ``Data.IR`` (M directions × 2 ears × N taps), ``Data.SamplingRate``, ``SourcePosition`` (azimuth and
elevation in degrees, azimuth counterclockwise from the front, so 90 is the left) and ``ReceiverPosition``
(which receiver is the left ear: the one at positive y). Debian's libmysofa1 ships the MIT KEMAR set (Gardner
and Martin, MIT Media Lab 1994; 710 directions, 512 taps at 44.1 kHz) as ``DEFAULT``. Every set is diffuse-field
equalised as it is read (``diffuse_equalised``): the KEMAR responses are raw, with the measuring loudspeaker's
bass roll-off and the ear canal's resonance in every direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from yuesheng.errors import AudioError

DEFAULT = Path("/usr/share/libmysofa/MIT_KEMAR_normal_pinna.sofa")
ONSET = 0.05  # of a response's peak: where it begins
LEAD_KEPT = 4  # samples kept before the earliest onset of the set
MAX_VALUES = 1 << 25  # samples a set may hold (256 MiB as float64; the KEMAR set holds 0.7 M, large sets a few M)
MAX_TAPS = 1 << 16  # samples in a response: 1.5 s at 44.1 kHz, far past any free-field HRIR
RATES = (8_000, 384_000)  # Hz: the sampling rates a set may have (resampled to the render's 44.1 or 48 kHz)
EQ_TAPS = 1024  # the diffuse-field equaliser's length
EQ_RANGE_DB = 20.0  # how far the diffuse-field equaliser may boost or cut
INSTALL = "install Debian's libmysofa1 (apt-get install libmysofa1), which ships the MIT KEMAR set"


@dataclass(frozen=True)
class Hrtf:
    """A set of HRIRs: unit vectors toward each measured direction (x ahead, y to the left, z up) and the
    responses (directions × 2 ears, left first × taps), normalised so that a source straight ahead keeps its level
    (the mean of the two ears' energy gains is 1)."""

    path: str
    directions: Any
    responses: Any
    rate: int

    def toward(self, ahead: float, left: float, up: float) -> Any:
        """The HRIR pair (2 × taps) of the measured direction nearest to (*ahead*, *left*, *up*)."""
        import numpy as np

        norm = math.sqrt(ahead * ahead + left * left + up * up) or 1.0
        return self.responses[int(np.argmax(self.directions @ np.array([ahead, left, up]) / norm))]

    def at_rate(self, rate: int) -> Hrtf:
        """The same set resampled to *rate* (Opus renders at 48 kHz)."""
        if rate == self.rate:
            return self
        from scipy.signal import resample_poly

        g = math.gcd(rate, self.rate)
        return Hrtf(self.path, self.directions, resample_poly(self.responses, rate // g, self.rate // g, axis=2),
                    rate)


def load(path: str | Path = DEFAULT) -> Hrtf:
    """The HRIRs of the SOFA file *path*; AudioError saying what is wrong with it."""
    import numpy as np

    where = Path(path)
    if not where.is_file():
        raise AudioError(f"no SOFA file {where}" + ("; " + INSTALL if where == DEFAULT else ""))
    try:
        import h5py
    except ModuleNotFoundError:
        raise AudioError("reading a SOFA file needs h5py (pip install h5py)") from None
    try:
        with h5py.File(where, "r") as sofa:
            convention = _text(sofa.attrs.get("SOFAConventions"))
            if convention != "SimpleFreeFieldHRIR":
                raise AudioError(f"{where}: a SOFA file of convention {convention or '(none)'}, "
                                 "expected SimpleFreeFieldHRIR")
            ir = _array(sofa["Data.IR"], where)
            rate = float(np.asarray(sofa["Data.SamplingRate"]).ravel()[0])
            position = _array(sofa["SourcePosition"], where)
            kind = _text(sofa["SourcePosition"].attrs.get("Type"))
            receivers = _array(sofa["ReceiverPosition"], where).reshape(2, -1)
    except (OSError, KeyError, ValueError, TypeError, AttributeError) as exc:
        raise AudioError(f"{where} is not a readable SOFA HRIR file: {exc}") from None
    if ir.ndim != 3 or ir.shape[1] != 2 or 0 in ir.shape or len(position) != len(ir):
        raise AudioError(f"{where}: expected Data.IR of directions × 2 ears × taps and one SourcePosition each, "
                         f"found {ir.shape} and {position.shape}")
    if ir.shape[2] > MAX_TAPS:
        raise AudioError(f"{where}: responses of {ir.shape[2]} samples, expected at most {MAX_TAPS} (an HRIR set)")
    if not RATES[0] <= rate <= RATES[1]:  # NaN too; a rate of 1 Hz would resample to hundreds of GiB
        raise AudioError(f"{where}: Data.SamplingRate {rate:g} Hz, expected {RATES[0]} to {RATES[1]} Hz")
    if not np.isfinite(ir).all() or not np.isfinite(position).all():
        raise AudioError(f"{where}: Data.IR or SourcePosition holds a value that is not a number")
    directions = _unit(position, kind)
    if not np.isfinite(directions).all():  # else argmax takes the NaN row for every direction
        raise AudioError(f"{where}: a cartesian SourcePosition at (0, 0, 0), the head itself, has no direction")
    if receivers[0, 1] < receivers[1, 1]:  # the left ear is the receiver at positive y
        ir = ir[:, ::-1]
    ahead = int(np.argmax(directions @ np.array([1.0, 0.0, 0.0])))
    if not np.any(ir[ahead]):
        raise AudioError(f"{where}: the response from straight ahead is silent, so the set cannot be levelled")
    ir = diffuse_equalised(_lead_trimmed(ir), rate)
    gain = math.sqrt(float(np.mean(np.sum(ir[ahead] ** 2, axis=1))))
    return Hrtf(str(where), directions, ir / gain, round(rate))


def diffuse_field(ir: Any, rate: float) -> tuple[Any, Any]:
    """The set's diffuse-field power response (the mean over every direction and both ears, each direction
    weighted alike), smoothed over a third of an octave: (frequencies, power)."""
    import numpy as np

    n = max(2 * ir.shape[2], EQ_TAPS)
    power = np.mean(np.abs(np.fft.rfft(ir, n, axis=2)) ** 2, axis=(0, 1))
    f = np.fft.rfftfreq(n, 1 / rate)
    smooth = np.array([power[(f >= c * 2 ** (-1 / 6)) & (f <= c * 2 ** (1 / 6))].mean()
                       if ((f >= c * 2 ** (-1 / 6)) & (f <= c * 2 ** (1 / 6))).any() else power[i]
                       for i, c in enumerate(f)])
    return f, smooth


def diffuse_equalised(ir: Any, rate: float) -> Any:
    """*ir* through the inverse of its diffuse-field response (minimum phase; the boost held within
    ``EQ_RANGE_DB`` of the set's median level, so the loudspeaker's missing bass and the canal's resonance are
    taken out, not noise raised): what the set's own measurement chain and the ear canal add, common to every
    direction, removed, and what differs between directions kept."""
    import numpy as np

    f, power = diffuse_field(ir, rate)
    level = np.sqrt(power)
    level /= np.median(level[(f > 200) & (f < 8000)])
    inverse = 1 / np.clip(level, 10 ** (-EQ_RANGE_DB / 20), 10 ** (EQ_RANGE_DB / 20))
    n = 2 * (len(f) - 1)
    cepstrum = np.fft.irfft(np.log(inverse), n)
    fold = np.zeros(n)
    fold[0], fold[n // 2] = cepstrum[0], cepstrum[n // 2]
    fold[1:n // 2] = 2 * cepstrum[1:n // 2]
    equaliser = np.fft.irfft(np.exp(np.fft.rfft(fold)), n)[:EQ_TAPS]
    from scipy.signal import fftconvolve

    return fftconvolve(ir, equaliser[None, None, :], axes=2)[:, :, :ir.shape[2] + EQ_TAPS // 2]


def _array(dataset: Any, where: Path) -> Any:
    """*dataset* read as float64, refused before reading if it holds more than ``MAX_VALUES`` samples (a compressed
    file of a few kB can unpack to hundreds of GiB)."""
    import numpy as np

    if dataset.size > MAX_VALUES:
        raise AudioError(f"{where}: {dataset.name.lstrip('/')} holds {dataset.size} values, expected at most "
                         f"{MAX_VALUES} (an HRIR set)")
    return np.asarray(dataset, dtype=np.float64)


def _lead_trimmed(ir: Any) -> Any:
    """*ir* less the silence before its earliest onset (the measurement's own path from loudspeaker to ear, which
    the render adds itself), keeping ``LEAD_KEPT`` samples before it."""
    import numpy as np

    peaks = np.abs(ir).max(axis=2, keepdims=True)
    onsets = np.argmax(np.abs(ir) > ONSET * np.maximum(peaks, 1e-30), axis=2)
    return ir[:, :, max(0, int(onsets.min()) - LEAD_KEPT):]


def _unit(position: Any, kind: str) -> Any:
    """Unit vectors (x ahead, y left, z up) of SOFA source positions, spherical (degrees) or cartesian."""
    import numpy as np

    if kind == "cartesian":
        vectors = position[:, :3]
    else:
        azimuth, elevation = np.radians(position[:, 0]), np.radians(position[:, 1])
        vectors = np.stack([np.cos(elevation) * np.cos(azimuth), np.cos(elevation) * np.sin(azimuth),
                            np.sin(elevation)], axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value) if value is not None else ""
