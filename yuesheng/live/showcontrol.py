"""Show control out, and MIDI Show Control in: other show gear follows the console, or drives it.

- **OSC state out** (``osc.OscSender``): on every change, the cue NOW (its id), its number among the GO points,
  the seconds since the first GO, and the music armed (ids joined by ','), to the targets named when the console
  started (``--osc-out``).
- **MSC out** (MIDI Show Control 1.0, MMA RP-002): a GO the console carries out, from any source, goes out as MSC
  GO with the GO point's number as its Q_number; STOP ALL as MSC STOP with no Q_number (all). Sent as Universal
  Real Time System Exclusive: ``F0 7F <device> 02 <command format> <command> [Q_number] F7``, the command format
  Sound (General, ``10``), the device the all-call ``7F`` unless given.
- **MSC in** (``--msc-in PORT``): MSC GO and STOP addressed to this device (or all-call) become the console's GO
  and STOP, through the same ``Control`` as every source (the guard refuses a second GO within its time).

A change is sent from a thread of its own: the player's thread only queues it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any, Protocol

from yuesheng.live.commands import Command
from yuesheng.live.control import Control, Press
from yuesheng.live.cueing import Outcome, PlayerStatus

UNIVERSAL_REAL_TIME = 0x7F
MSC = 0x02  # sub-ID 1: MIDI Show Control
ALL_CALL = 0x7F  # the device ID every controlled device answers
SOUND = 0x10  # command format: Sound (General)
ALL_TYPES = 0x7F  # command format: all types
MSC_COMMANDS = {Command.GO: 0x01, Command.STOP: 0x02}  # MSC's GO and STOP
STATE_CHANGED = (Command.QUIT, None)  # on the sender's queue: send the state (QUIT is never a command sent out)


def msc_data(command: Command, number: int | None = None, *, device: int = ALL_CALL,
             kind: int = SOUND) -> tuple[int, ...]:
    """The bytes of an MSC message between F0 and F7: GO with a Q_number (ASCII digits), or STOP (all)."""
    if not 0 <= device <= 0x7F:
        raise ValueError(f"MSC device ID {device}: expected 0..127")
    cue = tuple(str(number).encode("ascii")) if number is not None else ()
    return (UNIVERSAL_REAL_TIME, device, MSC, kind, MSC_COMMANDS[command], *cue)


def parse_msc(data: tuple[int, ...] | list[int], device: int = ALL_CALL) -> tuple[Command, str] | None:
    """The console's command an MSC message (bytes between F0 and F7) asks of *device*, with its Q_number as
    text ('' none); None for any other message, device or command."""
    if len(data) < 5 or data[0] != UNIVERSAL_REAL_TIME or data[2] != MSC:
        return None
    if data[1] not in (device, ALL_CALL) or data[3] not in (SOUND, ALL_TYPES):
        return None
    command = next((c for c, byte in MSC_COMMANDS.items() if byte == data[4]), None)
    if command is None:
        return None
    number = bytes(data[5:]).split(b"\0")[0]
    return command, number.decode("ascii", errors="replace") if number else ""


def msc_listener(control: Control, device: int = ALL_CALL) -> Callable[[Any], None]:
    """A mido input callback that turns MSC GO and STOP into the console's (guarded as every source is)."""

    def on_message(message: Any) -> None:
        if getattr(message, "type", "") == "sysex" and (asked := parse_msc(tuple(message.data), device)):
            control.submit(asked[0], "msc")

    return on_message


class Showing(Protocol):
    def status(self) -> PlayerStatus: ...

    def watch(self, callback: Callable[[], None]) -> None: ...

    def listen(self, callback: Callable[[Press, Outcome], None]) -> None: ...


class StateSender(Protocol):
    def send_state(self, cue: str, number: int, elapsed: float, armed: str) -> None: ...


class Port(Protocol):
    def send(self, message: Any) -> None: ...


class ShowOut:
    """The player's changes to OSC targets, and its GOs and STOPs to an MSC port, from a thread of its own."""

    def __init__(self, player: Showing, *, osc: StateSender | None = None, msc: Port | None = None,
                 device: int = ALL_CALL) -> None:
        self.player, self.osc, self.msc, self.device = player, osc, msc, device
        self.queue: queue.Queue[tuple[Command, int | None] | None] = queue.Queue()  # an MSC to send, or None: stop
        self.closed = False
        self.thread = threading.Thread(target=self._run, name="yuesheng-show-out", daemon=True)
        self.thread.start()
        player.watch(self._changed)
        player.listen(self._carried)

    def _changed(self) -> None:
        if self.osc is not None:
            self.queue.put(STATE_CHANGED)

    def _carried(self, press: Press, outcome: Outcome) -> None:
        if self.msc is not None and press.command in MSC_COMMANDS and outcome.log is not None:
            status = self.player.status()
            number = status.actions.index(status.current) + 1 if status.current in status.actions else None
            self.queue.put((press.command, number if press.command is Command.GO else None))

    def _run(self) -> None:
        from yuesheng.outputs.midi import sysex_message

        while (item := self.queue.get()) is not None:
            command, number = item
            if item is STATE_CHANGED and self.osc is not None:
                self._send_state()
            elif self.msc is not None and command in MSC_COMMANDS:
                try:
                    self.msc.send(sysex_message(msc_data(command, number, device=self.device)))
                except Exception:  # a port that failed: the show goes on without it
                    self.msc = None

    def _send_state(self) -> None:
        assert self.osc is not None
        status = self.player.status()
        number = status.actions.index(status.current) + 1 if status.current in status.actions else 0
        elapsed = status.now - status.first_started if status.first_started is not None else 0.0
        self.osc.send_state(status.current or "", number, round(elapsed, 3), ",".join(status.armed))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self.queue.put(None)
            self.thread.join(timeout=2)
