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
codes (``&KR0925;``) shown as their standard characters (``characters.display``). Events are
built in absolute ticks, put in a fixed order (note-offs before note-ons at the
same tick, so a repeated note is never cut short), converted to deltas once:
the same Timeline gives the same bytes. ``midi_bytes`` writes the file mido's ``MidiFile.save`` would,
encoding each distinct message once with mido (tests compare the two writers byte for byte).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from yuesheng.characters import display
from yuesheng.errors import MidiError, PortError
from yuesheng.files import write_atomic
from yuesheng.music.instruments import PARTS, Part
from yuesheng.music.lulu import LU, Tuning, cents_offset
from yuesheng.outputs.midoload import install_version_finder
from yuesheng.process import collector_paused
from yuesheng.timeline import TICKS_PER_SECOND, Event, EventKind, Timeline

install_version_finder()  # before mido: its version module would import importlib.metadata to read one line
import mido  # noqa: E402
from mido.midifiles.meta import encode_variable_int, meta_charset  # noqa: E402

TEMPO = 1_000_000  # µs per beat: 60 bpm, so one beat = one second = TICKS_PER_SECOND ticks
MAX_DELTA = 0x0FFFFFFF  # the longest delta time a Standard MIDI File can hold (four bytes of seven bits)
_OFF, _META, _PROGRAM, _ON, _CLOSE = 0, 1, 2, 3, 4  # the order of messages at the same tick
_INDEX_BITS = 40  # a message's place in its track's list, below its tick and rank in a sort key
SOUNDING = (EventKind.NOTE, EventKind.DRUM, EventKind.CALL)

AnyMessage: TypeAlias = "mido.Message | mido.MetaMessage"
Controllers: TypeAlias = "Sequence[tuple[int, int, int]]"  # (tick, controller, value) on one channel


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


class _Messages:
    """Each distinct message made once by mido, with its checks; every use of it is a copy."""

    def __init__(self) -> None:
        self.made: dict[tuple[object, ...], AnyMessage] = {}

    def get(self, meta: bool, kind: str, **fields: object) -> AnyMessage:
        key = (meta, kind, *fields.items())
        if (message := self.made.get(key)) is None:
            try:
                message = (mido.MetaMessage if meta else mido.Message)(kind, **fields)
            except (ValueError, TypeError) as exc:
                raise MidiError(f"cannot write {kind} {fields}: {exc}") from None
            self.made[key] = message
        return message

    def notes(self, part: Part, events: list[Event]
              ) -> tuple[dict[tuple[int | None, int], AnyMessage], dict[int | None, AnyMessage]]:
        """The part's note-ons by (key, velocity) and note-offs by key, for every key and velocity of *events*."""
        ons = {(key, velocity): self.get(False, "note_on", channel=part.channel, note=key,
                                         velocity=max(1, min(127, velocity)))
               for key, velocity in dict.fromkeys((e.key, e.velocity) for e in events)}
        offs = {key: self.get(False, "note_off", channel=part.channel, note=key) for key, _ in ons}
        return ons, offs


class _Track:
    """A track: its messages, each with its tick, made only when the track is written.

    Messages are ordered by tick, then note-off, meta, program, note-on, closing, then as added; a gap
    longer than a MIDI delta can hold is bridged by empty text events. A long rite's messages with their
    times never all exist at once: ``chunk`` encodes each distinct message once, ``__iter__`` (for a
    ``mido.MidiTrack``) copies each use.
    """

    def __init__(self, fill: Callable[[_Track], None]) -> None:
        self.fill = fill
        self.keys: list[int] = []  # (tick, order, place in messages) as one sortable integer
        self.messages: list[AnyMessage] = []

    def add(self, ticks: list[int], order: int, messages: list[AnyMessage]) -> None:
        """*messages* at *ticks*, one for one, in the given *order* at their tick."""
        if len(ticks) != len(messages):
            raise ValueError(f"{len(ticks)} ticks for {len(messages)} messages")
        base = len(self.messages)
        self.keys += [((tick << 3 | order) << _INDEX_BITS) | base + n for n, tick in enumerate(ticks)]
        self.messages += messages

    def timed(self) -> Iterator[tuple[int, AnyMessage]]:
        """(delta time, message) in order, ending with end-of-track; the messages are shared, never changed."""
        self.fill(self)
        keys, messages, self.keys, self.messages = self.keys, self.messages, [], []  # freed once written
        keys.sort()
        bridge = mido.MetaMessage("text", text="")
        now, place = 0, (1 << _INDEX_BITS) - 1
        for key in keys:
            tick = key >> (_INDEX_BITS + 3)
            delta = tick - now
            while delta > MAX_DELTA:
                yield MAX_DELTA, bridge
                delta -= MAX_DELTA
            yield delta, messages[key & place]
            now = tick
        yield 0, mido.MetaMessage("end_of_track")

    def __iter__(self) -> Iterator[AnyMessage]:
        for delta, message in self.timed():
            copy = message.copy()
            vars(copy)["time"] = delta  # an int >= 0: mido's setter would only check that again
            yield copy

    def chunk(self, encoder: _Encoder) -> bytes:
        """The track's MTrk chunk, byte for byte as ``mido.MidiFile.save`` writes it."""
        data, running = bytearray(), None
        codes, varints = encoder.made, encoder.varints  # looked up here: this loop runs for every message
        for delta, message in self.timed():
            _, status, whole, tail = codes.get(id(message)) or encoder.encode(message)
            data += varints.get(delta) or encoder.varint(delta)
            data += tail if status is not None and status == running else whole
            running = status
        return b"MTrk" + struct.pack(">L", len(data)) + data


class _Encoder:
    """Each distinct message's bytes made once by mido, for writing a file's tracks as mido writes them.

    A channel message is (status, its bytes, its bytes after the status): consecutive ones with the same
    status share it (running status). A meta or system exclusive message has no status to share (None) and
    cancels the running one; a system exclusive message is written F0, its length, data, F7.
    """

    def __init__(self) -> None:
        self.made: dict[int, tuple[AnyMessage, int | None, bytes, bytes]] = {}  # holds each message: ids stay
        self.varints: dict[int, bytes] = {}

    def encode(self, message: AnyMessage) -> tuple[AnyMessage, int | None, bytes, bytes]:
        """(*message*, running status or None, the bytes written, the bytes written after the same status),
        remembered in ``made`` under the message's id."""
        found = self.made[id(message)] = (message, *_encoded(message))
        return found

    def varint(self, value: int) -> bytes:
        """*value* as a MIDI variable-length quantity (never empty), remembered in ``varints``."""
        found = self.varints[value] = bytes(encode_variable_int(value))
        return found


def _encoded(message: AnyMessage) -> tuple[int | None, bytes, bytes]:
    """What ``_Encoder.encode`` remembers of *message*, its bytes from mido."""
    if message.is_meta:
        whole = bytes(message.bytes())
        return None, whole, whole
    if message.type == "sysex":
        whole = bytes([0xF0, *encode_variable_int(len(message.data) + 1), *message.data, 0xF7])
        return None, whole, whole
    whole = bytes(message.bytes())
    return (whole[0] if whole[0] < 0xF0 else None), whole, whole[1:]


def _program(part: Part, timeline: Timeline, made: _Messages) -> list[AnyMessage]:
    """The part's program change (none for drums), with the cue sheet's override."""
    if part.is_drum:
        return []
    return [made.get(False, "program_change", channel=part.channel,
                     program=timeline.programs.get(part.name, part.program))]


def _part(part: Part, events: list[Event], timeline: Timeline, end: int, made: _Messages,
          controls: Controllers = ()) -> Callable[[_Track], None]:
    """The part's name, program, its controllers (placement), a lyric for every syllable sung, its notes, and the
    closing controls."""

    def fill(track: _Track) -> None:
        track.add([0], _META, [made.get(True, "track_name", name=part.name)])
        program = _program(part, timeline, made)
        track.add([0] * len(program), _PROGRAM, program)
        track.add([tick for tick, _, _ in controls], _PROGRAM,
                  [made.get(False, "control_change", channel=part.channel, control=control, value=value)
                   for _, control, value in controls])
        sung = [e for e in events if e.text]
        lyrics = {text: made.get(True, "lyrics", text=display(text)) for text in dict.fromkeys(e.text for e in sung)}
        track.add([e.start_tick for e in sung], _META, [lyrics[e.text] for e in sung])
        ons, offs = made.notes(part, events)
        track.add([e.start_tick for e in events], _ON, [ons[e.key, e.velocity] for e in events])
        track.add([e.start_tick + max(1, e.length_ticks) for e in events], _OFF,
                  [offs[e.key] for e in events])
        closing = [made.get(False, "control_change", channel=part.channel, control=control, value=0)
                   for control in (123, 120)]  # all notes off, all sound off: nothing may sound on past the rite
        track.add([end, end], _CLOSE, closing)

    return fill


def _conductor(timeline: Timeline, tuning: mido.Message | None, made: _Messages) -> Callable[[_Track], None]:
    def fill(track: _Track) -> None:
        real = timeline.realization
        texts = [f"tuning {real.tuning.value}; 黄鍾 = MIDI {real.huangzhong}", *map(display, timeline.notices)]
        head = [made.get(True, "track_name", name=f"{timeline.rite} ({timeline.rite_id})"),
                made.get(True, "set_tempo", tempo=TEMPO)] + [made.get(True, "text", text=text) for text in texts]
        track.add([0] * len(head), _META, head)
        if tuning is not None:
            track.add([0], _PROGRAM, [tuning])
        marked = [e for e in timeline.events if e.kind in (EventKind.ACTION, EventKind.MARKER)]
        track.add([e.start_tick for e in marked], _META,
                  [made.get(True, "marker", text=display(f"{e.cue}: {e.text}") if e.text else e.cue) for e in marked])

    return fill


def _shots(releases: list[Event], made: _Messages) -> Callable[[_Track], None]:
    def fill(track: _Track) -> None:
        track.add([0], _META, [made.get(True, "track_name", name="射")])
        texts = [f"{e.round} {e.pair} {e.archer} {e.text} 矢{e.arrow} 節{e.jie}: " + ("中" if e.hit else "不中")
                 + ("，釋獲" if e.counted else "") for e in releases]
        track.add([e.start_tick for e in releases], _META, [made.get(True, "text", text=text) for text in texts])

    return fill


def _tracks(timeline: Timeline, controls: Mapping[int, Controllers] | None = None) -> list[_Track]:
    """The tracks of *timeline*'s MIDI file: the conductor, one per part, and the 射 track if anyone shot.

    *controls*: controllers by channel, written in the track of the first part on that channel.
    """
    made = _Messages()
    sounding = _sounding(timeline)
    tuning = octave_tuning_sysex(timeline, sorted({p.channel for p in sounding if not p.is_drum}))
    end = timeline.duration_ticks
    firsts = {p.channel: p for p in reversed(sounding)}
    wanted = controls or {}
    fills = [_conductor(timeline, tuning, made)] + [
        _part(part, events, timeline, end, made, wanted.get(part.channel, ()) if firsts[part.channel] is part else ())
        for part, events in sounding.items()]
    if releases := [e for e in timeline.events if e.kind is EventKind.RELEASE]:
        fills.append(_shots(releases, made))
    return [_Track(fill) for fill in fills]


def to_midi(timeline: Timeline) -> mido.MidiFile:
    """The MidiFile of *timeline*, every message in memory (``midi_bytes`` writes without holding them)."""
    return mido.MidiFile(type=1, ticks_per_beat=TICKS_PER_SECOND, charset="utf-8",
                         tracks=[mido.MidiTrack(track) for track in _tracks(timeline)])


def live_messages(timeline: Timeline) -> tuple[list[mido.Message], list[tuple[int, str, mido.Message]]]:
    """For a live port: the set-up messages (programs, tuning), then (tick, cue id, message) in playing order."""
    made = _Messages()
    sounding = _sounding(timeline)
    setup = [message for part in sounding for message in _program(part, timeline, made)]
    tuning = octave_tuning_sysex(timeline, sorted({p.channel for p in sounding if not p.is_drum}))
    setup += [tuning] if tuning is not None else []
    timed: list[tuple[int, int, str, AnyMessage]] = []
    for part, events in sounding.items():
        ons, offs = made.notes(part, events)
        for e in events:
            timed += [(e.start_tick, _ON, e.cue, ons[e.key, e.velocity]),
                      (e.start_tick + max(1, e.length_ticks), _OFF, e.cue, offs[e.key])]
    ordered = sorted(range(len(timed)), key=lambda i: (timed[i][0], timed[i][1], i))
    return setup, [(timed[i][0], timed[i][2], timed[i][3].copy()) for i in ordered]


def panic_messages(channels: list[int]) -> list[mido.Message]:
    """All notes off and all sound off on every channel given."""
    return [mido.Message("control_change", channel=c, control=control, value=0)
            for c in channels for control in (123, 120)]


def sysex_message(data: tuple[int, ...]) -> mido.Message:
    """A System Exclusive message of *data* (the bytes between F0 and F7: MIDI Show Control's, ``live/showcontrol``)."""
    return mido.Message("sysex", data=data)


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


def midi_bytes(timeline: Timeline, *, controls: Mapping[int, Controllers] | None = None) -> bytes:
    """The Standard MIDI File of *timeline* as bytes, as ``to_midi(timeline).save`` writes them; *controls* adds
    controllers by channel (a listener's placement: ``placement.controls``).

    Each track is written as its messages are made, each distinct message encoded once by mido.
    """
    tracks, encoder = _tracks(timeline, controls), _Encoder()
    # No cycles made here: a full collection would only rescan the timeline's events (~20 ms on dashe).
    # Meta text in UTF-8, as MidiFile.save encodes it with the file's charset.
    with collector_paused(), meta_charset("utf-8"):
        chunks = [track.chunk(encoder) for track in tracks]
    header = b"MThd" + struct.pack(">Lhhh", 6, 1, len(tracks), TICKS_PER_SECOND)
    return b"".join([header, *chunks])


def write_midi(timeline: Timeline, path: str | Path) -> None:
    """Write the Standard MIDI File of *timeline* to *path*, atomically."""
    write_atomic(path, midi_bytes(timeline))
