"""Timeline → Standard MIDI File (type 1). The only module that imports mido.

- Track 0, the conductor: the rite's name, tempo (60 beats a minute: a beat is a
  second, a tick a timeline tick), a marker for every action and music cue, the
  notices (modern realizations used), the 釋獲 tallies and, for 三分損益, the
  MIDI Tuning Standard scale/octave tuning (2-byte form, universal real-time
  SysEx F0 7F 7F 08 09), which FluidSynth honours, for every melodic channel.
- One track per part, named in Chinese (歌 瑟 笙 和 鐘 鑮 磬 管 獲者 負侯者 鼓 鼙 鼗),
  with its General MIDI program (drums on channel 10). The 歌 and the callers
  carry a lyric event for every syllable. Each part ends with all-notes-off and
  all-sound-off at the end of the rite.
- A 射 track with a text event for every arrow loosed.

All text is UTF-8 (mido's default, Latin-1, cannot hold Chinese), private-use
codes (``&KR0925;``) shown as their standard characters (``sources.display``). Events are
built in absolute ticks, put in a fixed order (note-offs before note-ons at the
same tick, so a repeated note is never cut short), converted to deltas once:
the same Timeline gives the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any
from pathlib import Path

import mido

from yuesheng.errors import YueshengError
from yuesheng.files import write_atomic
from yuesheng.instruments import PARTS, Part
from yuesheng.lulu import LU, Tuning, cents_offset
from yuesheng.sources import display
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

class PortError(YueshengError):
    """A MIDI port that cannot be listed, opened or written."""


TEMPO = 1_000_000  # µs per beat: 60 bpm, so one beat = one second = TICKS_PER_SECOND ticks
_OFF, _META, _PROGRAM, _ON = 0, 1, 2, 3

# A message to be: (tick, order at that tick, meta?, type, fields, cue). Built once, with its delta time.
Spec = tuple[int, int, bool, str, dict, str]
SOUNDING = (EventKind.NOTE, EventKind.DRUM, EventKind.CALL)


def _meta(tick: int, kind: str, **fields: object) -> Spec:
    return (tick, _META, True, kind, fields, "")


def _mask_slot(channel: int) -> tuple[int, int]:
    """Where MTS puts a channel in its three mask bytes ff gg hh: (byte, bit)."""
    return (0, channel - 14) if channel >= 14 else (1, channel - 7) if channel >= 7 else (2, channel)


def _sounding(timeline: Timeline) -> dict[Part, list[Event]]:
    """The events that sound, by part, in the order of the instrument table."""
    by_name: dict[str, list[Event]] = {}
    for e in timeline.events:
        if e.part and e.key is not None and e.kind in SOUNDING:
            by_name.setdefault(e.part, []).append(e)
    return {part: by_name[name] for name, part in PARTS.items() if name in by_name}


def octave_tuning_sysex(timeline: Timeline, channels: list[int]) -> mido.Message | None:
    """MTS scale/octave tuning (2-byte) for 三分損益, or None for equal temperament."""
    real = timeline.realization
    if real.tuning is Tuning.EQUAL:
        return None
    cents = [0.0] * 12
    for the_lu in LU:  # MIDI pitch class of each 律, from the key of 黄鍾
        cents[(real.huangzhong + the_lu.index) % 12] = cents_offset(the_lu, real.tuning)
    mask = [0, 0, 0]
    for c in channels:
        byte, bit = _mask_slot(c)
        mask[byte] |= 1 << bit
    data = [0x7F, 0x7F, 0x08, 0x09, *mask]
    for value in cents:
        code = max(0, min(16383, round(8192 + value * 8192 / 100)))
        data += [code >> 7, code & 0x7F]
    return mido.Message("sysex", data=data)


def decode_octave_tuning(message: mido.Message) -> tuple[list[int], list[float]]:
    """Channels and per-pitch-class cents of an MTS 2-byte octave tuning message (for checks and tests)."""
    data = list(message.data)
    mask = data[4:7]
    channels = [c for c in range(16) if mask[_mask_slot(c)[0]] >> _mask_slot(c)[1] & 1]
    pairs = data[7:31]
    return channels, [((pairs[i] << 7 | pairs[i + 1]) - 8192) * 100 / 8192 for i in range(0, 24, 2)]


def _program(part: Part, timeline: Timeline) -> list[Spec]:
    """The part's program change (none for drums), with the cue sheet's override."""
    if part.is_drum:
        return []
    return [(0, _PROGRAM, False, "program_change",
             {"channel": part.channel, "program": timeline.programs.get(part.name, part.program)}, "")]


def _notes(part: Part, events: list[Event]) -> list[Spec]:
    """Note-on and note-off of every event of a part."""
    out: list[Spec] = []
    for e in events:
        out.append((e.start_tick, _ON, False, "note_on",
                    {"channel": part.channel, "note": e.key, "velocity": max(1, min(127, e.velocity))}, e.cue))
        out.append((e.start_tick + max(1, e.length_ticks), _OFF, False, "note_off",
                    {"channel": part.channel, "note": e.key}, e.cue))
    return out


def _part_track(part: Part, events: list[Event], timeline: Timeline) -> list[Spec]:
    lyrics = [_meta(e.start_tick, "lyrics", text=display(e.text)) for e in events if e.text]
    return [_meta(0, "track_name", name=part.name)] + _program(part, timeline) + lyrics + _notes(part, events)


def _conductor(timeline: Timeline, tuning: mido.Message | None) -> list[Spec]:
    real = timeline.realization
    out: list[Spec] = [
        _meta(0, "track_name", name=f"{timeline.rite} ({timeline.rite_id})"),
        _meta(0, "set_tempo", tempo=TEMPO),
        _meta(0, "text", text=f"tuning {real.tuning.value}; 黄鍾 = MIDI {real.huangzhong}"),
    ]
    out += [_meta(0, "text", text=display(notice)) for notice in timeline.notices]
    if tuning is not None:
        out.append((0, _PROGRAM, False, "sysex", {"data": tuning.data}, ""))
    for e in timeline.events:
        if e.kind in (EventKind.ACTION, EventKind.MARKER):
            out.append(_meta(e.start_tick, "marker", text=display(f"{e.cue}: {e.text}") if e.text else e.cue))
    return out


def _shots(timeline: Timeline) -> list[Spec]:
    out: list[Spec] = []
    for e in timeline.events:
        if e.kind is EventKind.RELEASE:
            verdict = ("中" if e.hit else "不中") + ("，釋獲" if e.counted else "")
            out.append(_meta(e.start_tick, "text", text=f"{e.round} {e.pair} {e.archer} {e.text} 矢{e.arrow} 節{e.jie}: {verdict}"))
    return [_meta(0, "track_name", name="射")] + out if out else []


def _closing(part: Part, tick: int) -> list[Spec]:
    """All notes off and all sound off at the end: nothing may sound on past the rite (nor make a renderer run on)."""
    return [(tick, _ON + 1, False, "control_change", {"channel": part.channel, "control": control, "value": 0}, "")
            for control in (123, 120)]


def _in_order(specs: list[Spec]) -> list[Spec]:
    """Specs in a fixed order: tick, then note-off, meta, program, note-on, then as given."""
    return [specs[i] for i in sorted(range(len(specs)), key=lambda i: (specs[i][0], specs[i][1], i))]


def _track(specs: list[Spec]) -> mido.MidiTrack:
    """A track of the specs in order, with delta times."""
    track = mido.MidiTrack()
    now = 0
    for tick, _, meta, kind, fields, _cue in _in_order(specs):
        track.append((mido.MetaMessage if meta else mido.Message)(kind, time=tick - now, **fields))
        now = tick
    track.append(mido.MetaMessage("end_of_track", time=0))
    return track


def to_midi(timeline: Timeline) -> mido.MidiFile:
    """The MidiFile of *timeline*."""
    sounding = _sounding(timeline)
    tuning = octave_tuning_sysex(timeline, sorted({p.channel for p in sounding if not p.is_drum}))
    midi = mido.MidiFile(type=1, ticks_per_beat=TICKS_PER_SECOND, charset="utf-8")
    midi.tracks.append(_track(_conductor(timeline, tuning)))
    end = timeline.duration_ticks
    for part, events in sounding.items():
        midi.tracks.append(_track(_part_track(part, events, timeline) + _closing(part, end)))
    shots = _shots(timeline)
    if shots:
        midi.tracks.append(_track(shots))
    return midi


def live_messages(timeline: Timeline) -> tuple[list[mido.Message], list[tuple[int, str, mido.Message]]]:
    """For a live port: the set-up messages (programs, tuning), then (tick, cue id, message) in playing order."""
    sounding = _sounding(timeline)
    setup = [mido.Message(kind, **fields) for part in sounding for _, _, _, kind, fields, _ in _program(part, timeline)]
    tuning = octave_tuning_sysex(timeline, sorted({p.channel for p in sounding if not p.is_drum}))
    setup += [tuning] if tuning is not None else []
    notes = _in_order([spec for part, events in sounding.items() for spec in _notes(part, events)])
    return setup, [(tick, cue, mido.Message(kind, **fields)) for tick, _, _, kind, fields, cue in notes]


def panic_messages(channels: list[int]) -> list[mido.Message]:
    """All notes off and all sound off on every channel given."""
    return [mido.Message("control_change", channel=c, control=control, value=0) for c in channels for control in (123, 120)]


def volume_messages(channels: list[int], value: int) -> list[mido.Message]:
    """Channel volume (CC 7) set to *value* on every channel given: the steps of a fade."""
    return [mido.Message("control_change", channel=c, control=7, value=value) for c in channels]


def output_names() -> list[str]:
    """The MIDI output ports python-rtmidi can see."""
    try:
        return list(mido.get_output_names())
    except Exception as exc:  # rtmidi raises its own SystemError when the system has no MIDI
        raise PortError(f"cannot list MIDI ports: {exc}") from None


def open_output(name: str | None) -> mido.ports.BaseOutput:
    """Open a MIDI output port by name (None: the system's default), or PortError naming the ports there are."""
    return _open(lambda: mido.open_output(name), mido.get_output_names, f"output {name or '(default)'}", "ports")


def open_input(name: str, callback: Callable[[mido.Message], None]) -> mido.ports.BaseInput:
    """Open a MIDI input port (a foot pedal) calling *callback* for each message, or PortError naming the inputs."""
    return _open(lambda: mido.open_input(name, callback=callback), mido.get_input_names, f"input {name}", "inputs")


def _open(opener: Callable[[], Any], names: Callable[[], list[str]], what: str, kind: str) -> Any:
    try:
        return opener()
    except Exception as exc:  # rtmidi raises its own errors, and SystemError where there is no MIDI at all
        try:
            known = ", ".join(names()) or "none"
        except Exception:
            known = "none (no MIDI system)"
        raise PortError(f"cannot open MIDI {what}: {exc}; {kind} available: {known}") from None


def midi_bytes(timeline: Timeline) -> bytes:
    """The Standard MIDI File of *timeline* as bytes."""
    buffer = io.BytesIO()
    to_midi(timeline).save(file=buffer)
    return buffer.getvalue()


def write_midi(timeline: Timeline, path: str | Path) -> None:
    """Write the Standard MIDI File of *timeline* to *path*, atomically."""
    write_atomic(path, midi_bytes(timeline))
